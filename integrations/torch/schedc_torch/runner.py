"""Runs a plan: one process per rank and data-parallel replica, a watchdog
that turns a deadlock into an error naming every stuck rank, and the
comparison with the unpipelined reference."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import tempfile
import time
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional

import torch

from .models import ModelSpec
from .plan import Plan
from .reference import ReferenceTimeout, run_reference
from .worker import (COMPUTING, DONE, FAILED, STARTING, collective_mismatch,
                     worker_main)

EXIT_OK, EXIT_MISMATCH, EXIT_BAD_PLAN, EXIT_DEADLOCK = 0, 1, 2, 3

TOLERANCE = 1e-10
# Processes get this long to start and join the process group.
STARTUP_SECONDS = 120.0
# A rank that computes is never a deadlock's member, however slowly a
# loaded machine runs it (--timeout is the wait for peers); a run where no
# rank progressed for this long while one computes is stopped all the same.
COMPUTE_STALL_SECONDS = 120.0


@dataclass
class Outcome:
    """What a run found: its exit status and the lines that explain it."""
    status: int
    lines: List[str] = field(default_factory=list)


@contextlib.contextmanager
def rendezvous() -> Iterator[str]:
    """The init_method the processes of one run meet at: a file of its own
    (torch's FileStore). A TCP port picked in advance could be taken by
    another run before rank 0 binds it, and two runs sharing a store never
    pass its barrier (seen under parallel lit)."""
    with tempfile.TemporaryDirectory(prefix="schedc-torch-") as directory:
        yield "file://" + os.path.join(directory, "store")


def _stop(processes: List[multiprocessing.Process]) -> None:
    for p in processes:
        if p.is_alive():
            p.kill()
    for p in processes:
        p.join()


def _describe_waits(plan: Plan, progress, states, world: int) -> List[str]:
    lines = []
    ranks = len(plan.rank_ids)
    for g in range(world):
        program = plan.programs[g % ranks]
        where = f"rank {plan.rank_ids[g % ranks]}"
        if plan.data_parallel > 1:
            where += f" (replica {g // ranks})"
        if states[g] == DONE:
            lines.append(f"  {where}: finished")
        elif states[g] == STARTING:
            lines.append(f"  {where}: still starting")
        elif states[g] == COMPUTING:
            i = progress[g]
            lines.append(f"  {where}: computes instruction {i} "
                         f"({program[i].describe()})")
        else:
            i = progress[g]
            lines.append(f"  {where}: waits at instruction {i} "
                         f"({program[i].describe()})")
    return lines


def execute(plan: Plan, spec: ModelSpec, timeout: float) -> Outcome:
    """Runs `plan` once and compares it with the reference."""
    with rendezvous() as init_method:
        return _execute(plan, spec, timeout, init_method)


def _execute(plan: Plan, spec: ModelSpec, timeout: float,
             init_method: str) -> Outcome:
    mismatch = collective_mismatch(plan)
    if mismatch:
        return Outcome(EXIT_BAD_PLAN, [f"error: {mismatch}"])
    ranks = len(plan.rank_ids)
    world = ranks * plan.data_parallel
    context = multiprocessing.get_context("fork")
    progress = context.Array("i", [-1] * world, lock=False)
    states = context.Array("i", [STARTING] * world, lock=False)
    results = context.Queue()
    processes = [context.Process(
        target=worker_main, args=(plan, spec, g, world, init_method, timeout,
                                  progress, states, results), daemon=True)
        for g in range(world)]
    for p in processes:
        p.start()
    reports: Dict[int, dict] = {}
    started = time.monotonic()
    last_change = None
    last_seen = None
    while len(reports) < world:
        try:
            kind, process, payload = results.get(timeout=0.05)
        except queue.Empty:
            kind = None
        if kind == "ok":
            reports[process] = payload
            continue
        if kind is not None:
            _stop(processes)
            where = f"rank {plan.rank_ids[process % ranks]}"
            if plan.data_parallel > 1:
                where += f" (replica {process // ranks})"
            return Outcome(EXIT_BAD_PLAN, [
                f"error: {where} cannot run the plan: {payload.strip()}"])
        now = time.monotonic()
        if any(states[g] == STARTING for g in range(world)):
            if now - started > STARTUP_SECONDS:
                _stop(processes)
                return Outcome(EXIT_DEADLOCK, [
                    "error: the processes did not start within "
                    f"{STARTUP_SECONDS:.0f} s"])
            continue
        seen = (tuple(progress), tuple(states))
        if seen != last_seen:
            last_seen, last_change = seen, now
            continue
        if any(states[g] == FAILED for g in range(world)):
            continue  # its message is on its way
        # A deadlock needs every running rank waiting; one that computes
        # is only stopped as stalled, after the longer limit.
        computing = any(states[g] == COMPUTING for g in range(world))
        limit = max(timeout, COMPUTE_STALL_SECONDS) if computing else timeout
        if now - last_change > limit:
            what = "stalled" if computing else "deadlock"
            lines = [f"error: {what}: no rank progressed for {limit:g} s"]
            lines += _describe_waits(plan, progress, states, world)
            _stop(processes)
            return Outcome(EXIT_DEADLOCK, lines)
    _stop(processes)
    try:
        return compare(plan, spec, list(reports.values()), timeout)
    except ReferenceTimeout as e:
        return Outcome(EXIT_DEADLOCK, [f"error: {e}"])


def compare(plan: Plan, spec: ModelSpec, reports: List[dict],
            timeout: float) -> Outcome:
    """Checks loss, every reported gradient and the parameters after the
    step against the reference (held to `timeout` per microbatch)."""
    total = plan.microbatches * plan.data_parallel
    ref = run_reference(spec, plan.stages_per_replica, total,
                        plan.global_aux_stages, timeout)
    loss = sum(r["loss"] for r in reports)
    lines = []
    failures = []
    loss_diff = abs(loss - ref.loss)
    lines.append(f"loss {loss:.12g} (reference {ref.loss:.12g}, "
                 f"diff {loss_diff:.1e})")
    if not loss_diff <= TOLERANCE:
        failures.append(f"the loss differs by {loss_diff:.3e}")
    covered = set()
    grad_diff = param_diff = 0.0
    checked = 0
    for report in sorted(reports, key=lambda r: r["process"]):
        where = f"rank {report['rank']}"
        if plan.data_parallel > 1:
            where += f" (replica {report['replica']})"
        if not report["stepped"]:
            failures.append(f"{where} never ran optimizer_step")
        for stage, got in sorted(report["stages"].items()):
            model = plan.model_stage(stage)
            covered.add(model)
            grad = torch.tensor(got["grad"], dtype=torch.float64)
            param = torch.tensor(got["param"], dtype=torch.float64)
            begin = got["offset"]
            want_grad = ref.grads[model][begin:begin + grad.numel()]
            want_param = ref.params[model][begin:begin + param.numel()]
            g = float((grad - want_grad).abs().max()) if grad.numel() else 0.0
            p = (float((param - want_param).abs().max())
                 if param.numel() else 0.0)
            if g != g:
                g = float("inf")
            if p != p:
                p = float("inf")
            checked += 1
            grad_diff, param_diff = max(grad_diff, g), max(param_diff, p)
            if not g <= TOLERANCE:
                failures.append(f"{where}: the gradient of stage {stage} "
                                f"differs by {g:.3e}")
            if not p <= TOLERANCE:
                failures.append(f"{where}: the parameters of stage {stage} "
                                f"after the step differ by {p:.3e}")
    missing = set(range(plan.stages_per_replica)) - covered
    if missing:
        failures.append(f"no rank holds model stage(s) "
                        f"{', '.join(map(str, sorted(missing)))}")
    lines.append(f"gradients: {checked} stage copies, max diff "
                 f"{grad_diff:.1e}")
    lines.append(f"parameters after the step: max diff {param_diff:.1e}")
    if failures:
        lines += [f"FAIL: {f}" for f in failures]
        return Outcome(EXIT_MISMATCH, lines)
    lines.append(f"PASS: loss, gradients and parameters match the "
                 f"unpipelined reference (tolerance {TOLERANCE:g})")
    return Outcome(EXIT_OK, lines)
