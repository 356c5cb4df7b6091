def map_aggregate(*args, **kwargs):  # used by _utils.flatten_args (runtime only)
    raise NotImplementedError("torch stub: runtime only")
