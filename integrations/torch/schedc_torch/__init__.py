"""Run schedc's JSON runtime plans on torch.distributed.

Modules by role:
  plan       reading and checking a plan (docs/runtime-plan.md)
  strict_json  JSON decoding that refuses a key twice in one object
  models     the models a plan's stages are cut from (MLP, transformer)
  worker     one process: executes one rank's instructions for real
  reference  the same step on one process without pipelining
  runner     starts the processes, watches for deadlocks, compares
"""
