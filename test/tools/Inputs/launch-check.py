#!/usr/bin/env python3
"""Checks a file `schedc plan --emit` wrote by its consumer's rules, as
those consumers state them (no consumer is installed here):

  megatron FILE --layers N --mtp M --devices D
      the bash array parses; every flag is one Megatron-LM's arguments.py
      defines; parallel sizes multiply to the devices; the
      --pipeline-model-parallel-layout string obeys Megatron-Core's
      PipelineParallelLayerLayout: `|` between stages, `E` `t` `m` `L`,
      `x*n` and `(...)*n` repeats, commas cosmetic, pp x vpp stages, the
      embedding first and the loss last (once each), N decoders, M MTP
      layers after every decoder and in a rank's last virtual stage.
  torchtitan FILE --layers N --devices D
      the TOML parses (tomllib); every section and field is one of
      torchtitan's JobConfig; the mesh dp_replicate x dp_shard x cp x tp x
      pp is the devices; expert parallelism fits the mesh (etp = tp: ep
      divides dp_shard x cp and is a multiple of cp; etp = 1: the same with
      tp); the local batch is whole microbatches; the stages' modules name
      every layer once, in order.
  torch-csv FILE
      every cell is an action of torch.distributed.pipelining's _Action
      grammar ({stage}{F|I|B|W|...}{mb}, comms, ({a};{b})OVERLAP_F_B).

Prints "ok: ..." and exits 0, or prints the broken rule and exits 1.
"""

import argparse
import re
import subprocess
import sys
import tomllib

# Flags of Megatron-LM's megatron/training/arguments.py that the emitter
# may write, with whether each takes a value.
MEGATRON_FLAGS = {
    "--tensor-model-parallel-size": True, "--sequence-parallel": False,
    "--pipeline-model-parallel-size": True,
    "--pipeline-model-parallel-layout": True,
    "--context-parallel-size": True, "--expert-model-parallel-size": True,
    "--expert-tensor-parallel-size": True, "--num-layers": True,
    "--mtp-num-layers": True, "--micro-batch-size": True,
    "--global-batch-size": True, "--seq-length": True,
    "--overlap-moe-expert-parallel-comm": False,
    "--use-distributed-optimizer": False, "--use-torch-fsdp2": False,
    "--overlap-grad-reduce": False, "--overlap-param-gather": False,
    "--num-distributed-optimizer-instances": True,
    "--tp-comm-overlap": False, "--use-precision-aware-optimizer": False,
    "--main-grads-dtype": True, "--exp-avg-dtype": True,
    "--exp-avg-sq-dtype": True, "--recompute-granularity": True,
    "--recompute-method": True, "--recompute-num-layers": True,
    "--recompute-modules": "list", "--bf16": False, "--fp8-format": True,
}


def fail(message: str) -> None:
    print(f"launch-check: {message}")
    sys.exit(1)


def unroll(layout: str) -> list:
    """Megatron's layout string as a list of stages of layer letters."""
    text = layout.replace(",", "")
    while True:
        expanded = re.sub(r"\(([^()]+)\)\*(\d+)",
                          lambda m: m.group(1) * int(m.group(2)), text)
        if expanded == text:
            break
        text = expanded
    text = re.sub(r"(.)\*(\d+)", lambda m: m.group(1) * int(m.group(2)), text)
    stages = text.split("|")
    for stage in stages:
        for letter in stage:
            if letter not in "ELtm":
                fail(f"layout letter {letter!r} is not E, L, t or m")
    return stages


def check_layout(layout: str, pp: int, layers: int, mtp: int) -> int:
    stages = unroll(layout)
    if len(stages) % pp:
        fail(f"{len(stages)} stages do not divide among pp={pp} ranks")
    vpp = len(stages) // pp
    flat = "".join(stages)
    if not flat.startswith("E") or flat.count("E") != 1:
        fail("the embedding must be the first layer, once")
    if not flat.endswith("L") or flat.count("L") != 1:
        fail("the loss must be the last layer, once")
    if flat.count("t") != layers:
        fail(f"{flat.count('t')} decoder layers, the model has {layers}")
    if flat.count("m") != mtp:
        fail(f"{flat.count('m')} MTP layers, the model has {mtp}")
    if "m" in flat and "t" in flat[flat.index("m"):]:
        fail("a decoder layer follows an MTP layer")
    for rank in range(pp):
        for chunk in range(vpp - 1):
            if "m" in stages[chunk * pp + rank]:
                fail("MTP outside a rank's last virtual stage")
    return vpp


def megatron(args) -> None:
    script = f'source "{args.file}" && printf "%s\\n" "${{SCHEDC_MEGATRON_ARGS[@]}}"'
    run = subprocess.run(["bash", "-c", script], capture_output=True,
                         text=True)
    if run.returncode != 0:
        fail(f"bash cannot source it: {run.stderr.strip()}")
    words = run.stdout.splitlines()
    values = {}
    i = 0
    while i < len(words):
        flag = words[i]
        if flag not in MEGATRON_FLAGS:
            fail(f"{flag!r} is not a flag this check knows of Megatron-LM")
        takes = MEGATRON_FLAGS[flag]
        i += 1
        if takes == "list":
            items = []
            while i < len(words) and not words[i].startswith("--"):
                items.append(words[i])
                i += 1
            values[flag] = items
        elif takes:
            values[flag] = words[i]
            i += 1
        else:
            values[flag] = True
    size = lambda name: int(values.get(name, 1))
    pp = size("--pipeline-model-parallel-size")
    model_parallel = size("--tensor-model-parallel-size") * pp * \
        size("--context-parallel-size")
    if args.devices % model_parallel:
        fail(f"tp x pp x cp = {model_parallel} does not divide "
             f"{args.devices} devices")
    if int(values["--num-layers"]) != args.layers:
        fail("--num-layers is not the model's")
    vpp = 1
    if pp > 1:
        layout = values.get("--pipeline-model-parallel-layout")
        if not layout:
            fail("pp > 1 without a layout")
        vpp = check_layout(layout, pp, args.layers, args.mtp)
    print(f"ok: {len(values)} Megatron flags, pp={pp} vpp={vpp}")


