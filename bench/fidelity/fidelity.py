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

The validation protocol (docs/fidelity-protocol.md): runs come in whole
published tables (tables.json: every row schedc can express, by a rule
written before any error was seen) and each table belongs to the
development or the held-out split. Changes to the cost model are made
against the development split only; the held-out split is only reported,
and its errors per class (software stack, dense/MoE, device generation,
context length) are the error bands the planner prints with every answer
(--write-bands lib/Planner/error-bands.json).

Usage: fidelity.py SCHEDC [--runs FILE ...] [--split SPLIT] [--layout-only]
                          [--json OUT] [--write-bands OUT] [--jobs N]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import math
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
    split: str = "development"
    table: str = ""
    model: str = ""
    error_class: dict = dataclasses.field(default_factory=dict)
    band: dict = dataclasses.field(default_factory=dict)
    # The published figure's own kind of throughput, for auto pairs.
    seq: int = 0
    # The --layout the planner ran (the row's, with its recipe's fields and
    # the framework's default split).
    layout: str = ""

    @property
    def throughput(self) -> tuple[Optional[float], float]:
        """(predicted, published) as throughputs (higher is faster)."""
        if self.kind == "tflops":
            return self.predicted, self.published
        return (None if self.predicted is None else 1 / self.predicted,
                1 / self.published)

    @property
    def covered(self) -> Optional[bool]:
        """Whether the published value lies inside the predicted band."""
        if self.predicted is None or not self.band.get("known"):
            return None
        low, high = self.band["error_low"], self.band["error_high"]
        return low <= self.relative_error <= high

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
    if run.get("stack"):
        cmd += ["--stack", run["stack"]]
    for key, flag in (("zero", "--zero"), ("recompute", "--recompute"),
                      ("microbatch_size", "--microbatch-size"),
                      ("attention", "--attention"),
                      ("tp_overlap", "--tp-overlap"),
                      ("allocator", "--allocator"),
                      ("p2p_overlap", "--p2p-overlap"),
                      ("main_grads", "--main-grads"),
                      ("optimizer_moments", "--optimizer-moments"),
                      ("moe_dispatcher", "--moe-dispatcher"),
                      ("cuda_graphs", "--cuda-graphs"),
                      ("fp8_param_gather", "--fp8-param-gather")):
        if key in run:
            cmd += [flag, str(run[key])]
    return cmd


# What a recipe adds to a published layout; --layout-only drops it.
RECIPE_KEYS = ("recompute", "microbatch_size", "attention", "tp_overlap",
               "allocator", "p2p_overlap", "main_grads", "optimizer_moments",
               "sp", "zero", "moe_dispatcher", "cuda_graphs",
               "fp8_param_gather")
# Recipe fields of the layout string itself (stage split, offload).
RECIPE_LAYOUT_FIELDS = ("first", "last", "split", "offload")


# Megatron-Bridge's FP8 precision configs keep and gather the parameters in
# FP8 (`fp8_param_gather = True`) under current scaling and MXFP8, not under
# blockwise scaling (src/megatron/bridge/training/mixed_precision.py at every
# tag v0.1.0rc3-v0.4.2; the performance scripts' get_precision_config leaves
# it): the recipe's `fp8_recipe` -> `schedc plan --fp8-param-gather`.
FP8_PARAM_GATHER = {"tensorwise": "tensorwise", "mxfp8": "mxfp8",
                    "blockwise": "off"}


# Stacks whose framework splits the layers evenly when a run names no split.
EVEN_SPLIT_STACKS = ("megatron-core", "megatron-lm-2022")


def default_split(run: dict, layers: int) -> dict:
    """The run with Megatron's default stage split where it states none.

    Megatron-Core gives every pipeline rank num_layers / pp layers, and
    each of its vpp chunks an equal share, unless a run sets the first or
    last stage's layers or a layout string, and asserts that they divide
    (megatron/core/transformer/transformer_block.py,
    get_num_layers_to_build); Megatron-LM of 2021-22 has only that split
    (megatron/model/transformer.py). So a row of those stacks with PP whose
    layout and recipe name no split ran the even one when pp x vpp divides
    the layers; where it does not, the run must have set a split the row
    does not give, and the planner's own stands
    (docs/fidelity-protocol.md, section 8). A table's stack file counts as
    its base stack."""
    stack = run.get("stack_file", {}).get("base", run.get("stack"))
    if stack not in EVEN_SPLIT_STACKS:
        return run
    items = dict(item.split("=", 1) for item in run["layout"].split(",")
                 if "=" in item)
    if any(key in items for key in ("split", "first", "last")):
        return run
    chunks = int(items.get("pp", 1)) * int(items.get("vpp", 1))
    if int(items.get("pp", 1)) <= 1 or layers % chunks != 0:
        return run
    return run | {"layout": run["layout"] + ",split=even"}


