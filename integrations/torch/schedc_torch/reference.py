"""The training step on one process without pipelining: the numbers a plan's
run must reproduce."""

from __future__ import annotations

import math
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
    `timeout` seconds, as the plan's ranks are held to."""
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
