#!/usr/bin/env python3
"""Write PyTorch's own pipeline schedules as CSV, for comparison with schedc.

With torch installed:   dump_torch_schedules.py OUT
Without torch:          dump_torch_schedules.py OUT --pytorch-src CHECKOUT --stubs stubs
  (CHECKOUT holds torch/distributed/pipelining/{schedules,_utils}.py; the
  stub `torch` package in stubs/ supplies the few names they import.)

For every (schedule, P, vpp, M) of the grid it writes NAME.csv (the
compute-only `pipeline_order`) and NAME.comms.csv (after PyTorch's
`_add_send_recv` lowering), and one line per case to OUT/manifest.tsv
(status: ok, or the constructor's error; comms: ok, or the lowering's error).
"""
import argparse
import csv
import os
import sys
import types

# PyTorch class, schedc strategy to compare with, stage placement, vpp values.
# ScheduleInterleavedZeroBubble at vpp = 1 is also set against zb-h1, whose
# order interleaved-zb then reproduces.
GRID = [
    ("ScheduleGPipe", "gpipe", "single", [1]),
    ("Schedule1F1B", "1f1b", "single", [1]),
    ("ScheduleInterleaved1F1B", "interleaved-1f1b", "loop", [2, 4]),
    ("ScheduleLoopedBFS", "looped-bfs", "loop", [2, 4]),
    ("ScheduleInterleavedZeroBubble", "zb-h1", "loop", [1]),
    ("ScheduleInterleavedZeroBubble", "interleaved-zb", "loop", [1, 2, 4]),
    ("ScheduleZBVZeroBubble", "zb-v", "v", [2]),
    ("ScheduleDualPipeV", "dualpipe-v", "v", [2]),
]


def microbatch_counts(p):
    return sorted({p, 2 * p, 3 * p, 4 * p, p + 1, 2 * p + 1, 2 * p + 2})


def load_schedules(pytorch_src, stubs):
    if pytorch_src is None:
        from torch.distributed.pipelining import schedules
        return schedules
    sys.path.insert(0, os.path.abspath(stubs))
    import torch.distributed.pipelining as pkg  # the stub package

    pkg.__path__.append(
        os.path.join(os.path.abspath(pytorch_src), "torch", "distributed", "pipelining")
    )
    from torch.distributed.pipelining import schedules
    return schedules


def fake_stages(p, vpp, placement):
    """Rank 0's stages: the constructors read only these attributes of
    stages[0] (num_stages, group_size, group_rank), len(stages), and
    stage.submod (for the torch.compile check); they build every rank's order."""
    s = p * vpp
    if placement == "single":
        s, indices = p, [0]
    elif placement == "v":
        indices = [0, s - 1]
    else:
        indices = [c * p for c in range(vpp)]
    return [
        types.SimpleNamespace(stage_index=i, num_stages=s, group_size=p, group_rank=0,
                              is_first=i == 0, is_last=i == s - 1, submod=None)
        for i in indices
    ]


def write_rows(path, order):
    # The same writer as PipelineScheduleMulti._dump_csv.
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        for rank in order:
            writer.writerow(order[rank])


def error_text(e):
    return f"{type(e).__name__}: {e}".splitlines()[0]


def dump_one(schedules, cls_name, placement, p, vpp, m, base):
    """Returns (status, comms status)."""
    cls = getattr(schedules, cls_name)
    stages = fake_stages(p, vpp, placement)
    try:  # the constructor builds pipeline_order and, for multi-stage, the comms
        sched = cls(stages[0] if placement == "single" else stages, n_microbatches=m)
    except Exception as e:
        return "rejected: " + error_text(e), "-"
    if placement != "single":
        sched._dump_csv(base + ".csv", format="compute_only")
        sched._dump_csv(base + ".comms.csv", format="compute_comms")
        return "ok", "ok"
    write_rows(base + ".csv", sched.pipeline_order)
    # Single-stage schedules have no comms lowering of their own; use
    # PyTorch's _add_send_recv with stage s on rank s.
    try:
        order = {r: list(a) for r, a in sched.pipeline_order.items()}
        write_rows(base + ".comms.csv",
                   schedules._add_send_recv(order, stage_to_rank=lambda s: s, num_stages=p))
    except Exception as e:
        return "ok", "failed: " + error_text(e)
    return "ok", "ok"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--pytorch-src", help="checkout holding torch/distributed/pipelining")
    ap.add_argument("--stubs", help="folder holding the stub torch package")
    ap.add_argument("--pp", default="2,4,8", help="comma-separated P values")
    args = ap.parse_args()
    if (args.pytorch_src is None) != (args.stubs is None):
        ap.error("--pytorch-src and --stubs go together")
    schedules = load_schedules(args.pytorch_src, args.stubs)
    import torch

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "SOURCE.txt"), "w") as f:
        f.write(f"torch {torch.__version__}\nschedules.py {schedules.__file__}\n")
    with open(os.path.join(args.out, "manifest.tsv"), "w") as manifest:
        manifest.write("file\tpytorch\tschedc\tP\tvpp\tM\tstatus\tcomms\n")
        for cls_name, strategy, placement, vpps in GRID:
            for p in (int(x) for x in args.pp.split(",")):
                for vpp in vpps:
                    for m in microbatch_counts(p):
                        name = f"{cls_name}_p{p}_v{vpp}_m{m}"
                        status, comms = dump_one(schedules, cls_name, placement, p, vpp, m,
                                                 os.path.join(args.out, name))
                        manifest.write(f"{name}\t{cls_name}\t{strategy}\t{p}\t{vpp}\t{m}"
                                       f"\t{status}\t{comms}\n")


if __name__ == "__main__":
    main()
