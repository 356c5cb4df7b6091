#!/usr/bin/env python3
"""Measure where an MoE layer's time goes on one device: kernels, host, sync.

The planner prices an MoE layer from its kernels (docs/cost-model.md). On
published Megatron-Core runs of small-hidden MoE models (Qwen3-30B-A3B:
hidden 2,048, 128 experts of 768, top 8) it misses about 2 ms per layer
pass on every GPU from H100 to GB300 until full-iteration CUDA graphs
(docs/planner-findings.md): a cost that does not scale with the GPU points
at the host. This script measures that on the device it runs on, for one
device's share of an expert-parallel layer (the tokens it receives after
the dispatch; no communication):

  - device_seconds: the layer's forward and backward replayed from a CUDA
    graph (no host work): what the kernels take;
  - issue_seconds: the host's time to issue the same work eagerly, splits
    known in advance (no synchronization): what the Python and launch
    path costs;
  - eager_seconds: the same, eager, run to completion;
  - eager_sync_seconds: eager with the dropless dispatcher's device-to-host
    read of the tokens per expert before the experts run (Megatron-Core's
    MoEAlltoAllTokenDispatcher, HybridEP in blocking mode);
  - kernels: CUDA kernels per forward and backward (torch.profiler).

The experts run as Transformer Engine's GroupedLinear runs them without a
grouped kernel, one GEMM per local expert (`--experts-as loop`), or as one
grouped GEMM (`torch._grouped_mm`, `--experts-as grouped`). On a CPU it
runs in float32 and reports the eager figures only (the format and the
flow, not a GPU's figures). Prints one JSON object. Exit status 0
measured, 2 bad arguments, 3 a measurement failed.
"""

import argparse
import json
import sys
import time


def fail(message: str) -> None:
    print(f"measure_moe_layer.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def parse(argv: list) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--expert-ffn", type=int, default=768)
    p.add_argument("--experts", type=int, default=128,
                   help="routed experts of the model")
    p.add_argument("--ep", type=int, default=8,
                   help="expert-parallel ways: this device holds experts/ep")
    p.add_argument("--top-k", type=int, default=8)
    p.add_argument("--tokens", type=int, default=4096,
                   help="tokens per device per microbatch")
    p.add_argument("--experts-as", choices=("loop", "grouped"),
                   default="loop")
    p.add_argument("--repeats", type=int, default=20)
    args = p.parse_args(argv)
    for name in ("hidden", "expert_ffn", "experts", "ep", "top_k", "tokens",
                 "repeats"):
        value = getattr(args, name)
        if not 1 <= value <= 1 << 20:
            fail(f"--{name.replace('_', '-')} {value} is outside 1..2^20")
    if args.experts % args.ep:
        fail(f"--ep {args.ep} does not divide --experts {args.experts}")
    if args.top_k > args.experts:
        fail(f"--top-k {args.top_k} exceeds --experts {args.experts}")
    rows = args.tokens * args.top_k
    if rows * max(args.hidden, 2 * args.expert_ffn) > 1 << 34:
        fail(f"{args.tokens} tokens x top {args.top_k} x hidden "
                f"{args.hidden} is past 2^34 elements")
    return args


