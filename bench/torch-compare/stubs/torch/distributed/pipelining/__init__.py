"""Stub package. The real schedules.py and _utils.py are appended to __path__
by the loader (dump_torch_schedules.py --pytorch-src DIR); the sibling
modules they import that need real tensors (.microbatch, .stage) are the
stubs in this folder, which comes first on __path__."""
