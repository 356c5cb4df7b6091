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
  may run either way (the verifier is conservative); with
  --engine-violated the violated ones run too, and how many of them the
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

# Mutations at the level of streams and communicators (`--level streams`),
# on the base plans written as version 3 with a compute and a comm stream
# ordered by events, and each rank pair's transfers of one direction on a
# lazy communicator of their own (streamed()): an action moved to another
# stream, an event wait dropped, a record moved to another action, two
# transfers on different lazy communicators swapped (their creation
# order), two neighbouring lone transfers batched into a p2p group, and a
# p2p group split.
STREAM_MUTATIONS = ("restream", "drop-wait", "move-record", "creation-order",
                    "batch", "unbatch")


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


def streamed(plan: dict, per_direction: bool = True,
             lazy: bool = True) -> dict:
    """A copy of `plan` at the level of streams and communicators:
    computes and the optimizer step on stream "compute", the rest on
    "comm", each action that follows one of the other stream waiting for an
    event recorded after it (so the streams keep the plan's order); with
    `lazy`, each rank pair's transfers (of one direction of travel, with
    `per_direction`) on a lazy 2-rank communicator of their own."""
    plan = copy.deepcopy(plan)
    plan["version"] = 3
    pairs = {}
    for rank in plan["ranks"]:
        program = rank["instructions"]
        for i, ins in enumerate(program):
            compute = ins["op"] in ("forward", "backward", "backward_input",
                                    "backward_weight", "optimizer_step")
            ins["stream"] = "compute" if compute else "comm"
            if i and program[i - 1]["stream"] != ins["stream"]:
                program[i - 1]["record_event"] = f"e{i - 1}"
                ins["wait_event"] = f"e{i - 1}"
            if lazy and ins["op"] in ("send", "recv"):
                low, high = sorted((rank["rank"], ins["peer"]))
                up = (ins["op"] == "send") == (rank["rank"] == low)
                name = f"p{low}_{high}"
                if per_direction:
                    name += "_up" if up else "_down"
                pairs[name] = [low, high]
                ins["communicator"] = name
    plan["groups"] = plan.get("groups", []) + [
        {"name": name, "members": [members], "creation": "lazy"}
        for name, members in sorted(pairs.items())]
    return plan


def stream_bases(tools: Tools, workdir: str, bases: Dict[str, dict]
                 ) -> Dict[str, dict]:
    """Each base plan at the level of streams and communicators, in the
    first form the verifier verifies: a lazy communicator per rank pair and
    direction of travel, else per rank pair, else streams alone (the
    pipelines that run both ways from the start, DualPipe's, create the
    two directions' communicators in opposite orders)."""
    streamed_bases = {}
    for label, plan in bases.items():
        for per_direction, lazy in ((True, True), (False, True),
                                    (False, False)):
            candidate = streamed(plan, per_direction, lazy)
            path = os.path.join(workdir, f"streams-{label}.json")
            with open(path, "w") as f:
                json.dump(candidate, f)
            if tools.run([tools.path("schedc"), "verify",
                          path]).returncode == 0:
                streamed_bases[label] = candidate
                break
        else:
            raise RuntimeError(f"{label}: no stream form of the plan "
                               f"verifies")
    return streamed_bases


