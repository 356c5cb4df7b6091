"""Running schedc's PyTorch CSV through PyTorch's own pipelining runtime.

torch.distributed.pipelining (PyTorch >= 2.4) executes a CSV with
`_PipelineScheduleRuntime._load_csv`: compute-only files are lowered by
PyTorch (it adds the sends and receives), compute+comms files run as
written. One process per CSV row, gloo on CPU, the models of models.py;
the loss and every stage's gradients are compared with the unpipelined
model. Where the runtime is missing (Debian 12's PyTorch 1.13) the run is
skipped with the reason.
"""

from __future__ import annotations

import inspect
import re
import traceback
from dataclasses import dataclass
from datetime import timedelta
from typing import Dict, List, Optional, Tuple

import torch
import torch.distributed as dist

from .models import ModelSpec, loss_fn, make_stage, microbatch
from .plan import PlanError

CELL = re.compile(r"^(\d+)(F|I|B|W|SEND_F|RECV_F|SEND_B|RECV_B|UNSHARD|"
                  r"RESHARD|REDUCE_GRAD)(\d*)$")


def runtime_missing() -> Optional[str]:
    """Why PyTorch's pipelining runtime cannot run here, or None."""
    match = re.match(r"(\d+)\.(\d+)", torch.__version__)
    version = (int(match.group(1)), int(match.group(2))) if match else (0, 0)
    if version < (2, 4):
        return (f"PyTorch {torch.__version__} has no "
                f"torch.distributed.pipelining runtime (it needs >= 2.4)")
    try:
        from torch.distributed.pipelining import PipelineStage  # noqa: F401
        from torch.distributed.pipelining.schedules import (  # noqa: F401
            _PipelineScheduleRuntime)
    except ImportError as e:
        return f"torch.distributed.pipelining cannot be imported: {e}"
    return None


@dataclass
class CsvShape:
    """What the CSV says: the stages of each row, counts, flavour."""
    rows: List[List[int]]
    stages: int
    microbatches: int
    comms: bool