def layout_only(run: dict) -> dict:
    """The run as a layout table gives it: no recipe."""
    bare = {k: v for k, v in run.items() if k not in RECIPE_KEYS}
    if "published_schedule" in bare:
        bare["schedule"] = bare.pop("published_schedule")
    bare["layout"] = ",".join(
        item for item in run["layout"].split(",")
        if item.split("=")[0].strip() not in RECIPE_LAYOUT_FIELDS)
    return bare


def evaluate(schedc: str, run: dict, models: dict, clusters: dict,
             workdir: Path) -> Outcome:
    kind = "step_s" if "step_s" in run else "tflops"
    outcome = Outcome(run["name"], kind, float(run[kind]),
                      run_set=run.get("set", run.get("table", "published")),
                      split=run.get("split", "development"),
                      table=run.get("table", run.get("set", "published")),
                      model=run["model"], seq=int(run["seq"]))
    workdir.mkdir(parents=True, exist_ok=True)
    model = workdir / f"model-{run['model']}.json"
    model.write_text(json.dumps(models[run["model"]]))
    cluster = workdir / f"cluster-{run['cluster']}.json"
    cluster.write_text(json.dumps(clusters[run["cluster"]]))
    run = default_split(run, int(models[run["model"]]["layers"]))
    outcome.layout = run["layout"]
    if run.get("stack_file"):
        # A table whose framework no built-in stack describes carries its
        # own stack file (a `base` and the facts that differ).
        stack = workdir / f"stack-{run.get('table', 'runs')}-{run['stack']}.json"
        stack.write_text(json.dumps(run["stack_file"]))
        run = run | {"stack": str(stack)}
    proc = subprocess.run(plan_command(schedc, run, model, cluster),
                          capture_output=True, text=True, timeout=600)
    if proc.returncode == 2:
        outcome.error = proc.stderr.strip().splitlines()[-1][:160]
        return outcome
    result = json.loads(proc.stdout)
    outcome.error_class = result.get("error_class") or {}
    candidates = result.get("candidates") or []
    if not candidates:
        outcome.fits = False
        overflow = result.get("overflowing") or []
        outcome.error = "does not fit" + (
            f": {overflow[0].get('overflow', '')}" if overflow else "")
        return outcome
    best = candidates[0]
    outcome.band = best.get("band") or {}
    outcome.predicted = (best["tflops_per_device"] if kind == "tflops"
                         else best["step_time_s"])
    layout = best["layout"]
    outcome.explain = (f"mb={layout['microbatch_size']} "
                       f"zero={layout['zero']} rc={layout['recompute']} "
                       f"{best['schedule']}")
    return outcome


def format_value(kind: str, value: Optional[float]) -> str:
    if value is None:
        return "-"
    return f"{value:.0f} TF" if kind == "tflops" else f"{value:.2f} s"


# A recipe's expert all-to-all overlap (Megatron's
# --overlap-moe-expert-parallel-comm) is the combined 1F1B schedule; with
# a pipeline, Megatron runs it on the interleaved schedule only.
COMBINED = {"no-pp": "combined-1f1b",
            "interleaved-1f1b": "interleaved-combined-1f1b"}


def cuda_graphs(recipe_value: str) -> str:
    """--cuda-graphs for a recipe's `cuda_graphs` ("IMPL:SCOPES" as
    Megatron-Bridge's cuda_graph_impl and cuda_graph_scope name them)."""
    impl, _, scope = recipe_value.partition(":")
    scopes = set(scope.split(",")) if scope else set()
    if impl == "none":
        return "none"
    if "full_iteration" in scopes or impl == "full_iteration":
        return "step"
    if impl == "local" and scopes == {"full"}:
        return "layer"
    if impl == "transformer_engine" and scopes <= {"attn", "moe_router",
                                                    "moe_preprocess"}:
        return "moe-router" if "moe_router" in scopes else "none"
    raise ValueError(f"cuda_graphs '{recipe_value}': no --cuda-graphs "
                     "states it")


