#!/usr/bin/env python3
"""Run schedc's PyTorch pipelining CSV through PyTorch's own runtime.

`schedc generate --emit torch-csv` (compute only: PyTorch adds the
transfers) or `--emit torch-csv-comms` (run as written) files are loaded
with torch.distributed.pipelining's `_PipelineScheduleRuntime._load_csv`
and run for one step, one process per CSV row (gloo, CPU, float64); the
loss and every stage's gradients are compared with the unpipelined model
(tolerance 1e-10).

Needs PyTorch >= 2.4. Elsewhere (Debian 12's 1.13) every file is reported
as skipped, with the reason, and the exit status is 0.

Exit status (the worst over the files): 0 match (or skipped), 1 a result
differs, 2 unreadable input or a failure in PyTorch's runtime, 3 the step
did not finish within --timeout.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(
        prog="run_csv.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csvs", nargs="+", metavar="SCHEDULE.csv")
    parser.add_argument("--model", choices=("mlp", "transformer"),
                        default="mlp", help="what each stage computes")
    parser.add_argument("--timeout", type=float, default=60.0,
                        metavar="SECONDS",
                        help="the whole step's time limit (default 60)")
    args = parser.parse_args(argv)
    if not args.timeout > 0:
        print("run_csv.py: error: --timeout must be > 0", file=sys.stderr)
        return 2
    try:
        import torch  # noqa: F401
    except ImportError as e:
        print(f"run_csv.py: error: cannot import torch ({e})",
              file=sys.stderr)
        return 2
    from schedc_torch.models import ModelSpec
    from schedc_torch.pipelining import execute_csv, runtime_missing
    from schedc_torch.plan import PlanError

    why = runtime_missing()
    worst = 0
    for path in args.csvs:
        name = os.path.basename(path)
        if why:
            print(f"{name}: skipped: {why}", flush=True)
            continue
        try:
            outcome = execute_csv(path, ModelSpec(args.model), args.timeout)
        except PlanError as e:
            print(f"{name}: error: {e}", flush=True)
            worst = max(worst, 2)
            continue
        for line in outcome.lines:
            print(f"{name}: {line}", flush=True)
        worst = max(worst, outcome.status)
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
