class FSDPModule:  # isinstance target in the runtime; fake stages are never FSDP
    pass


class UnshardHandle:  # annotation only
    pass
