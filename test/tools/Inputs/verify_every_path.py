#!/usr/bin/env python3
"""Feed the verifier's lit probes through every input path and compare.

Each `sched.schedule` of the given MLIR files (split at `// -----`) is
verified as a whole step (`whole_step` added, as a runtime plan is) on the
MLIR path, written as a JSON runtime plan (sched-translate
--export-json-plan), verified on the JSON path, imported back to MLIR and
verified again, under eager and rendezvous semantics; each JSON plan given
is verified directly and through its MLIR import. The verdicts (schedc
verify's exit status) must agree. Schedules a path cannot express (an
op-verifier error, a plan the writer refuses) are counted, not compared.
With --shard K/N only every N-th schedule or plan, starting at the K-th
(0-based, in sorted file order), is checked: N lit tests of one shard each
check every one exactly once, each well inside lit's time limit on a loaded
machine (issue 31).

Exit status: 0 every path agrees, 1 a disagreement (named), 2 bad usage.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from typing import List, Optional, Tuple

SCHEDULE = re.compile(r"^(\s*sched\.schedule @\S+[^{]*?)\s*\{", re.M)


def run(args: List[str], stdin: Optional[str] = None
        ) -> subprocess.CompletedProcess:
    return subprocess.run(args, input=stdin, capture_output=True, text=True,
                          timeout=120)


def chunks(path: str) -> List[str]:
    """The MLIR snippets of a file that hold exactly one schedule."""
    with open(path) as f:
        text = f.read()
    parts = re.split(r"^// -----\s*$", text, flags=re.M)
    return [p for p in parts if len(SCHEDULE.findall(p)) == 1]


def as_whole_step(snippet: str) -> str:
    def mark(match: re.Match) -> str:
        head = match.group(1)
        if "whole_step" in head:
            return match.group(0)
        return head + " whole_step {"
    return SCHEDULE.sub(mark, snippet)


class Checker:
    def __init__(self, bin_dir: str, scratch: str) -> None:
        self.schedc = os.path.join(bin_dir, "schedc")
        self.translate = os.path.join(bin_dir, "sched-translate")
        self.scratch = scratch
        self.compared = 0
        self.skipped = 0
        self.problems: List[str] = []

    def verify(self, path: str, p2p: str, fmt: str) -> int:
        return run([self.schedc, "verify", "--p2p", p2p, "--format", fmt,
                    path]).returncode

    def via_import(self, json_path: str, p2p: str) -> Tuple[int, str]:
        imported = run([self.translate, "--import-json-plan", json_path])
        if imported.returncode != 0:
            return 2, imported.stderr.strip()
        mlir = os.path.join(self.scratch, "imported.mlir")
        with open(mlir, "w") as f:
            f.write(imported.stdout)
        return self.verify(mlir, p2p, "mlir"), ""

    def check_mlir(self, label: str, snippet: str) -> None:
        mlir = os.path.join(self.scratch, "probe.mlir")
        with open(mlir, "w") as f:
            f.write(as_whole_step(snippet))
        for p2p in ("eager", "rendezvous"):
            direct = self.verify(mlir, p2p, "mlir")
            plan = os.path.join(self.scratch, "probe.json")
            written = run([self.translate, "--export-json-plan",
                           "--json-plan-allow-unverified",
                           f"--json-plan-p2p={p2p}", mlir, "-o", plan])
            if direct == 2 or written.returncode != 0:
                self.skipped += 1
                continue
            as_json = self.verify(plan, p2p, "json")
            back, _ = self.via_import(plan, p2p)
            self.compared += 1
            if not direct == as_json == back:
                self.problems.append(
                    f"{label} ({p2p}): MLIR exits {direct}, its JSON plan "
                    f"{as_json}, the plan imported back {back}")

    def check_json(self, label: str, path: str) -> None:
        for p2p in ("eager", "rendezvous"):
            direct = self.verify(path, p2p, "json")
            back, why = self.via_import(path, p2p)
            if direct == 2 and back == 2:
                self.skipped += 1
                continue
            self.compared += 1
            if direct != back:
                self.problems.append(
                    f"{label} ({p2p}): the JSON plan exits {direct}, its MLIR "
                    f"import {back} {why}".rstrip())


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="verify_every_path.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, metavar="DIR",
                        help="the directory of schedc and sched-translate")
    parser.add_argument("files", nargs="+",
                        help=".mlir files (split at // -----) and .json "
                             "plans")
    parser.add_argument("--shard", default="0/1", metavar="K/N",
                        help="check only items K, K+N, K+2N, ... (default "
                             "0/1: all)")
    args = parser.parse_args(argv)
    shard = re.fullmatch(r"(\d{1,4})/(\d{1,4})", args.shard)
    if not shard or not int(shard.group(1)) < int(shard.group(2)):
        print(f"verify_every_path.py: error: --shard must be K/N with "
              f"0 <= K < N <= 9999, got '{args.shard[:40]}'", file=sys.stderr)
        return 2
    index, count = int(shard.group(1)), int(shard.group(2))
    items = []
    for path in sorted(args.files):
        name = os.path.basename(path)
        if path.endswith(".json"):
            items.append((name, path, None))
            continue
        for k, snippet in enumerate(chunks(path)):
            items.append((f"{name}#{k}", path, snippet))
    mine = items[index::count]
    with tempfile.TemporaryDirectory() as scratch:
        checker = Checker(args.bin, scratch)
        for label, path, snippet in mine:
            if snippet is None:
                checker.check_json(label, path)
            else:
                checker.check_mlir(label, snippet)
        print(f"shard {index} of {count}: {len(mine)} of {len(items)} "
              f"schedules and plans")
        print(f"compared: {checker.compared} (schedule, semantics) pairs, "
              f"{checker.skipped} a path cannot express")
        for problem in checker.problems:
            print(f"DISAGREE: {problem}")
        print(f"disagreements: {len(checker.problems)}")
        return 1 if checker.problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
