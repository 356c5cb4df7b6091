#!/usr/bin/env python3
"""bench/fidelity: the planner's throughput against published training runs.

For every run of runs.json (published layouts with their sources), asks
`schedc plan --layout ...` for the step time of that layout and compares it
with what was published: model TFLOP/s per device (Megatron's count, see
docs/cost-model.md) or, for the Megatron A100 runs Calculon validates
against, the iteration time. Prints each error, the median and worst, the
mean over the Megatron A100 set, and whether each published pair keeps its
order. These runs validate the cost model; nothing in it is set from them.

With --layout-only each run keeps only what a layout table publishes
(devices, layout, schedule, sequence, batch, precision, ZeRO stage): the
recipe's recomputation, micro-batch size, kernels and optimizer precision
are left to the planner's search, as for a run whose recipe is unknown.

Usage: fidelity.py SCHEDC [--runs runs.json] [--layout-only] [--json OUT]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional


@dataclasses.dataclass
class Outcome:
    name: str
    kind: str  # "tflops" or "step_s"
    published: float
    predicted: Optional[float] = None
    fits: bool = True
    error: Optional[str] = None
    explain: str = ""
    run_set: str = "published"

    @property
    def relative_error(self) -> Optional[float]:
        """Signed error of predicted throughput: + means too optimistic."""
        if self.predicted is None:
            return None
        if self.kind == "tflops":
            return self.predicted / self.published - 1
        # A shorter predicted step is a higher predicted throughput.
        return self.published / self.predicted - 1


def plan_command(schedc: str, run: dict, model: Path, cluster: Path) -> list[str]:
    layout = run["layout"]
    if "sp" in run:
        layout += f",sp={run['sp']}"
    cmd = [schedc, "plan", "--model", str(model), "--cluster", str(cluster),
           "--devices", str(run["devices"]), "--layout", layout,
           "--schedule", run["schedule"], "--seq-len", str(run["seq"]),
           "--global-batch-tokens", str(run["gbt"]),
           "--precision", run.get("precision", "bf16"), "--top", "1",
           "--json"]
    for key, flag in (("zero", "--zero"), ("recompute", "--recompute"),
                      ("microbatch_size", "--microbatch-size"),
                      ("attention", "--attention"),
                      ("tp_overlap", "--tp-overlap"),
                      ("allocator", "--allocator"),
                      ("p2p_overlap", "--p2p-overlap"),
                      ("main_grads", "--main-grads"),
                      ("optimizer_moments", "--optimizer-moments")):
        if key in run:
            cmd += [flag, str(run[key])]
    return cmd


# What a recipe adds to a published layout; --layout-only drops it.
RECIPE_KEYS = ("recompute", "microbatch_size", "attention", "tp_overlap",
               "allocator", "p2p_overlap", "main_grads", "optimizer_moments",
               "sp")
# Recipe fields of the layout string itself (stage split, offload).
RECIPE_LAYOUT_FIELDS = ("first", "last", "split", "offload")


def layout_only(run: dict) -> dict:
    """The run as a layout table gives it: no recipe."""
    bare = {k: v for k, v in run.items() if k not in RECIPE_KEYS}
    bare["layout"] = ",".join(
        item for item in run["layout"].split(",")
        if item.split("=")[0].strip() not in RECIPE_LAYOUT_FIELDS)
    return bare


def evaluate(schedc: str, run: dict, models: dict, clusters: dict,
             workdir: Path) -> Outcome:
    kind = "step_s" if "step_s" in run else "tflops"
    outcome = Outcome(run["name"], kind, float(run[kind]),
                      run_set=run.get("set", "published"))
    model = workdir / f"model-{run['model']}.json"
    model.write_text(json.dumps(models[run["model"]]))
    cluster = workdir / f"cluster-{run['cluster']}.json"
    cluster.write_text(json.dumps(clusters[run["cluster"]]))
    proc = subprocess.run(plan_command(schedc, run, model, cluster),
                          capture_output=True, text=True, timeout=600)
    if proc.returncode == 2:
        outcome.error = proc.stderr.strip().splitlines()[-1][:160]
        return outcome
    result = json.loads(proc.stdout)
    candidates = result.get("candidates") or []
    if not candidates:
        outcome.fits = False
        overflow = result.get("overflowing") or []
        outcome.error = "does not fit" + (
            f": {overflow[0].get('overflow', '')}" if overflow else "")
        return outcome
    best = candidates[0]
    outcome.predicted = (best["tflops_per_device"] if kind == "tflops"
                         else best["step_time_s"])
    layout = best["layout"]
    outcome.explain = (f"mb={layout['microbatch_size']} "
                       f"zero={layout['zero']} rc={layout['recompute']}")
    return outcome


def format_value(kind: str, value: Optional[float]) -> str:
    if value is None:
        return "-"
    return f"{value:.0f} TF" if kind == "tflops" else f"{value:.2f} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("schedc", help="path of the schedc binary")
    parser.add_argument("--runs", default=str(Path(__file__).with_name("runs.json")),
                        help="published runs (default: runs.json beside this script)")
    parser.add_argument("--layout-only", action="store_true",
                        help="drop each run's recipe (recomputation, "
                             "micro-batch size, kernels, optimizer precision, "
                             "stage split, offload): the planner chooses")
    parser.add_argument("--json", help="also write the outcomes to this file")
    args = parser.parse_args()

    data = json.loads(Path(args.runs).read_text())
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in data["runs"]:
            if args.layout_only:
                run = layout_only(run)
            outcomes.append(evaluate(args.schedc, run, data["models"],
                                     data["clusters"], Path(tmp)))

    print(f"{'run':34} {'published':>10} {'predicted':>10} {'error':>8}  chosen")
    for o in outcomes:
        err = o.relative_error
        print(f"{o.name:34} {format_value(o.kind, o.published):>10} "
              f"{format_value(o.kind, o.predicted):>10} "
              f"{'-' if err is None else f'{100 * err:+.1f}%':>8}  "
              f"{o.error or o.explain}")

    def summary(label: str, subset: list[Outcome]) -> None:
        errors = [abs(o.relative_error) for o in subset
                  if o.relative_error is not None]
        missing = len(subset) - len(errors)
        if not errors:
            print(f"{label}: no run evaluated")
            return
        worst = max(subset, key=lambda o: abs(o.relative_error or 0))
        print(f"{label}: {len(errors)} runs, median |error| "
              f"{100 * statistics.median(errors):.1f}%, mean "
              f"{100 * statistics.mean(errors):.1f}%, worst "
              f"{100 * abs(worst.relative_error):.1f}% ({worst.name})"
              + (f", {missing} not evaluated" if missing else ""))

    print()
    summary("all runs", outcomes)
    sets = list(dict.fromkeys(o.run_set for o in outcomes))
    for name in sets:
        summary(f"{name} set", [o for o in outcomes if o.run_set == name])
    for name in sets:
        subset = [o for o in outcomes if o.run_set == name]
        print(f"fits ({name}): {sum(o.fits and o.error is None for o in subset)}"
              f" of {len(subset)} published layouts")

    # A pair is kept when the faster run is predicted faster, reversed when
    # it is not (a tie included), and not evaluated when a side has no
    # prediction; counted per set (the set of the pair's faster run).
    by_name = {o.name: o for o in outcomes}
    pairs = [(f, s) for f, s in data.get("pairs", [])
             if f in by_name and s in by_name]
    counts: dict[str, list[int]] = {}
    for faster, slower in pairs:
        a, b = by_name[faster], by_name[slower]
        if a.predicted is None or b.predicted is None:
            verdict = "not evaluated"
        else:
            verdict = "kept" if a.predicted > b.predicted else "REVERSED"
        tally = counts.setdefault(a.run_set, [0, 0, 0])
        tally[0] += verdict == "kept"
        tally[1] += verdict == "REVERSED"
        tally[2] += verdict == "not evaluated"
        print(f"pair {faster} > {slower}: "
              f"{format_value(a.kind, a.predicted)} vs "
              f"{format_value(b.kind, b.predicted)}: {verdict}")
    for name, (kept, reversed_, unevaluated) in counts.items():
        print(f"pairs in order ({name}): {kept} of {kept + reversed_ + unevaluated}"
              + (f", {reversed_} reversed" if reversed_ else "")
              + (f", {unevaluated} not evaluated" if unevaluated else ""))

    if args.json:
        Path(args.json).write_text(json.dumps(
            [dataclasses.asdict(o) | {"relative_error": o.relative_error}
             for o in outcomes], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
