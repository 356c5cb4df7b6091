"""The training step on one process without pipelining: the numbers a plan's
run must reproduce."""

from __future__ import annotations

import math
import multiprocessing
import queue
import time
from dataclasses import dataclass
from typing import Dict, List

import torch

from .models import (LEARNING_RATE, ModelSpec, aux_loss, aux_statistic,
                     loss_fn, make_stage, microbatch)


@dataclass
class Reference:
    """Loss, per-model-stage flat gradients, and flat parameters after the
    optimizer step."""
    loss: float
    grads: Dict[int, torch.Tensor]
    params: Dict[int, torch.Tensor]


def flat(tensors: List[torch.Tensor]) -> torch.Tensor:
    return torch.cat([t.reshape(-1) for t in tensors])


class ReferenceTimeout(Exception):
    """The reference made no progress for the run's timeout."""


def run_reference(spec: ModelSpec, model_stages: int,
                  total_microbatches: int,
                  aux_stages: List[int] = (),
                  timeout: float = math.inf) -> Reference:
    """One SGD step of the whole model over `total_microbatches`
    microbatches; the loss is their mean, plus a global-batch auxiliary
    loss at each stage of `aux_stages` (models.aux_loss). Raises
    ReferenceTimeout when a microbatch's forward takes longer than
    `timeout` seconds, as the plan's ranks are held to.

    It runs in a forked process of its own: a backward in this process
    would start autograd's device threads where CUDA is present (PyTorch
    2.x), and every rank forked for the next plan would then refuse to
    run autograd ("Unable to handle autograd's threading in combination
    with fork-based multiprocessing")."""
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=_reference_child, args=(
        results, spec, model_stages, total_microbatches, list(aux_stages),
        timeout), daemon=True)
    child.start()
    while True:
        try:
            kind, payload = results.get(timeout=0.5)
            break
        except queue.Empty:
            if not child.is_alive():
                raise RuntimeError(f"the unpipelined reference's process "
                                   f"ended with exit code {child.exitcode}")
    child.join()
    if kind == "timeout":
        raise ReferenceTimeout(payload)
    if kind != "ok":
        raise RuntimeError(f"the unpipelined reference failed: {payload}")
    loss, grads, params = payload

    def tensors(lists: Dict[int, list]) -> Dict[int, torch.Tensor]:
        return {s: torch.tensor(v, dtype=torch.float64)
                for s, v in lists.items()}
    return Reference(loss=loss, grads=tensors(grads), params=tensors(params))


def _reference_child(results, spec: ModelSpec, model_stages: int,
                     total_microbatches: int, aux_stages: List[int],
                     timeout: float) -> None:
    try:
        ref = _reference(spec, model_stages, total_microbatches,
                         aux_stages, timeout)
        # Plain lists: a tensor would travel as shared memory that this
        # process takes with it when it exits.
        results.put(("ok", (ref.loss,
                            {s: g.tolist() for s, g in ref.grads.items()},
                            {s: p.tolist() for s, p in ref.params.items()})))
    except ReferenceTimeout as e:
        results.put(("timeout", str(e)))
    except Exception as e:  # reported to the parent, which raises it
        results.put(("error", f"{type(e).__name__}: {e}"))


def _reference(spec: ModelSpec, model_stages: int, total_microbatches: int,
               aux_stages: List[int], timeout: float) -> Reference:
    stages = [make_stage(spec, s) for s in range(model_stages)]
    loss = torch.zeros((), dtype=torch.float64)
    sums = {s: torch.zeros((), dtype=torch.float64) for s in aux_stages}
    last = time.monotonic()
    for m in range(total_microbatches):
        now = time.monotonic()
        if now - last > timeout:
            raise ReferenceTimeout(f"the unpipelined reference took more "
                                   f"than {timeout:g} s for microbatch "
                                   f"{m - 1}")
        last = now
        x, target = microbatch(spec, m)
        for s, stage in enumerate(stages):
            x = stage(x)
            if s in sums:
                sums[s] = sums[s] + aux_statistic(x)
        loss = loss + loss_fn(x, target) / total_microbatches
    for total in sums.values():
        loss = loss + aux_loss(total / total_microbatches)
    loss.backward()
    grads, params = {}, {}
    with torch.no_grad():
        for s, stage in enumerate(stages):
            ps = list(stage.parameters())
            grads[s] = flat([p.grad for p in ps]).clone()
            for p in ps:
                p -= LEARNING_RATE * p.grad
            params[s] = flat(list(ps)).clone()
    return Reference(loss=float(loss), grads=grads, params=params)
