#!/usr/bin/env python3
"""Runs plans on the executor with one rank's first forward held for
SECONDS (a loaded machine that leaves that process no core), under a
deadlock --timeout shorter than that: a rank that computes waits for no
peer, so the run is no deadlock; a plan that deadlocks still is one.

usage: slow_compute.py SECONDS TIMEOUT PLAN...
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "..", "integrations",
                                "torch"))

from schedc_torch import worker  # noqa: E402
from schedc_torch.models import ModelSpec  # noqa: E402
from schedc_torch.plan import load_plan  # noqa: E402
from schedc_torch.runner import execute  # noqa: E402


def main(argv: list) -> int:
    seconds, timeout, paths = float(argv[0]), float(argv[1]), argv[2:]
    forward = worker.RankExecutor.forward

    def held(self, ins) -> None:
        # The ranks are forked: each process gets this method.
        if self.process == 0 and ins.microbatch == 0:
            time.sleep(seconds)
        forward(self, ins)

    worker.RankExecutor.forward = held
    worst = 0
    for path in paths:
        outcome = execute(load_plan(path), ModelSpec("mlp"), timeout)
        for line in outcome.lines:
            print(f"{os.path.basename(path)}: {line}", flush=True)
        worst = max(worst, outcome.status)
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
