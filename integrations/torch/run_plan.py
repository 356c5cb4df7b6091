#!/usr/bin/env python3
"""Run schedc JSON runtime plans for one training step on torch.distributed.

Each plan runs in processes of its own, one per plan rank and data-parallel
replica (gloo on 127.0.0.1, CPU, float64), every instruction for real; the
loss, every gradient after reduction and the parameters after the optimizer
step are compared with the same model trained on one process without
pipelining (tolerance 1e-10).

Exit status (the worst over the plans given): 0 all match, 1 a result
differs, 2 unreadable input or a plan the executor cannot run (the message
names the instruction), 3 a rank deadlocked or timed out (the message names
every stuck rank and its instruction).
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


# A day: longer than any step the executor runs.
MAX_TIMEOUT = 86400.0


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(
        prog="run_plan.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("plans", nargs="+", metavar="PLAN.json",
                        help="runtime plans (schedc generate --emit json, "
                             "sched-translate --export-json-plan)")
    parser.add_argument("--model", choices=("mlp", "transformer"),
                        default="mlp",
                        help="what each stage computes: two tanh layers "
                             "(mlp) or a one-head pre-norm transformer block "
                             "(default mlp)")
    parser.add_argument("--timeout", type=float, default=5.0,
                        metavar="SECONDS",
                        help="a run in which no rank moves to its next "
                             "instruction for this long is a deadlock "
                             "(default 5)")
    args = parser.parse_args(argv)
    # The processes' store takes the timeout as a timedelta: inf overflowed.
    if not 0 < args.timeout <= MAX_TIMEOUT:
        print(f"run_plan.py: error: --timeout must be > 0 and at most "
              f"{MAX_TIMEOUT:g} seconds, got {args.timeout:g}",
              file=sys.stderr)
        return 2
    try:
        import torch  # noqa: F401
        import torch.distributed as dist
    except ImportError as e:
        print(f"run_plan.py: error: cannot import torch ({e}); run with "
              f"Debian's /usr/bin/python3 and python3-torch",
              file=sys.stderr)
        return 2
    if not dist.is_available():
        print("run_plan.py: error: torch.distributed is not available",
              file=sys.stderr)
        return 2
    from schedc_torch.models import ModelSpec
    from schedc_torch.plan import PlanError, load_plan
    from schedc_torch.runner import EXIT_BAD_PLAN, execute

    worst = 0
    for path in args.plans:
        name = os.path.basename(path)
        try:
            plan = load_plan(path)
        except PlanError as e:
            print(f"{name}: error: {e}", flush=True)
            worst = max(worst, EXIT_BAD_PLAN)
            continue
        world = len(plan.rank_ids) * plan.data_parallel
        print(f"{name}: plan @{plan.name}: {plan.stages} stages, "
              f"{plan.microbatches} microbatches, {plan.replicas} "
              f"replica(s), dp {plan.data_parallel}: {world} processes, "
              f"model {args.model}", flush=True)
        outcome = execute(plan, ModelSpec(args.model), args.timeout)
        for line in outcome.lines:
            print(f"{name}: {line}", flush=True)
        worst = max(worst, outcome.status)
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
