"""schedc from Python: generate, verify and simulate pipeline schedules.

A schedule comes in as one of
  * a :class:`Schedule` (from :func:`generate`, :func:`from_csv`,
    :func:`from_pipeline_order` or :func:`from_plan`),
  * the text of a PyTorch pipelining CSV (``_dump_csv`` / ``_load_csv``),
  * the text of a JSON runtime plan (docs/runtime-plan.md), which alone
    says streams and events, communicators and shape exchanges (the CSV
    and ``pipeline_order`` cannot: a rank there runs its actions in order
    on one stream, and writing a schedule with streams or shape exchanges
    to them raises ``ValueError``),
  * PyTorch's in-memory form: a dict from rank to the list of its actions,
    as ``torch.distributed.pipelining`` schedules keep in ``pipeline_order``;
    an action is a string such as ``"0F1"`` or ``"1SEND_F0"``, an object whose
    ``str()`` is one (torch's ``_Action``), or ``None`` for an idle step.

Violations are :class:`Violation` objects with ``kind``, ``rank``,
``position`` (the index of the action in its rank's program), ``step`` (its
cell in the CSV row or ``pipeline_order`` list), ``action``, ``message`` and
``notes``. Malformed input raises ``ValueError`` with the reader's message.

    >>> import schedc
    >>> report = schedc.verify({0: ["0F0", "0B0"]})
    >>> report.verdict
    'verified'
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import json

from ._schedc import (Candidate, Metrics, Plan, Report, Schedule, Violation,
                      strategies)
from . import _schedc

__all__ = [
    "Candidate",
    "Metrics",
    "Plan",
    "Report",
    "Schedule",
    "Violation",
    "from_csv",
    "from_pipeline_order",
    "from_plan",
    "generate",
    "pipeline_order",
    "plan",
    "simulate",
    "strategies",
    "verify",
]

ScheduleLike = Union[Schedule, str, Mapping[int, Sequence[Any]]]


def generate(strategy: str, pp: int, microbatches: int, vpp: Optional[int] = None,
             cost: Optional[str] = None, transfers: bool = True) -> Schedule:
    """Generates the schedule of ``strategy`` (see :func:`strategies`) for
    ``pp`` ranks and ``microbatches`` microbatches, with the sends and
    receives when ``transfers`` (a runnable plan). ``vpp`` defaults to the
    strategy's (2 for the V shapes); ``cost`` gives stage times
    (``"f=1,b=2"``)."""
    return _schedc._generate(_string("strategy", strategy),
                             _integer("pp", pp),
                             _integer("microbatches", microbatches),
                             0 if vpp is None else _integer("vpp", vpp),
                             _string("cost", cost or ""), bool(transfers))


def from_csv(text: str, stages: Optional[int] = None,
             microbatches: Optional[int] = None) -> Schedule:
    """Reads the text of a PyTorch pipelining CSV (row r is rank r)."""
    if not isinstance(text, str):
        raise TypeError(f"CSV text must be a str, not {type(text).__name__}")
    return _schedc._read_csv(text, _optional_integer("stages", stages),
                             _optional_integer("microbatches", microbatches))


def from_plan(text: str) -> Schedule:
    """Reads the text of a JSON runtime plan (versions 1 to 4): its streams,
    events, communicators, p2p groups, shape exchanges and collectives come
    with it, and :func:`verify` applies its recorded memory limit unless
    given one. Its semantics default to rendezvous, as ``schedc verify``
    reads a plan."""
    if not isinstance(text, str):
        raise TypeError(f"plan text must be a str, not {type(text).__name__}")
    return _schedc._read_plan(text)


def from_pipeline_order(order: Mapping[int, Sequence[Any]],
                        stages: Optional[int] = None,
                        microbatches: Optional[int] = None) -> Schedule:
    """Reads PyTorch's ``pipeline_order``: rank -> actions per time step,
    ``None`` for idle. Ranks missing from the dict run nothing."""
    if not isinstance(order, Mapping):
        raise TypeError("pipeline_order must be a dict from rank to a list "
                        f"of actions, not {type(order).__name__}")
    rows: List[List[str]] = []
    for rank in order:
        if isinstance(rank, bool) or not isinstance(rank, int) or rank < 0:
            raise ValueError(f"pipeline_order key {rank!r} is not a rank "
                             "(an int >= 0)")
    if order and max(order) >= 1 << 20:
        raise ValueError(f"rank {max(order)} is out of range (at most "
                         f"{(1 << 20) - 1})")
    for rank in range(max(order) + 1 if order else 0):
        actions = order.get(rank, [])
        if isinstance(actions, (str, bytes)) or not isinstance(actions, Sequence):
            raise ValueError(f"rank {rank}: actions must be a list, not "
                             f"{type(actions).__name__}")
        rows.append(["" if action is None else str(action)
                     for action in actions])
    return _schedc._read_pipeline_order(
        rows, _optional_integer("stages", stages),
        _optional_integer("microbatches", microbatches))


def pipeline_order(schedule: Schedule, comms: bool = True) -> Dict[int, List[str]]:
    """The schedule in PyTorch's in-memory form: rank -> action strings."""
    if not isinstance(schedule, Schedule):
        raise TypeError(f"schedule must be a schedc.Schedule, not "
                        f"{type(schedule).__name__}")
    return dict(enumerate(schedule._pipeline_order(bool(comms))))


