from . import node  # noqa: F401


class Graph:  # annotation of _utils.PipeInfo
    pass