def read_csv_shape(path: str) -> CsvShape:
    """Reads the stages each row computes; raises PlanError on a cell the
    grammar does not allow."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise PlanError(f"cannot read {path!r}: {e.strerror}") from None
    rows, stages, microbatches, comms = [], 0, 0, False
    for number, line in enumerate(lines, 1):
        held = set()
        for column, raw in enumerate(line.split(","), 1):
            cell = raw.strip()
            if not cell:
                continue
            parts = [cell]
            overlap = re.match(r"^\((.*);(.*)\)OVERLAP_F_B$", cell)
            if overlap:
                parts = [overlap.group(1).strip(), overlap.group(2).strip()]
            for part in parts:
                m = CELL.match(part)
                if not m:
                    raise PlanError(f"{path}:{number}:{column}: malformed "
                                    f"cell {cell!r}")
                stage, word, mb = int(m.group(1)), m.group(2), m.group(3)
                stages = max(stages, stage + 1)
                if mb:
                    microbatches = max(microbatches, int(mb) + 1)
                if word in ("F", "I", "B", "W"):
                    held.add(stage)
                comms |= word.startswith(("SEND", "RECV"))
        rows.append(sorted(held))
    while rows and not rows[-1]:
        rows.pop()
    if not rows:
        raise PlanError(f"{path}: the CSV holds no actions")
    return CsvShape(rows, stages, max(microbatches, 1), comms)


def _skip_self_handshake(stage, rank: int) -> None:
    """PyTorch 2.11 opens every stage's p2p links with a handshake to its
    neighbour stages, the one on the same rank too (a V placement's turn);
    NCCL sends to itself, gloo cannot ("Pair is not connected"). Drop the
    handshake ops whose peer is this rank: the runtime itself hands a local
    neighbour its tensors without a transfer."""
    handshake = getattr(stage, "_get_init_p2p_neighbors_ops", None)
    if handshake is None:
        return

    def without_self():
        return [op for op in handshake()
                if getattr(op, "group_peer", getattr(op, "peer", None)) != rank]
    stage._get_init_p2p_neighbors_ops = without_self


def csv_worker(path: str, shape: CsvShape, spec: ModelSpec, rank: int,
               init_method: str, timeout: float, results) -> None:
    """One row of the CSV on PyTorch's runtime."""
    from torch.distributed.pipelining import PipelineStage
    from torch.distributed.pipelining.schedules import (
        _PipelineScheduleRuntime)
    torch.set_num_threads(1)
    try:
        dist.init_process_group("gloo", init_method=init_method, rank=rank,
                                world_size=len(shape.rows),
                                timeout=timedelta(seconds=timeout))
        example = torch.empty(spec.activation_shape(), dtype=torch.float64)
        modules = {s: make_stage(spec, s) for s in shape.rows[rank]}
        stages = [PipelineStage(modules[s], s, shape.stages,
                                torch.device("cpu"), input_args=(example,),
                                output_args=(example,))
                  for s in shape.rows[rank]]
        for stage in stages:
            _skip_self_handshake(stage, rank)
        scale = 1.0 / shape.microbatches
        options = {}
        # Say where every stage runs (a V placement is not the default loop
        # one) where a constructor takes it: PipelineScheduleMulti's, which
        # the runtime's `__init__(*args, **kwargs)` forwards to in 2.6+.
        if any("stage_index_to_group_rank" in inspect.signature(
                cls.__init__).parameters
               for cls in _PipelineScheduleRuntime.__mro__
               if "__init__" in vars(cls)):
            options["stage_index_to_group_rank"] = {
                s: r for r, row in enumerate(shape.rows) for s in row}
        schedule = _PipelineScheduleRuntime(
            stages, shape.microbatches,
            loss_fn=lambda out, target: loss_fn(out, target) * scale,
            scale_grads=False, **options)
        schedule._load_csv(path, format="compute_comms" if shape.comms
                           else "compute_only")
        data = [microbatch(spec, m) for m in range(shape.microbatches)]
        x = torch.cat([d[0] for d in data])
        target = torch.cat([d[1] for d in data])
        args: Tuple = (x,) if 0 in modules else ()
        kwargs: Dict = {}
        losses: List[torch.Tensor] = []
        if shape.stages - 1 in modules:
            kwargs = {"target": target, "losses": losses}
        schedule.step(*args, **kwargs)
        grads = {s: torch.cat([p.grad.reshape(-1) for p in m.parameters()])
                 .tolist() for s, m in modules.items()}
        results.put(("ok", rank, {"loss": float(sum(losses)),
                                  "grads": grads}))
    except Exception as e:
        # The exception's own lines (PyTorch's span several), not the
        # traceback's.
        results.put(("crash", rank, "".join(
            traceback.format_exception_only(type(e), e))))


def execute_csv(path: str, spec: ModelSpec, timeout: float):
    """Runs the CSV at `path` on PyTorch's runtime and compares; returns
    the runner's Outcome."""
    from .runner import rendezvous

    with rendezvous() as init_method:
        return _execute_csv(path, spec, timeout, init_method)


def _execute_csv(path: str, spec: ModelSpec, timeout: float,
                 init_method: str):
    import multiprocessing
    import queue
    import time

    from .reference import run_reference
    from .runner import (EXIT_BAD_PLAN, EXIT_DEADLOCK, EXIT_MISMATCH,
                         EXIT_OK, TOLERANCE, Outcome, _stop)

    shape = read_csv_shape(path)
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    processes = [context.Process(target=csv_worker, args=(
        path, shape, spec, r, init_method, timeout, results), daemon=True)
        for r in range(len(shape.rows))]
    for p in processes:
        p.start()
    reports = {}
    deadline = time.monotonic() + timeout
    while len(reports) < len(processes):
        try:
            kind, rank, payload = results.get(
                timeout=max(0.05, deadline - time.monotonic()))
        except queue.Empty:
            _stop(processes)
            return Outcome(EXIT_DEADLOCK, [
                f"error: the step did not finish within {timeout:g} s "
                f"(ranks done: {sorted(reports)})"])
        if kind != "ok":
            _stop(processes)
            return Outcome(EXIT_BAD_PLAN, [
                f"error: rank {rank} failed in PyTorch's runtime: "
                f"{' | '.join(l.strip() for l in payload.strip().splitlines())[:600]}"])
        reports[rank] = payload
    _stop(processes)
    ref = run_reference(spec, shape.stages, shape.microbatches)
    loss = sum(r["loss"] for r in reports.values())
    lines = [f"loss {loss:.12g} (reference {ref.loss:.12g})"]
    failures = []
    if not abs(loss - ref.loss) <= TOLERANCE:
        failures.append(f"the loss differs by {abs(loss - ref.loss):.3e}")
    worst = 0.0
    for rank, report in sorted(reports.items()):
        for stage, grad in report["grads"].items():
            diff = float((torch.tensor(grad, dtype=torch.float64) -
                          ref.grads[int(stage)]).abs().max())
            worst = max(worst, diff)
            if not diff <= TOLERANCE:
                failures.append(f"rank {rank}: the gradient of stage "
                                f"{stage} differs by {diff:.3e}")
    lines.append(f"gradients: max diff {worst:.1e}")
    if failures:
        return Outcome(EXIT_MISMATCH, lines + [f"FAIL: {f}"
                                               for f in failures])
    return Outcome(EXIT_OK, lines + [
        f"PASS: PyTorch's runtime matches the unpipelined reference "
        f"(tolerance {TOLERANCE:g})"])
