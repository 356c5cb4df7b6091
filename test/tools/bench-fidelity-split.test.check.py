"""Checks a band file against the outcomes fidelity.py wrote: the held-out
runs' errors per class: the ratio predicted / published within exp(+-a),
a the 90th percentile of |ln ratio| by linear interpolation, and the 80th percentile of the pairs' ratio errors."""
import json
import math
import sys

outcomes = json.load(open(sys.argv[1]))
bands = json.load(open(sys.argv[2]))
held = [o for o in outcomes if o["split"] == "held-out"]
print("classes", " ".join(bands["classes"]))
errors = sorted(o["relative_error"] for o in held)


def quantile(values, q):
    pos = q * (len(values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


entry = bands["classes"]["*/*/*/*"]
spread = quantile(sorted(abs(math.log(1 + e)) for e in errors), 0.9)
ok = (entry["runs"] == len(held)
      and abs(entry["low"] - (math.exp(-spread) - 1)) < 1e-4
      and abs(entry["high"] - (math.exp(spread) - 1)) < 1e-4)
print("runs", entry["runs"], "quantiles", "match" if ok else "DIFFER")
# Pairs: runs of one table, model and sequence whose published throughput
# differs by 10% or more: (a, b) and (c, b) here (250 and 240 are within).
by = {o["name"]: o for o in held}
ratios = []
for fast, slow in (("held-a", "held-b"), ("held-c", "held-b")):
    a, b = by[fast], by[slow]
    ratios.append(abs((a["predicted"] / b["predicted"])
                      / (a["published"] / b["published"]) - 1))
spread = quantile(sorted(ratios), 0.8)
cmp = bands["comparison"]["*/*/*/*"]
print("pairs", cmp["pairs"], "spread",
      "matches" if abs(cmp["spread"] - spread) < 1e-4 else "DIFFERS")
