"""Compares the combined-1f1b and no-pp candidates of a schedc plan --json."""
import json
import sys

candidates = json.load(open(sys.argv[1]))["candidates"]
by = {c["schedule"]: c for c in candidates}
combined, plain = by["combined-1f1b"], by["no-pp"]
for c in candidates:
    print(c["schedule"], c["verdict"])
a2a = lambda c: c["breakdown"]["expert_parallel_s"]
yes = lambda ok: "yes" if ok else "no"
print("all-to-all exposed: combined-1f1b below a tenth of no-pp:",
      yes(a2a(combined) < a2a(plain) / 10))
print("step: combined-1f1b faster:",
      yes(combined["step_time_s"] < plain["step_time_s"]))
print("step gain below the all-to-all hidden (SMs taken):",
      yes(plain["step_time_s"] - combined["step_time_s"] < a2a(plain) - a2a(combined)))
print("memory: combined-1f1b above no-pp:",
      yes(combined["peak_memory_bytes"] > plain["peak_memory_bytes"]))