def apply_recipe(run: dict, recipe: dict) -> dict:
    """The run with the facts its framework recipe states
    (docs/fidelity-protocol.md, section 7): recomputation, the first and
    last stages' layers, activation offload, FSDP, the MoE dispatcher, the
    all-to-all overlap, the tensor-parallel overlap and the allocator. The
    micro-batch size is the table's."""
    merged = dict(run)
    for key in ("main_grads", "optimizer_moments", "allocator"):
        if recipe.get(key):
            merged[key] = recipe[key]
    if recipe.get("recompute"):
        merged["recompute"] = recipe["recompute"]
    fields = [f"{key}={recipe[key]}" for key in ("first", "last", "offload")
              if recipe.get(key) is not None]
    if recipe.get("even_split"):
        fields.append("split=even")
    if fields:
        kept = [item for item in run["layout"].split(",")
                if item.split("=")[0].strip() not in ("first", "last",
                                                      "offload", "split")]
        merged["layout"] = ",".join(kept + fields)
    if recipe.get("fsdp"):
        merged["zero"] = 3
    if recipe.get("tp_overlap") in ("on", "off"):
        merged["tp_overlap"] = recipe["tp_overlap"]
    if recipe.get("cuda_graphs"):
        merged["cuda_graphs"] = cuda_graphs(recipe["cuda_graphs"])
    if recipe.get("moe_dispatcher") == "alltoall":
        merged["moe_dispatcher"] = "alltoall"
    if run.get("precision") == "fp8" and \
            recipe.get("fp8_recipe") in FP8_PARAM_GATHER:
        merged["fp8_param_gather"] = FP8_PARAM_GATHER[recipe["fp8_recipe"]]
    if recipe.get("a2a_overlap") and run["schedule"] in COMBINED:
        merged["published_schedule"] = run["schedule"]
        merged["schedule"] = COMBINED[run["schedule"]]
    merged["recipe_source"] = recipe.get("source", "")
    return merged


def load_runs(paths: list[str],
              recipes: Optional[dict] = None
              ) -> tuple[list[dict], dict, dict, list]:
    """The runs of every file, each with its table's split and stack, and
    the models, clusters and pairs of all of them."""
    runs: list[dict] = []
    models: dict = {}
    clusters: dict = {}
    pairs: list = []
    for path in paths:
        data = json.loads(Path(path).read_text())
        models.update(data.get("models", {}))
        clusters.update(data.get("clusters", {}))
        pairs += data.get("pairs", [])
        tables = data.get("tables", {})
        for run in data["runs"]:
            table = tables.get(run.get("table", ""), {})
            merged = {k: v for k, v in table.items()
                      if k in ("split", "stack", "stack_file")} | run
            if recipes and run["name"] in recipes:
                merged = apply_recipe(merged, recipes[run["name"]])
            runs.append(merged)
    return runs, models, clusters, pairs


def summary(label: str, subset: list[Outcome]) -> None:
    errors = [abs(o.relative_error) for o in subset
              if o.relative_error is not None]
    missing = len(subset) - len(errors)
    if not errors:
        print(f"{label}: no run evaluated")
        return
    worst = max(subset, key=lambda o: abs(o.relative_error or 0))
    optimistic = sum((o.relative_error or 0) > 0 for o in subset)
    print(f"{label}: {len(errors)} runs, median |error| "
          f"{100 * statistics.median(errors):.1f}%, mean "
          f"{100 * statistics.mean(errors):.1f}%, worst "
          f"{100 * abs(worst.relative_error):.1f}% ({worst.name}), "
          f"{optimistic} optimistic"
          + (f", {missing} not evaluated" if missing else ""))


def coverage_line(label: str, subset: list[Outcome]) -> None:
    judged = [o.covered for o in subset if o.covered is not None]
    if judged:
        print(f"band coverage ({label}): {sum(judged)} of {len(judged)} "
              f"published values inside their band "
              f"({100 * sum(judged) / len(judged):.0f}%)")