class Layer:
    """One device's share of an MoE layer after the dispatch."""

    def __init__(self, torch, args, device, dtype):
        self.torch = torch
        self.local = args.experts // args.ep
        self.rows = args.tokens * args.top_k
        h, f = args.hidden, args.expert_ffn
        gen = torch.Generator(device="cpu").manual_seed(0)

        def param(*shape):
            w = torch.randn(*shape, generator=gen) / shape[-2] ** 0.5
            return w.to(device=device, dtype=dtype).requires_grad_()

        self.router = param(h, args.experts)
        self.fc1 = param(self.local, h, 2 * f)
        self.fc2 = param(self.local, f, h)
        # What the device receives: rows routed uniformly to its experts.
        self.x = torch.randn(self.rows, h, generator=gen).to(device, dtype)
        self.expert = torch.randint(0, self.local, (self.rows,),
                                    generator=gen).to(device)
        self.splits = torch.bincount(self.expert,
                                     minlength=self.local).tolist()
        self.offs = self.offsets(self.splits)
        self.top_k = args.top_k
        self.grouped = args.experts_as == "grouped"

    def offsets(self, splits: list):
        # Built on the host and copied: inside a CUDA graph capture only the
        # precomputed ones are used.
        return self.torch.tensor(splits, dtype=self.torch.int64).cumsum(
            0).to(device=self.x.device, dtype=self.torch.int32)

    def step(self, read_counts: bool):
        torch = self.torch
        x = self.x.detach().requires_grad_()
        # The router's GEMM, top-k and softmax over what it picked, on the
        # device's own tokens (the first rows stand for them): one weight
        # per routed copy.
        logits = x[: self.rows // self.top_k] @ self.router
        probs, _ = torch.topk(logits, self.top_k, dim=-1)
        weight = torch.softmax(probs.float(), dim=-1).reshape(-1, 1).to(x.dtype)
        # Permute rows by expert; the dropless dispatcher reads the counts.
        order = torch.argsort(self.expert)
        if read_counts:
            splits = torch.bincount(self.expert,
                                    minlength=self.local).tolist()
            offs = self.offsets(splits) if self.grouped else None
        else:
            splits, offs = self.splits, self.offs
        permuted = x.index_select(0, order)
        if self.grouped:
            up = torch._grouped_mm(permuted, self.fc1, offs=offs)
            gate, lin = up.chunk(2, dim=-1)
            act = torch.nn.functional.silu(gate) * lin
            out = torch._grouped_mm(act, self.fc2, offs=offs)
        else:
            pieces = []
            for e, part in enumerate(torch.split(permuted, splits)):
                gate, lin = (part @ self.fc1[e]).chunk(2, dim=-1)
                pieces.append(
                    (torch.nn.functional.silu(gate) * lin) @ self.fc2[e])
            out = torch.cat(pieces)
        # Unpermute and weight.
        result = torch.zeros_like(x).index_add(0, order, out) * weight
        result.sum().backward()


def median(values: list) -> float:
    values = sorted(values)
    return values[len(values) // 2]


def measure(torch, args, gpu: bool) -> dict:
    device = torch.device("cuda" if gpu else "cpu")
    dtype = torch.bfloat16 if gpu else torch.float32
    layer = Layer(torch, args, device, dtype)
    sync = torch.cuda.synchronize if gpu else (lambda: None)
    for _ in range(3):
        layer.step(read_counts=True)
    sync()

    def timed(read_counts: bool) -> tuple:
        issue, total = [], []
        for _ in range(args.repeats):
            sync()
            start = time.perf_counter()
            layer.step(read_counts)
            issued = time.perf_counter()
            sync()
            issue.append(issued - start)
            total.append(time.perf_counter() - start)
        return median(issue), median(total)

    issue, eager = timed(read_counts=False)
    _, eager_sync = timed(read_counts=True)
    result = {
        "issue_seconds": issue,
        "eager_seconds": eager,
        "eager_sync_seconds": eager_sync,
    }
    if not gpu:
        result["skipped"] = ["device_seconds and kernels: no CUDA GPU"]
        return result
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        layer.step(read_counts=False)
        sync()
    result["kernels"] = sum(
        1 for e in prof.events()
        if e.device_type == torch.autograd.DeviceType.CUDA)
    # The same work from a CUDA graph: the kernels alone.
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            layer.step(read_counts=False)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        layer.step(read_counts=False)
    replay = []
    for _ in range(args.repeats):
        sync()
        start = time.perf_counter()
        graph.replay()
        sync()
        replay.append(time.perf_counter() - start)
    result["device_seconds"] = median(replay)
    return result


def main(argv: list) -> int:
    args = parse(argv)
    try:
        import torch
    except ImportError:
        print("measure_moe_layer.py: error: PyTorch is not installed",
              file=sys.stderr)
        return 2
    gpu = torch.cuda.is_available()
    if args.experts_as == "grouped" and (
            not gpu or getattr(torch, "_grouped_mm", None) is None):
        print("measure_moe_layer.py: error: --experts-as grouped needs a "
              "CUDA GPU and torch._grouped_mm", file=sys.stderr)
        return 2
    try:
        figures = measure(torch, args, gpu)
    except (RuntimeError, ValueError) as error:
        print(f"measure_moe_layer.py: measurement failed: {error}",
              file=sys.stderr)
        return 3
    out = {
        "device": torch.cuda.get_device_name() if gpu else "CPU",
        "torch": torch.__version__,
        "workload": {
            "hidden": args.hidden, "expert_ffn": args.expert_ffn,
            "experts": args.experts, "ep": args.ep,
            "local_experts": args.experts // args.ep, "top_k": args.top_k,
            "tokens": args.tokens, "experts_as": args.experts_as,
            "repeats": args.repeats,
        },
    }
    out.update(figures)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
