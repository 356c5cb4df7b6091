#!/usr/bin/env python3
"""Merge cluster files that calibrate.py wrote on one machine into one.

calibrate.py measures the GEMMs of one model at one layout. Runs at several
layouts (say Llama 3 8B at tp 1, 70B at tp 4 and 8, DeepSeek-V3's experts
at ep 64) on the same device merge into one profile:

  - `gemms`: every measured shape; a shape and precision measured more than
    once keeps the median fraction;
  - `matmul`, `matmul_fp8`: the best fraction of any run (the cost model's
    ceiling for shapes no run measured);
  - `attention_table`: one point per sequence length, the median over the
    runs that measured it (each run's heads per device differ: the median
    is the layout-neutral figure);
  - `hbm`, the grouped-GEMM and collective fractions: the median of the runs
    that have them;
  - `profile`: the first run's label, with the number of runs merged.

Every input must describe the same device with the same peaks (else the
fractions are of different things). Exit status: 0 written, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from calibrate import (MAX_DIMENSION, MAX_HALF_BYTES,  # noqa: E402
                       MAX_TABLE_ENTRIES, MIN_FRACTION, CalibrationError,
                       read_json)

MEDIAN_KEYS = ("hbm", "grouped_matmul_fp8", "grouped_matmul_fp8_weight",
               "domain_collective", "domain_half_bytes",
               "scale_out_collective", "scale_out_half_bytes")
BEST_KEYS = ("matmul", "matmul_fp8")


class MergeError(Exception):
    """Bad input: one line, exit 2."""


def _number(obj: dict, key: str, where: str, low: float,
            high: float) -> float:
    value = obj.get(key)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or \
            not low <= value <= high:
        raise MergeError(f"{where}.{key}: expected a number in [{low:g}, "
                         f"{high:g}], got {str(value)[:40]}")
    return value


def _dimension(obj: dict, key: str, where: str) -> int:
    value = obj.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or \
            not 1 <= value <= MAX_DIMENSION:
        raise MergeError(f"{where}.{key}: expected an integer in [1, 2^24], "
                         f"got {str(value)[:40]}")
    return value


def _table(efficiency: dict, key: str, where: str) -> list:
    table = efficiency.get(key, [])
    if not isinstance(table, list) or len(table) > MAX_TABLE_ENTRIES:
        raise MergeError(f"{where}.{key}: expected an array of at most "
                         f"{MAX_TABLE_ENTRIES} entries")
    for i, entry in enumerate(table):
        if not isinstance(entry, dict):
            raise MergeError(f"{where}.{key}[{i}]: expected an object")
    return table


def check_efficiency(path: str, efficiency: dict) -> None:
    """The measured figures merge reads, in the ranges the cluster reader
    takes (lib/CostModel/ClusterSpec.cpp): fractions in [0.001, 1],
    half-bandwidth sizes in [0, 1e12], dimensions in [1, 2^24]. A fraction
    of 7.5 or -3 was merged, and written."""
    where = f"{path}: efficiency"
    for key in BEST_KEYS + MEDIAN_KEYS:
        if key in efficiency:
            high = MAX_HALF_BYTES if key.endswith("_bytes") else 1
            low = 0 if key.endswith("_bytes") else MIN_FRACTION
            _number(efficiency, key, where, low, high)
    for i, g in enumerate(_table(efficiency, "gemms", where)):
        at = f"{where}.gemms[{i}]"
        for dim in ("m", "n", "k"):
            _dimension(g, dim, at)
        if g.get("dtype", "bf16") not in ("bf16", "fp8"):
            raise MergeError(f"{at}.dtype: expected \"bf16\" or \"fp8\"")
        _number(g, "fraction", at, MIN_FRACTION, 1)
    for i, point in enumerate(_table(efficiency, "attention_table", where)):
        at = f"{where}.attention_table[{i}]"
        _dimension(point, "seq_len", at)
        for key in ("forward", "backward"):
            _number(point, key, at, MIN_FRACTION, 1)


def read(path: str) -> dict:
    try:
        data = read_json(path, "calibrated cluster file")
    except CalibrationError as e:
        raise MergeError(str(e))
    efficiency = data.get("efficiency")
    if not isinstance(efficiency, dict) or not isinstance(
            efficiency.get("gemms"), list):
        raise MergeError(f"{path}: no measured efficiency tables (write it "
                         f"with calibrate.py)")
    check_efficiency(path, efficiency)
    return data


def merge(paths: list, name: str) -> dict:
    runs = [read(p) for p in paths]
    first = runs[0]
    for path, run in zip(paths[1:], runs[1:]):
        if run.get("device") != first.get("device"):
            raise MergeError(f"{path}: device differs from {paths[0]}'s: "
                             f"the fractions are of different peaks")
    effs = [r["efficiency"] for r in runs]
    gemms: dict = {}
    for eff in effs:
        for g in eff["gemms"]:
            if not isinstance(g, dict):
                raise MergeError("a gemms entry is not an object")
            key = (g.get("m"), g.get("n"), g.get("k"), g.get("dtype"))
            gemms.setdefault(key, []).append(g)
    merged_gemms = []
    for key in sorted(gemms, key=lambda k: (str(k[3]), k[0], k[1], k[2])):
        group = gemms[key]
        entry = dict(group[0])
        entry["fraction"] = round(statistics.median(
            g["fraction"] for g in group), 6)
        merged_gemms.append(entry)
    attention: dict = {}
    for eff in effs:
        for point in eff.get("attention_table", []):
            attention.setdefault(point["seq_len"], []).append(point)
    table = [{"seq_len": seq,
              "forward": round(statistics.median(p["forward"] for p in pts), 6),
              "backward": round(statistics.median(p["backward"] for p in pts), 6)}
             for seq, pts in sorted(attention.items())]
    out = {k: v for k, v in first.items() if k != "efficiency"}
    out["name"] = name
    efficiency = {"profile": f"{first['efficiency'].get('profile', 'calibrated')}"
                             f" ({len(runs)} runs merged)"}
    for key in BEST_KEYS:
        values = [e[key] for e in effs if key in e]
        if values:
            efficiency[key] = max(values)
    for key in MEDIAN_KEYS:
        values = [e[key] for e in effs if key in e]
        if values:
            value = statistics.median(values)
            efficiency[key] = round(value) if key.endswith("_bytes") else round(value, 6)
    efficiency["gemms"] = merged_gemms
    if table:
        efficiency["attention_table"] = table
    out["efficiency"] = efficiency
    return out


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(
        prog="merge_calibrations.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+", metavar="CALIBRATED.json")
    parser.add_argument("--name", required=True,
                        help="the merged cluster's name")
    parser.add_argument("-o", "--output", required=True, metavar="OUT.json")
    args = parser.parse_args(argv)
    try:
        merged = merge(args.inputs, args.name)
    except (MergeError, KeyError, TypeError) as e:
        message = str(e) if isinstance(e, MergeError) else \
            f"a calibrated file lacks or mistypes {e}"
        print(f"merge_calibrations.py: error: {message}", file=sys.stderr)
        return 2
    try:
        # Only finite numbers: NaN and Infinity are not JSON (the inputs are
        # checked, so this is a last guard).
        text = json.dumps(merged, indent=1, allow_nan=False) + "\n"
    except ValueError:
        print("merge_calibrations.py: error: a merged figure is not a finite "
              "number", file=sys.stderr)
        return 2
    try:
        Path(args.output).write_text(text)
    except OSError as e:
        print(f"merge_calibrations.py: error: cannot write {args.output}: "
              f"{e.strerror}", file=sys.stderr)
        return 2
    eff = merged["efficiency"]
    print(f"merge_calibrations.py: wrote {args.output}: {len(args.inputs)} "
          f"runs, {len(eff['gemms'])} GEMM shapes, attention at "
          f"{len(eff.get('attention_table', []))} sequence lengths")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
