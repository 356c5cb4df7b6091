#!/usr/bin/env python3
"""Checks that one plan tells one story: the planner's step and makespan
(--json), its table row and --explain, the written IR's stage times, the
simulation of the written IR (schedc simulate), the SVG's figures and the
Chrome trace agree, and the trace is in real time (microseconds of the
plan's seconds).

Usage: plan-agreement.py PLAN.json TABLE.txt SIMULATE.txt PREFIX
(PREFIX.mlir, PREFIX.svg and PREFIX.trace written by --write-plan).
Prints one line per agreement checked; exits 1 at the first disagreement.
"""

import json
import re
import sys


def fail(message: str) -> None:
    print(f"plan-agreement: DISAGREE: {message}")
    sys.exit(1)


def close(what: str, a: float, b: float, tolerance: float) -> None:
    """a and b agree within `tolerance` (absolute, in their unit)."""
    if abs(a - b) > tolerance:
        fail(f"{what}: {a!r} against {b!r} (tolerance {tolerance})")
    print(f"agree: {what}")


def main() -> None:
    plan_json, table_path, simulate_path, prefix = sys.argv[1:5]
    planned = json.load(open(plan_json))["recommended"]
    step, makespan = planned["step_time_s"], planned["makespan_s"]
    table = open(table_path).read()

    # The table's row: the value under the "step" heading, in seconds.
    header = re.search(r"^\s*#\s.*\bstep.*$", table, re.M)
    row = re.search(r"^\s*1\s.*$", table, re.M)
    if not header or not row:
        fail("no table heading or candidate row")
    heading = re.search(r"\bstep\S*", header.group(0))
    cells = [m for m in re.finditer(r"\S+", row.group(0))
             if m.start() < heading.end() and m.end() > heading.start()]
    if len(cells) != 1:
        fail(f"no single cell under {heading.group(0)!r}: {row.group(0)!r}")
    # The table agrees to the digits it prints.
    text = cells[0].group(0).replace(",", "")
    decimals = len(text.split(".")[1]) if "." in text else 0
    close("table step", float(text), step, 0.5 * 10 ** -decimals + 1e-9)

    # --explain: the step, the makespan and the stage forwards as run.
    explained = re.search(r"^\s+step\s+([0-9.]+) s\s+\(makespan ([0-9.]+) s\)",
                          table, re.M)
    if not explained:
        fail("no step line in --explain")
    close("explain step", float(explained.group(1)), step, 6e-5)
    close("explain makespan", float(explained.group(2)), makespan, 6e-5)
    stage_rows = re.findall(r"^\s+(\d+)\s+\d+-\d+\s+([0-9.]+)", table, re.M)
    if not stage_rows:
        fail("no stage rows in --explain")

    # The written IR: its stage forwards are the explained ones (ms).
    ir = open(prefix + ".mlir").read()
    forwards = {int(m.group(1)): float(m.group(2)) for m in re.finditer(
        r"sched\.stage (\d+) layers \d+ forward ([0-9.eE+-]+)", ir)}
    for stage, forward_ms in stage_rows:
        close(f"stage {stage} forward: explain (ms) and IR (s)",
              float(forward_ms), forwards[int(stage)] * 1e3, 0.006)
    if 'sched.time_unit = "s"' not in ir:
        fail("the IR does not say its times are seconds")

    # schedc simulate of the written IR.
    simulated = re.search(r"makespan ([0-9.eE+-]+) s", open(simulate_path).read())
    if not simulated:
        fail("no makespan in seconds from schedc simulate")
    close("simulate makespan", float(simulated.group(1)), makespan,
          makespan * 1e-5)

    # The SVG's figures: step = pipeline + after the pipeline.
    svg = open(prefix + ".svg").read()
    figures = re.search(r"step ([0-9.,]+) s = pipeline ([0-9.,]+) s", svg)
    if not figures:
        fail("no step figures in the SVG")
    close("SVG step", float(figures.group(1).replace(",", "")), step,
          step * 1e-3)
    close("SVG pipeline", float(figures.group(2).replace(",", "")), makespan,
          makespan * 1e-3)

    # The trace: its figures, its extent and one forward, in microseconds.
    trace = json.load(open(prefix + ".trace"))
    close("trace makespan", trace["otherData"]["makespan"], makespan,
          makespan * 1e-9)
    close("trace step", trace["otherData"]["step"], step, step * 1e-9)
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    end_us = max(e["ts"] + e["dur"] for e in events)
    close("trace extent (us) and step (s)", end_us, step * 1e6, step)
    first = min(forwards)
    forward_events = [e for e in events if e["cat"] == "forward"
                      and e["args"].get("stage") == first]
    if not forward_events:
        fail(f"no forward of stage {first} in the trace")
    close(f"trace forward of stage {first} (us) and IR (s)",
          forward_events[0]["dur"], forwards[first] * 1e6,
          forwards[first] * 1e6 * 1e-9 + 1e-6)


if __name__ == "__main__":
    main()
