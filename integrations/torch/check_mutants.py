#!/usr/bin/env python3
"""Check the verifier against the engine on mutated runtime plans.

Generates a runtime plan for every strategy schedc has (and pipelines with
data parallelism, hybrid sharding, FSDP, DualPipe, aux-free heads and collectives that name
their declarations), mutates them at random (an instruction dropped,
duplicated, moved, two neighbours swapped, a p2p group split; a collective
given the name of a declaration, given another one, or its name dropped),
and for each mutant:

- verifies it with `schedc verify` on the JSON path and on the MLIR path
  (the plan imported with `sched-translate --import-json-plan`): the two
  verdicts must be the same;
- runs it on integrations/torch/run_plan.py (gloo, CPU): a plan the
  verifier calls verified must pass there (right loss, gradients and
  parameters, no deadlock, nothing the executor refuses). A violated plan
  may run either way (the verifier is conservative); how many of them the
  engine runs correctly anyway is reported.

Exit status: 0 the verifier and the engine agree on every mutant, 1 a
disagreement (each named with its mutation), 2 a tool failed.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))

# Strategies and their generate flags: each with M < P, M = P or M > P.
STRATEGIES: List[Tuple[str, List[str]]] = [
    ("gpipe", ["--pp", "2", "--microbatches", "3"]),
    ("1f1b", ["--pp", "3", "--microbatches", "4"]),
    ("1f1b-short", ["--pp", "3", "--microbatches", "2"]),
    ("interleaved-1f1b", ["--pp", "2", "--vpp", "2", "--microbatches", "4"]),
    ("looped-bfs", ["--pp", "2", "--vpp", "2", "--microbatches", "2"]),
    ("zb-h1", ["--pp", "2", "--microbatches", "3"]),
    ("zb-h2", ["--pp", "2", "--microbatches", "4"]),
    ("interleaved-zb", ["--pp", "2", "--vpp", "2", "--microbatches", "4"]),
    ("zb-v", ["--pp", "2", "--microbatches", "3"]),
    ("v-half", ["--pp", "2", "--microbatches", "4"]),
    ("v-min", ["--pp", "2", "--microbatches", "4"]),
    ("dualpipe-v", ["--pp", "2", "--microbatches", "4"]),
    ("dualpipe", ["--pp", "2", "--microbatches", "4"]),
    ("no-pp", ["--pp", "1", "--microbatches", "3"]),
]

# Pipelines lowered with sched-opt: data parallelism (also hybrid
# sharding), FSDP, DualPipe, and
# declarations that share their actions.
PIPELINES: List[Tuple[str, str, str]] = [
    ("dp-1f1b", """sched.pipeline @dp pp 2 microbatches 3 {
  sched.mesh dp = 2, pp = 2
  sched.group @dp members [[0], [1]]
  sched.collective all_reduce @dp bytes 64 when after_backward
}""", "--sched-lower-1f1b --sched-insert-p2p --sched-insert-collectives"),
    ("hsdp-1f1b", """sched.pipeline @hsdp pp 2 microbatches 3 {
  sched.mesh dp_replicate = 2, dp_shard = 2, pp = 2
  sched.group @dp_shard members [[0], [1]]
  sched.group @dp_replicate members [[0], [1]]
  sched.collective reduce_scatter @dp_shard bytes 64 when after_backward
  sched.collective all_reduce @dp_replicate bytes 32 when after_backward
}""", "--sched-lower-1f1b --sched-insert-p2p --sched-insert-collectives"),
    ("fsdp-1f1b", """sched.pipeline @fsdp pp 2 microbatches 3 {
  sched.mesh dp = 2, pp = 2
  sched.group @dp members [[0], [1]]
}""", "--sched-lower-1f1b --sched-insert-p2p "
      "--sched-insert-collectives=fsdp=true"),
    ("fsdp-dualpipe", """sched.pipeline @dual_fsdp pp 2 microbatches 4 {
  sched.mesh dp = 2, pp = 2
  sched.group @dp members [[0], [1]]
}""", "--sched-lower-dualpipe --sched-insert-p2p "
      "--sched-insert-collectives=fsdp=true"),
    # Declarations that share their actions: sched-insert-collectives names
    # the declaration of each collective that could be read two ways (the
    # gradient and the step all-reduce; the dispatch and the combine
    # all-to-all), so the name mutations have names to change.
    ("named-dp", """sched.pipeline @named pp 2 microbatches 3 {
  sched.mesh dp = 2, pp = 2
  sched.group @dp members [[0], [1]]
  sched.group @ep members [[0], [1]]
  sched.collective all_reduce @dp bytes 64 when after_backward
  sched.collective all_reduce @dp bytes 64 when step
  sched.collective all_to_all @ep bytes 32 when before_forward stage 1
  sched.collective all_to_all @ep bytes 32 when after_forward stage 1
}""", "--sched-lower-1f1b --sched-insert-p2p --sched-insert-collectives"),
    ("named-dualpipe", """sched.pipeline @named_dual pp 2 microbatches 4 {
  sched.mesh dp = 2, pp = 2
  sched.group @dp members [[0], [1]]
  sched.collective all_reduce @dp bytes 64 when after_backward
  sched.collective all_reduce @dp bytes 64 when step
}""", "--sched-lower-dualpipe --sched-insert-p2p --sched-insert-collectives"),
    # Bytes set the gradient and the step all-reduce apart for the
    # verifier, not for the engine: only the step one is named.
    ("named-zb", """sched.pipeline @named_zb pp 2 microbatches 3 {
  sched.mesh dp = 2, pp = 2
  sched.group @dp members [[0], [1]]
  sched.group @ep members [[0], [1]]
  sched.collective all_reduce @dp bytes 64 when after_backward
  sched.collective all_reduce @dp bytes 8 when step
  sched.collective all_to_all @ep bytes 32 when before_backward stage 0
  sched.collective all_to_all @ep bytes 32 when after_forward stage 0
}""", "--sched-lower-zb-h1 --sched-insert-p2p --sched-insert-collectives"),
]

# Mutations of a collective's declaration name (docs/runtime-plan.md,
# `declaration`): one given to a collective without one, one changed to
# another declaration, one dropped.
NAME_MUTATIONS = ("add-name", "wrong-name", "drop-name")
MUTATIONS = ("drop", "duplicate", "move", "swap", "split-group",
             *NAME_MUTATIONS)


@dataclass
class Tools:
    bin_dir: str

    def path(self, name: str) -> str:
        return os.path.join(self.bin_dir, name)

    def run(self, args: List[str], stdin: Optional[str] = None
            ) -> subprocess.CompletedProcess:
        return subprocess.run(args, input=stdin, capture_output=True,
                              text=True, timeout=300)


@dataclass
class Mutant:
    name: str
    base: str
    mutation: str
    path: str
    verdict_json: int = -1
    verdict_mlir: int = -1
    engine: str = ""


def base_plans(tools: Tools, workdir: str) -> Dict[str, dict]:
    """Generated, verified plans: one per strategy and pipeline."""
    plans: Dict[str, dict] = {}
    for label, flags in STRATEGIES:
        strategy = label.removesuffix("-short")
        out = os.path.join(workdir, f"base-{label}.json")
        done = tools.run([tools.path("schedc"), "generate", "--strategy",
                          strategy, *flags, "--emit", "json", "-o", out])
        if done.returncode != 0:
            raise RuntimeError(f"schedc generate {label}: {done.stderr}")
        plans[label] = json.load(open(out))
    aux = os.path.join(workdir, "base-aux-free.json")
    done = tools.run([tools.path("schedc"), "generate", "--strategy", "1f1b",
                      "--pp", "2", "--microbatches", "3", "--aux",
                      "stage=1,scope=global_batch", "--aux-legalize",
                      "aux-free", "--emit", "json", "-o", aux])
    if done.returncode != 0:
        raise RuntimeError(f"schedc generate aux-free: {done.stderr}")
    plans["aux-free"] = json.load(open(aux))
    for label, text, passes in PIPELINES:
        lowered = tools.run([tools.path("sched-opt"), "-", *passes.split(),
                             "--sched-assign-buffers"], stdin=text)
        if lowered.returncode != 0:
            raise RuntimeError(f"sched-opt {label}: {lowered.stderr}")
        exported = tools.run([tools.path("sched-translate"),
                              "--export-json-plan"], stdin=lowered.stdout)
        if exported.returncode != 0:
            raise RuntimeError(f"export {label}: {exported.stderr}")
        plans[label] = json.loads(exported.stdout)
    return plans


def rename(plan: dict, mutation: str, rng: random.Random) -> Optional[dict]:
    """`plan` (a copy) with a collective's declaration name added, changed
    or dropped, or None when it has no collective to mutate so. A new name
    is one of the declarations of the collective's kind and group (most of
    them explain it; one of another stage or bytes makes the plan
    malformed), else any declaration."""
    declarations = plan.get("collectives", [])
    named = mutation != "add-name"
    candidates = [ins for r in plan["ranks"] for ins in r["instructions"]
                  if "group" in ins and ("declaration" in ins) == named]
    if not candidates or (mutation != "drop-name" and not declarations):
        return None
    ins = rng.choice(candidates)
    if mutation == "drop-name":
        del ins["declaration"]
        return plan
    fitting = [k for k, d in enumerate(declarations)
               if d.get("kind") == ins["op"] and d.get("group") == ins["group"]
               and k != ins.get("declaration")]
    others = [k for k in range(len(declarations))
              if k != ins.get("declaration")]
    if not others:
        return None
    ins["declaration"] = rng.choice(fitting or others)
    return plan


def mutate(plan: dict, mutation: str, rng: random.Random) -> Optional[dict]:
    """A copy of `plan` with one mutation, or None when it does not apply."""
    plan = copy.deepcopy(plan)
    if mutation in NAME_MUTATIONS:
        plan = rename(plan, mutation, rng)
        if plan is not None:
            plan["verdict"]["status"] = "unverified"
        return plan
    ranks = [r for r in plan["ranks"] if r["instructions"]]
    program = rng.choice(ranks)["instructions"]
    n = len(program)
    i = rng.randrange(n)
    if mutation == "drop":
        del program[i]
    elif mutation == "duplicate":
        copy_of = dict(program[i])
        copy_of.pop("p2p_group", None)
        copy_of.pop("overlap", None)
        program.insert(rng.randrange(n + 1), copy_of)
    elif mutation == "move":
        moved = program.pop(i)
        moved.pop("p2p_group", None)
        moved.pop("overlap", None)
        program.insert(rng.randrange(n), moved)
    elif mutation == "swap":
        if n < 2:
            return None
        i = min(i, n - 2)
        program[i], program[i + 1] = program[i + 1], program[i]
    elif mutation == "split-group":
        grouped = [k for k, ins in enumerate(program) if "p2p_group" in ins]
        if not grouped:
            return None
        program[rng.choice(grouped)].pop("p2p_group")
    plan["verdict"]["status"] = "unverified"
    return plan


def verdict(tools: Tools, path: str) -> Tuple[int, int]:
    """schedc verify's exit status on the plan, and on its MLIR import (2
    when the import refuses it)."""
    direct = tools.run([tools.path("schedc"), "verify", path]).returncode
    imported = tools.run([tools.path("sched-translate"),
                          "--import-json-plan", path])
    if imported.returncode != 0:
        return direct, 2
    via_mlir = tools.run([tools.path("schedc"), "verify", "--format", "mlir",
                          "-"], stdin=imported.stdout).returncode
    return direct, via_mlir


def run_engine(mutants: List[Mutant], timeout: float) -> None:
    """Runs the mutants on run_plan.py and records each one's outcome:
    pass, fail, deadlock or refused."""
    if not mutants:
        return
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "run_plan.py"), "--timeout",
         str(timeout), *[m.path for m in mutants]],
        capture_output=True, text=True, timeout=60 + 30 * len(mutants))
    by_name = {os.path.basename(m.path): m for m in mutants}
    for line in done.stdout.splitlines():
        name, _, rest = line.partition(": ")
        mutant = by_name.get(name)
        if mutant is None or mutant.engine in ("fail", "deadlock", "refused"):
            continue
        if rest.startswith("PASS"):
            mutant.engine = "pass"
        elif rest.startswith("FAIL"):
            mutant.engine = "fail"
        elif rest.startswith("error: deadlock"):
            mutant.engine = "deadlock"
        elif rest.startswith("error:"):
            mutant.engine = "refused"
    for mutant in mutants:
        if not mutant.engine:
            mutant.engine = "refused"


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="check_mutants.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, metavar="DIR",
                        help="the directory of schedc, sched-opt and "
                             "sched-translate")
    parser.add_argument("--count", type=int, default=300,
                        help="how many mutants to check (default 300)")
    parser.add_argument("--seed", type=int, default=1,
                        help="random seed (default 1)")
    parser.add_argument("--timeout", type=float, default=5.0,
                        metavar="SECONDS",
                        help="the executor's deadlock timeout for plans the "
                             "verifier calls verified (default 5); violated "
                             "plans run with 1")
    parser.add_argument("--keep", metavar="DIR",
                        help="write the mutants here instead of a temporary "
                             "directory")
    args = parser.parse_args(argv)
    if args.count < 1:
        print("check_mutants.py: error: --count must be >= 1",
              file=sys.stderr)
        return 2
    tools = Tools(args.bin)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as scratch:
        workdir = args.keep or scratch
        os.makedirs(workdir, exist_ok=True)
        try:
            bases = base_plans(tools, workdir)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print(f"check_mutants.py: error: {e}", file=sys.stderr)
            return 2
        labels = sorted(bases)
        # Plans whose collectives name declarations get the name mutations
        # more often: they are what those mutations are about.
        pools = {label: MUTATIONS + NAME_MUTATIONS * 2
                 if any("declaration" in ins for r in bases[label]["ranks"]
                        for ins in r["instructions"]) else MUTATIONS
                 for label in labels}
        mutants: List[Mutant] = []
        malformed = 0
        while len(mutants) < args.count:
            base = labels[len(mutants) % len(labels)]
            mutation = rng.choice(pools[base])
            plan = mutate(bases[base], mutation, rng)
            if plan is None:
                continue
            name = f"m{len(mutants):04d}-{base}-{mutation}"
            path = os.path.join(workdir, name + ".json")
            with open(path, "w") as f:
                json.dump(plan, f)
            mutant = Mutant(name, base, mutation, path)
            mutant.verdict_json, mutant.verdict_mlir = verdict(tools, path)
            if mutant.verdict_json == 2:
                malformed += 1  # refused by the reader: nothing to run
                os.remove(path)
                continue
            mutants.append(mutant)
        verified = [m for m in mutants if m.verdict_json == 0]
        violated = [m for m in mutants if m.verdict_json == 1]
        run_engine(verified, args.timeout)
        run_engine(violated, 1.0)

        problems: List[str] = []
        for m in mutants:
            if m.verdict_json != m.verdict_mlir:
                problems.append(f"{m.name}: schedc verify exits "
                                f"{m.verdict_json} on the JSON path and "
                                f"{m.verdict_mlir} on the MLIR path")
            if m.verdict_json == 0 and m.engine != "pass":
                problems.append(f"{m.name}: verified, but the engine "
                                f"reports {m.engine}")
            if m.verdict_json not in (0, 1):
                problems.append(f"{m.name}: schedc verify exits "
                                f"{m.verdict_json}")
        engine_ok = sum(1 for m in violated if m.engine == "pass")
        print(f"mutants: {len(mutants)} of {len(labels)} plans "
              f"({malformed} more refused as malformed)")
        print(f"verified: {len(verified)}, and the engine passes "
              f"{sum(1 for m in verified if m.engine == 'pass')} of them")
        outcomes = {k: sum(1 for m in violated if m.engine == k)
                    for k in ("fail", "deadlock", "refused", "pass")}
        print(f"violated: {len(violated)}: the engine fails "
              f"{outcomes['fail']}, deadlocks on {outcomes['deadlock']}, "
              f"refuses {outcomes['refused']}, runs {engine_ok} correctly "
              f"(the verifier is conservative there)")
        renamed = [m for m in mutants if m.mutation in NAME_MUTATIONS]
        print(f"named declarations: {len(renamed)} mutants ("
              + ", ".join(f"{k} {sum(1 for m in renamed if m.mutation == k)}"
                          for k in NAME_MUTATIONS)
              + f"): {sum(1 for m in renamed if m.verdict_json == 0)} "
              f"verified, {sum(1 for m in renamed if m.verdict_json == 1)} "
              f"violated")
        for m in violated:
            if m.engine == "pass":
                print(f"conservative: {m.name}")
        for problem in problems:
            print(f"DISAGREE: {problem}")
        print(f"disagreements: {len(problems)}")
        return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
