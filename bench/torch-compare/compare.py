#!/usr/bin/env python3
"""Compare PyTorch's dumped schedules with schedc's, under unit costs.

    compare.py DUMP_DIR SCHEDC_BIN_DIR [--jobs N] > table.md

DUMP_DIR is what dump_torch_schedules.py wrote. For every case it simulates
PyTorch's compute-only CSV and its comms CSV, verifies both, generates
schedc's schedule for the same (strategy, P, vpp, M) and simulates it, all
with F = I = W = 1 (B = 2), and prints one markdown table row per case.
"""
import argparse
import csv
import json
import os
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

COST = "f=1,i=1,w=1"  # the same as f=1,b=2: b splits evenly into i and w
SPLIT = {"zb-h1", "zb-h2", "interleaved-zb", "zb-v", "v-half", "v-min", "dualpipe-v"}


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def num(x):
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def simulate(schedc, path):
    rc, out, err = run([schedc, "simulate", path, "--json", "--cost", COST])
    if rc != 0:
        return None, ("stuck" if rc == 1 else "error") + f" (rc {rc})"
    return json.loads(out), None


def verify(schedc, path):
    rc, out, err = run([schedc, "verify", path])
    if rc == 0:
        return "verified"
    kinds = sorted(set(re.findall(r"error: \[(\w+)\]", err)))
    word = {1: "violated", 2: "error", 3: "unknown"}.get(rc, f"rc {rc}")
    return word + (f" ({', '.join(kinds)})" if kinds else "")


def case(schedc, dump, row, tmp):
    p, v, m, strat = row["P"], row["vpp"], row["M"], row["schedc"]
    mlir = os.path.join(tmp, row["file"] + ".mlir")
    gen_cost = COST if strat in SPLIT else "f=1,b=2"
    rc, _, err = run([schedc, "generate", "--strategy", strat, "--pp", p, "--vpp", v,
                      "--microbatches", m, "--cost", gen_cost, "--emit", "mlir", "-o", mlir])
    ours, ours_err = simulate(schedc, mlir) if rc == 0 else (None, "generate failed")
    res = {"row": row, "ours": ours, "ours_err": ours_err}
    if row["status"] == "ok":
        base = os.path.join(dump, row["file"])
        res["pt"], res["pt_err"] = simulate(schedc, base + ".csv")
        res["ver"] = verify(schedc, base + ".csv")
        if row["comms"] == "ok":
            res["ptc"], res["ptc_err"] = simulate(schedc, base + ".comms.csv")
            res["verc"] = verify(schedc, base + ".comms.csv")
        else:
            res["ptc"], res["ptc_err"], res["verc"] = None, "not lowered", "not lowered"
    return res


def cells(sim, err):
    if sim is None:
        return err, err
    peaks = sim["peak_activations"]
    return num(sim["makespan"]), f"{num(peaks[0])} / {num(max(peaks))}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("bindir")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    args = ap.parse_args()
    schedc = os.path.join(args.bindir, "schedc")
    with open(os.path.join(args.dump, "manifest.tsv")) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda r: case(schedc, args.dump, r, tmp), rows))
    print("| PyTorch | schedc | P | vpp | M | PyTorch makespan | PyTorch makespan (comms CSV) "
          "| schedc makespan | PyTorch peak r0 / max | schedc peak r0 / max "
          "| verify PyTorch CSV | verify PyTorch comms CSV |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for res in results:
        row = res["row"]
        if row["status"] != "ok":
            continue
        ours_ms, ours_pk = cells(res["ours"], res["ours_err"])
        pt_ms, pt_pk = cells(res["pt"], res["pt_err"])
        ptc_ms, _ = cells(res["ptc"], res["ptc_err"])
        print(f"| {row['pytorch']} | {row['schedc']} | {row['P']} | {row['vpp']} | {row['M']} "
              f"| {pt_ms} | {ptc_ms} | {ours_ms} | {pt_pk} | {ours_pk} "
              f"| {res['ver']} | {res['verc']} |")
    print("\nShapes PyTorch's constructor rejects (schedc makespan, peak r0 / max):\n")
    for res in results:
        row = res["row"]
        if row["status"] != "ok":
            ours_ms, ours_pk = cells(res["ours"], res["ours_err"])
            print(f"- {row['pytorch']} P={row['P']} vpp={row['vpp']} M={row['M']}: "
                  f"{row['status'][len('rejected: '):]} -- {row['schedc']}: {ours_ms}, {ours_pk}")


if __name__ == "__main__":
    main()