TORCHTITAN_FIELDS = {
    "training": {"local_batch_size": int, "global_batch_size": int,
                 "seq_len": int},
    "parallelism": {
        "data_parallel_replicate_degree": int,
        "data_parallel_shard_degree": int,
        "fsdp_reshard_after_forward": str, "tensor_parallel_degree": int,
        "enable_async_tensor_parallel": bool,
        "context_parallel_degree": int, "expert_parallel_degree": int,
        "expert_tensor_parallel_degree": int,
        "pipeline_parallel_degree": int, "pipeline_parallel_schedule": str,
        "pipeline_parallel_schedule_csv": str,
        "pipeline_parallel_microbatch_size": int,
        "module_fqns_per_model_part": list},
    "activation_checkpoint": {"mode": str, "selective_ac_option": str},
}
SCHEDULES = {"GPipe", "1F1B", "Interleaved1F1B", "LoopedBFS",
             "InterleavedZeroBubble", "ZBVZeroBubble", "DualPipeV",
             "_PipelineScheduleRuntime", "PipelineScheduleMulti"}


def torchtitan(args) -> None:
    with open(args.file, "rb") as f:
        config = tomllib.load(f)
    for section, fields in config.items():
        if section not in TORCHTITAN_FIELDS:
            fail(f"[{section}] is not a section this check knows")
        for name, value in fields.items():
            kind = TORCHTITAN_FIELDS[section].get(name)
            if kind is None:
                fail(f"{section}.{name} is not a torchtitan field")
            if not isinstance(value, kind):
                fail(f"{section}.{name} is not a {kind.__name__}")
    p = config["parallelism"]
    replicate = p.get("data_parallel_replicate_degree", 1)
    shard = p.get("data_parallel_shard_degree", -1)
    tp = p.get("tensor_parallel_degree", 1)
    cp = p.get("context_parallel_degree", 1)
    pp = p.get("pipeline_parallel_degree", 1)
    if replicate * shard * tp * cp * pp != args.devices:
        fail(f"the mesh {replicate}x{shard}x{cp}x{tp}x{pp} is not "
             f"{args.devices} devices")
    if p.get("fsdp_reshard_after_forward", "default") not in (
            "default", "always", "never"):
        fail("fsdp_reshard_after_forward is not default, always or never")
    ep = p.get("expert_parallel_degree", 1)
    etp = p.get("expert_tensor_parallel_degree", 1)
    if ep > 1:
        if etp not in (1, tp):
            fail("expert_tensor_parallel_degree is neither 1 nor tp")
        unit = cp * (tp if etp == 1 else 1)
        if ep % unit or (shard * unit) % ep:
            fail(f"ep={ep} does not fit dp_shard x cp{' x tp' if etp == 1 else ''}")
    t = config["training"]
    if t["global_batch_size"] != t["local_batch_size"] * replicate * shard:
        fail("global_batch_size is not local_batch_size x data parallel")
    if pp > 1:
        if p["pipeline_parallel_schedule"] not in SCHEDULES:
            fail(f"schedule {p['pipeline_parallel_schedule']} is not PyTorch's")
        if t["local_batch_size"] % p["pipeline_parallel_microbatch_size"]:
            fail("the local batch is not whole microbatches")
        parts = p["module_fqns_per_model_part"]
        if len(parts) % pp:
            fail(f"{len(parts)} stages do not divide among pp={pp}")
        names = [n for part in parts for n in part]
        expected = (["tok_embeddings"] + [f"layers.{i}" for i in
                                          range(args.layers)] +
                    ["norm", "output"])
        if names != expected:
            fail("the stages' modules are not every layer once, in order")
    mode = config.get("activation_checkpoint", {}).get("mode", "selective")
    if mode not in ("none", "full", "selective"):
        fail(f"activation_checkpoint.mode {mode!r}")
    print(f"ok: torchtitan mesh {replicate}x{shard}x{cp}x{tp}x{pp}")


CELL = re.compile(r"(\d+)(F|I|B|W|UNSHARD|RESHARD|SEND_F|RECV_F|SEND_B|"
                  r"RECV_B|REDUCE_GRAD)(\d*)")


def torch_csv(args) -> None:
    cells = 0
    for line in open(args.file):
        for cell in line.rstrip("\n").split(","):
            cell = cell.strip()
            if not cell:
                continue
            overlap = re.fullmatch(r"\((.+);(.+)\)OVERLAP_F_B", cell)
            parts = overlap.groups() if overlap else (cell,)
            for part in parts:
                if not CELL.fullmatch(part):
                    fail(f"cell {cell!r} is not a PyTorch pipelining action")
            cells += 1
    print(f"ok: {cells} PyTorch pipelining cells")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("form", choices=("megatron", "torchtitan",
                                         "torch-csv"))
    parser.add_argument("file")
    parser.add_argument("--layers", type=int, default=0)
    parser.add_argument("--mtp", type=int, default=0)
    parser.add_argument("--devices", type=int, default=0)
    args = parser.parse_args()
    {"megatron": megatron, "torchtitan": torchtitan,
     "torch-csv": torch_csv}[args.form](args)


if __name__ == "__main__":
    main()