def mutate_streams(plan: dict, mutation: str, rng: random.Random
                   ) -> Optional[dict]:
    """A copy of `streamed` plan `plan` with one mutation at the level of
    streams and communicators, or None when it does not apply."""
    plan = copy.deepcopy(plan)
    plan["verdict"]["status"] = "unverified"
    ranks = [r for r in plan["ranks"] if r["instructions"]]
    program = rng.choice(ranks)["instructions"]
    n = len(program)
    i = rng.randrange(n)
    ins = program[i]
    if mutation == "restream":
        if "p2p_group" in ins or "overlap" in ins:
            return None
        ins["stream"] = rng.choice([x for x in ("compute", "comm", "side")
                                    if x != ins["stream"]])
    elif mutation == "drop-wait":
        waits = [k for k, x in enumerate(program) if "wait_event" in x]
        if not waits:
            return None
        del program[rng.choice(waits)]["wait_event"]
    elif mutation == "move-record":
        records = [k for k, x in enumerate(program) if "record_event" in x]
        if not records:
            return None
        k = rng.choice(records)
        event = program[k].pop("record_event")
        free = [j for j, x in enumerate(program)
                if "record_event" not in x and j != k]
        if not free:
            return None
        program[rng.choice(free)]["record_event"] = event
    elif mutation == "creation-order":
        lone = [k for k in range(n - 1)
                if "communicator" in program[k] and
                "communicator" in program[k + 1] and
                program[k]["communicator"] != program[k + 1]["communicator"]]
        if not lone:
            return None
        k = rng.choice(lone)
        program[k], program[k + 1] = program[k + 1], program[k]
    elif mutation == "batch":
        lone = [k for k in range(n - 1)
                if program[k]["op"] in ("send", "recv") and
                program[k + 1]["op"] in ("send", "recv") and
                "p2p_group" not in program[k] and
                "p2p_group" not in program[k + 1]]
        if not lone:
            return None
        k = rng.choice(lone)
        ids = [x["p2p_group"] for x in program if "p2p_group" in x]
        new_id = max(ids, default=-1) + 1
        for x in program[k:k + 2]:
            x["p2p_group"] = new_id
            x["stream"] = program[k]["stream"]
    elif mutation == "unbatch":
        grouped = [k for k, x in enumerate(program) if "p2p_group" in x]
        if not grouped:
            return None
        program[rng.choice(grouped)].pop("p2p_group")
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
    parser.add_argument("--level", choices=("plan", "streams"),
                        default="plan",
                        help="what to mutate: the plan's instructions and "
                             "declaration names (plan, default), or its "
                             "streams, events, lazy communicators and "
                             "batching (streams)")
    parser.add_argument("--engine-violated", action="store_true",
                        help="run the violated mutants on the engine too "
                             "and report what it does with them (nothing "
                             "is required of them: make bench does it, "
                             "make test does not)")
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
        if args.level == "streams":
            bases = stream_bases(tools, workdir, bases)
        labels = sorted(bases)
        # Plans whose collectives name declarations get the name mutations
        # more often: they are what those mutations are about.
        pools = {label: MUTATIONS + NAME_MUTATIONS * 2
                 if any("declaration" in ins for r in bases[label]["ranks"]
                        for ins in r["instructions"]) else MUTATIONS
                 for label in labels}
        if args.level == "streams":
            pools = {label: STREAM_MUTATIONS for label in labels}
        mutator = mutate_streams if args.level == "streams" else mutate
        mutants: List[Mutant] = []
        malformed = 0
        while len(mutants) < args.count:
            base = labels[len(mutants) % len(labels)]
            mutation = rng.choice(pools[base])
            plan = mutator(bases[base], mutation, rng)
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
        # The property checked is that the engine passes what is verified;
        # a violated plan may run either way, so running it only reports
        # (a third of the CPU of a plan-level run, and one that hangs costs
        # the whole timeout).
        if args.engine_violated:
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
        if not any(m.engine for m in violated):
            print(f"violated: {len(violated)} (not run on the engine)")
        else:
            print(f"violated: {len(violated)}: the engine fails "
                  f"{outcomes['fail']}, deadlocks on "
                  f"{outcomes['deadlock']}, refuses {outcomes['refused']}, "
                  f"runs {engine_ok} correctly (the verifier is "
                  f"conservative there)")
        kinds = STREAM_MUTATIONS if args.level == "streams" \
            else NAME_MUTATIONS
        renamed = [m for m in mutants if m.mutation in kinds]
        print(("streams and communicators" if args.level == "streams"
               else "named declarations")
              + f": {len(renamed)} mutants ("
              + ", ".join(f"{k} {sum(1 for m in renamed if m.mutation == k)}"
                          for k in kinds)
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
