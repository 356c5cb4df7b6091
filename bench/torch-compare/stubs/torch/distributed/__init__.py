"""Stub of torch.distributed: only the names schedules.py references."""


class P2POp:  # annotation only
    pass


class Work:  # annotation only
    pass


def batch_isend_irecv(p2p_ops):  # runtime only
    raise NotImplementedError("torch stub: no process group")
