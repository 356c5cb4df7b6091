"""Minimal stand-in for `torch`, enough to import and construct the schedule
classes of torch/distributed/pipelining/schedules.py. Schedule construction
(pipeline_order, _add_send_recv, _dump_csv) is pure Python; only the runtime
(step / _step_microbatches) touches tensors, and every runtime entry point
here raises."""
from . import _dynamo, distributed, fx, nn, profiler  # noqa: F401

__version__ = "0.0.0+schedule-stub"


class Tensor:  # annotations only
    pass


class Size(tuple):  # annotation of _utils._DTensorMeta
    pass


class dtype:  # annotation of _utils._DTensorMeta
    pass


def is_grad_enabled():
    return True


def tensor_split(*args, **kwargs):
    raise NotImplementedError("torch stub: runtime only")
