"""Stub of .microbatch: schedules.py imports these names; only step() uses them."""


class TensorChunkSpec:  # annotation only
    pass


def split_args_kwargs_into_chunks(*args, **kwargs):
    raise NotImplementedError("torch stub: runtime only")


def merge_chunks(*args, **kwargs):
    raise NotImplementedError("torch stub: runtime only")