def quantile(values: list[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    lower = int(position)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)


# The class fields in the order ErrorClass::key drops them (ErrorBands.cpp).
CLASS_FIELDS = ("stack", "kind", "generation", "context")
DROP_ORDER = ("stack", "context", "generation", "kind")
# A band is symmetric in the ratio predicted / published: within a factor
# exp(a) either way, a the class's BAND_QUANTILE of |ln(ratio)| (never an
# impossible ratio below zero, as an additive band past -100% would be). The sign
# of a class's error flips between tables (Megatron-LM of 2022: the
# held-out Narayanan 2021 runs come out +5..+13%, the development
# Korthikanti 2022 runs -13..+4%), so a band from signed quantiles keeps
# the held-out tables' bias: on the development split it covered 66% of
# the runs, this one 84% (docs/fidelity-protocol.md).
BAND_QUANTILE = 0.9


def class_key(error_class: dict, level: int) -> str:
    dropped = set(DROP_ORDER[:level])
    return "/".join("*" if f in dropped else str(error_class.get(f, "?"))
                    for f in CLASS_FIELDS)


def ratio_errors(pairs: list[tuple[Outcome, Outcome]]) -> list[float]:
    """|predicted ratio / published ratio - 1| of each evaluated pair."""
    out = []
    for a, b in pairs:
        (pa, ua), (pb, ub) = a.throughput, b.throughput
        if pa is not None and pb is not None:
            out.append(abs((pa / pb) / (ua / ub) - 1))
    return out


def auto_pairs(outcomes: list[Outcome]) -> list[tuple[Outcome, Outcome]]:
    """Published pairs inside a table: two runs of one model and sequence
    length whose published throughput per device differs by 10% or more,
    faster first (the order a planner must keep)."""
    pairs = []
    for i, a in enumerate(outcomes):
        for b in outcomes[i + 1:]:
            if (a.table, a.model, a.seq, a.kind) != (b.table, b.model, b.seq,
                                                     b.kind):
                continue
            ua, ub = a.throughput[1], b.throughput[1]
            if max(ua, ub) < 1.1 * min(ua, ub):
                continue
            pairs.append((a, b) if ua > ub else (b, a))
    return pairs


def write_bands(path: str, held_out: list[Outcome]) -> None:
    """The held-out errors per class at every level of ErrorClass::key,
    and the spread of the held-out pairs' ratio errors."""
    by_key: dict[str, list[float]] = {}
    for o in held_out:
        if o.relative_error is None or not o.error_class:
            continue
        for level in range(len(CLASS_FIELDS) + 1):
            by_key.setdefault(class_key(o.error_class, level),
                              []).append(o.relative_error)
    classes = {}
    for key, errors in sorted(by_key.items()):
        spread = quantile([abs(math.log1p(e)) for e in errors], BAND_QUANTILE)
        classes[key] = {"runs": len(errors),
                        "low": round(math.expm1(-spread), 4),
                        "median": round(statistics.median(errors), 4),
                        "high": round(math.expm1(spread), 4)}
    # The pairs' spread per class: pairs whose two runs share the key.
    pair_list = auto_pairs(held_out)
    comparison = {}
    for level in range(len(CLASS_FIELDS) + 1):
        grouped: dict[str, list] = {}
        for a, b in pair_list:
            if not a.error_class or not b.error_class:
                continue
            key = class_key(a.error_class, level)
            if key == class_key(b.error_class, level):
                grouped.setdefault(key, []).append((a, b))
        for key, pairs in grouped.items():
            errors = ratio_errors(pairs)
            if errors:
                comparison[key] = {"pairs": len(errors),
                                   "spread": round(quantile(errors, 0.8), 4)}
    spread = ratio_errors(pair_list)
    table = {
        "source": (f"bench/fidelity held-out split ({len(held_out)} runs), "
                   f"ratio within exp(+-a), a the {BAND_QUANTILE:g} quantile "
                   "of |ln(predicted/published)| per class; "
                   "written by fidelity.py --write-bands"),
        "classes": classes,
        "comparison": dict(sorted(comparison.items()))}
    Path(path).write_text(json.dumps(table, indent=2) + "\n")
    print(f"wrote {path}: {len(classes)} classes, {len(spread)} pairs")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("schedc", help="path of the schedc binary")
    here = Path(__file__).parent
    parser.add_argument("--runs", action="append",
                        help="a runs file (repeatable; default: runs.json "
                             "and tables.json beside this script)")
    parser.add_argument("--split", choices=("development", "held-out", "all"),
                        default="all",
                        help="evaluate only this split (default: all; the "
                             "held-out split is for reporting only)")
    parser.add_argument("--layout-only", action="store_true",
                        help="drop each run's recipe (recomputation, "
                             "micro-batch size, kernels, optimizer precision, "
                             "stage split, offload): the planner chooses; "
                             "a Megatron row keeps its framework's default "
                             "even split")
    parser.add_argument("--recipes",
                        help="the framework recipes of table rows (default: "
                             "recipes.json beside this script; 'none': "
                             "none)")
    parser.add_argument("--json", help="also write the outcomes to this file")
    parser.add_argument("--write-bands",
                        help="write the held-out errors per class (the "
                             "planner's error bands) to this file")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="runs planned at once (default: the CPUs)")
    args = parser.parse_args()
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")

    paths = args.runs or [str(here / "runs.json"), str(here / "tables.json")]
    recipes_path = args.recipes or str(here / "recipes.json")
    recipes = ({} if recipes_path == "none" else
               json.loads(Path(recipes_path).read_text())["runs"])
    runs, models, clusters, pairs_given = load_runs(paths, recipes)
    if args.split != "all":
        runs = [r for r in runs if r.get("split", "development") == args.split]
    if args.layout_only:
        runs = [layout_only(r) for r in runs]
    with tempfile.TemporaryDirectory() as tmp:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            outcomes = list(pool.map(
                lambda r: evaluate(args.schedc, r, models, clusters,
                                   Path(tmp) / r["name"]), runs))

    print(f"{'run':34} {'published':>10} {'predicted':>10} {'error':>8}  chosen")
    for o in outcomes:
        err = o.relative_error
        print(f"{o.name:34} {format_value(o.kind, o.published):>10} "
              f"{format_value(o.kind, o.predicted):>10} "
              f"{'-' if err is None else f'{100 * err:+.1f}%':>8}  "
              f"{o.error or o.explain}")

    print()
    summary("all runs", outcomes)
    splits = list(dict.fromkeys(o.split for o in outcomes))
    for split in splits:
        subset = [o for o in outcomes if o.split == split]
        summary(f"{split} split", subset)
        coverage_line(f"{split} split", subset)
        refused = [o for o in subset if o.predicted is None]
        print(f"fits ({split} split): {len(subset) - len(refused)} of "
              f"{len(subset)} published layouts")
    sets = list(dict.fromkeys(o.run_set for o in outcomes))
    for name in sets:
        summary(f"{name} set", [o for o in outcomes if o.run_set == name])
    for name in sets:
        subset = [o for o in outcomes if o.run_set == name]
        print(f"fits ({name}): {sum(o.fits and o.error is None for o in subset)}"
              f" of {len(subset)} published layouts")
    classes = sorted({class_key(o.error_class, 0) for o in outcomes
                      if o.error_class})
    for key in classes:
        for split in splits:
            subset = [o for o in outcomes if o.split == split and
                      o.error_class and class_key(o.error_class, 0) == key]
            if subset:
                summary(f"class {key} ({split})", subset)

    # A pair is kept when the faster run is predicted faster, reversed when
    # it is not (a tie included), and not evaluated when a side has no
    # prediction; counted per set (the set of the pair's faster run).
    by_name = {o.name: o for o in outcomes}
    pairs = [(by_name[f], by_name[s]) for f, s in pairs_given
             if f in by_name and s in by_name]
    counts: dict[str, list[int]] = {}
    for a, b in pairs:
        if a.predicted is None or b.predicted is None:
            verdict = "not evaluated"
        else:
            verdict = ("kept" if a.throughput[0] > b.throughput[0]
                       else "REVERSED")
        tally = counts.setdefault(a.run_set, [0, 0, 0])
        tally[0] += verdict == "kept"
        tally[1] += verdict == "REVERSED"
        tally[2] += verdict == "not evaluated"
        print(f"pair {a.name} > {b.name}: "
              f"{format_value(a.kind, a.predicted)} vs "
              f"{format_value(b.kind, b.predicted)}: {verdict}")
    for name, (kept, reversed_, unevaluated) in counts.items():
        print(f"pairs in order ({name}): {kept} of {kept + reversed_ + unevaluated}"
              + (f", {reversed_} reversed" if reversed_ else "")
              + (f", {unevaluated} not evaluated" if unevaluated else ""))
    for split in splits:
        inside = auto_pairs([o for o in outcomes if o.split == split])
        judged = [(a, b) for a, b in inside
                  if a.predicted is not None and b.predicted is not None]
        if judged:
            kept = sum(a.throughput[0] > b.throughput[0] for a, b in judged)
            print(f"table pairs in order ({split} split): {kept} of "
                  f"{len(judged)} (published throughputs 10% or more apart)")

    if args.json:
        Path(args.json).write_text(json.dumps(
            [dataclasses.asdict(o) | {"relative_error": o.relative_error}
             for o in outcomes], indent=1))
    if args.write_bands:
        write_bands(args.write_bands,
                    [o for o in outcomes if o.split == "held-out"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