def verify(schedule: ScheduleLike, p2p: Optional[str] = None,
           memory_limit: Optional[Union[int, str, float]] = None,
           timeout: float = 0, stages: Optional[int] = None,
           microbatches: Optional[int] = None) -> Report:
    """Proves ``schedule`` complete, dependency-correct, deadlock-free and
    within ``memory_limit``. ``p2p`` is ``"eager"`` (PyTorch's runtime; the
    default for CSV text and pipeline_order) or ``"rendezvous"`` (NCCL; the
    default for generated schedules). ``memory_limit`` is read exactly
    when it is an int or a decimal string (``"7.99999999999999999"``, as
    ``schedc verify --memory-limit`` reads it); a float stands for its
    shortest decimal. The report also carries the simulation's metrics
    when the schedule runs to the end."""
    limit, text = _memory_limit(memory_limit)
    return _schedc._check(_schedule_of(schedule, stages, microbatches),
                          _string("p2p", p2p or ""), limit, text,
                          _number("timeout", timeout), "")


def _memory_limit(value: Optional[Union[int, str, float]]
                  ) -> Tuple[Optional[float], str]:
    """The limit as the extension takes it: a float, or exact text."""
    if value is None:
        return None, ""
    if isinstance(value, bool):
        raise TypeError("memory_limit must be an int, a str or a float, "
                        "not bool")
    if isinstance(value, int):
        return None, str(value)
    if isinstance(value, str):
        return None, value
    if isinstance(value, float):
        return _number("memory_limit", value), ""
    raise TypeError(f"memory_limit must be an int, a str or a float, not "
                    f"{type(value).__name__}")


def simulate(schedule: ScheduleLike, cost: Optional[str] = None,
             stages: Optional[int] = None,
             microbatches: Optional[int] = None) -> Metrics:
    """Simulates ``schedule``: makespan, bubble ratio and peak activations
    per rank. ``cost`` replaces stage times (``"f=1,b=2,comm=0.1"``).
    Raises ValueError when the schedule cannot run to the end."""
    return _schedc._simulate(_schedule_of(schedule, stages, microbatches),
                             _string("cost", cost or ""))


def plan(model: Union[str, Mapping[str, Any]],
         cluster: Union[str, Mapping[str, Any]], devices: int,
         global_batch_tokens: Optional[int] = None,
         global_batch: Optional[int] = None, seq_len: Optional[int] = None,
         precision: str = "bf16", strategy: Optional[str] = None,
         top: int = 10, layout: Optional[str] = None,
         zero: Optional[int] = None, recompute: Optional[str] = None,
         microbatch_size: Optional[int] = None, stack: Optional[str] = None,
         write_plan: Optional[str] = None,
         emit: str = "mlir,json,svg") -> Plan:
    """Chooses a parallel layout and schedule, as ``schedc plan`` does
    (docs/planner.md). ``model`` and ``cluster`` are preset names
    (``"llama3-8b"``, ``"h100-ib"``), paths of JSON descriptions, or the
    descriptions as dicts. The Plan's ``ranked`` candidates are the fitting
    ones, best first; ``recommended`` is the one the planner picks, with
    ``reason``.

    The flags of ``schedc plan`` of the same names: ``layout`` evaluates
    one layout (``"dp=8,tp=2,pp=4,vpp=2"``) instead of searching; ``zero``,
    ``recompute`` and ``microbatch_size`` fix what is otherwise searched;
    ``stack`` names the software stack (``"megatron-core"``, or a .json
    file); ``write_plan`` is a path prefix the recommendation is written
    to, lowered and verified, in the forms ``emit`` lists (``mlir``,
    ``json``, ``svg``, ``trace``, ``torch-csv``): the Plan's ``written``
    lists the files, ``refused`` the forms the plan cannot be stated in."""
    return _schedc._plan(_description("model", model),
                         _description("cluster", cluster),
                         _integer("devices", devices),
                         _optional_integer("global_batch_tokens",
                                           global_batch_tokens),
                         _optional_integer("global_batch", global_batch),
                         _optional_integer("seq_len", seq_len),
                         _string("precision", precision),
                         _string("strategy", strategy or ""),
                         _integer("top", top),
                         _string("layout", layout or ""),
                         _optional_integer("zero", zero),
                         _string("recompute", recompute or ""),
                         _optional_integer("microbatch_size", microbatch_size),
                         _string("stack", stack or ""),
                         _string("write_plan", write_plan or ""),
                         _string("emit", emit))


def _description(what: str, value: Union[str, Mapping[str, Any]]) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        try:
            return json.dumps(value, allow_nan=False)
        except RecursionError:
            raise ValueError(f"{what} nests too deep (a description nests "
                             f"fewer than five levels)") from None
        except (TypeError, ValueError) as e:
            raise ValueError(f"{what}: {e}") from None
    raise TypeError(f"{what} must be a preset name, a path or a dict, not "
                    f"{type(value).__name__}")


def _schedule_of(schedule: ScheduleLike, stages: Optional[int],
                 microbatches: Optional[int]) -> Schedule:
    if isinstance(schedule, Schedule):
        return schedule
    if isinstance(schedule, str):
        # A JSON plan opens with '{'; no CSV cell does.
        if schedule.lstrip().startswith("{"):
            return from_plan(schedule)
        return from_csv(schedule, stages, microbatches)
    if isinstance(schedule, Mapping):
        return from_pipeline_order(schedule, stages, microbatches)
    raise TypeError("expected a schedc.Schedule, CSV text or a "
                    f"pipeline_order dict, not {type(schedule).__name__}")


# The module's integers are int64s. Arguments are checked here, each with
# one line naming it: pybind's own TypeError lists every argument it was
# given (4 MB of it for a long cost string next to a huge pp).
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _integer(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ValueError(f"{name} is out of range (a 64-bit integer)")
    return value


def _optional_integer(name: str, value: Any) -> Optional[int]:
    return None if value is None else _integer(name, value)


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, not "
                        f"{type(value).__name__}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{name} is out of range (a double)") from None


def _string(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value
