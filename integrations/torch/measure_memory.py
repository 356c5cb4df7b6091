#!/usr/bin/env python3
"""Measure how much of a GPU's memory a PyTorch training process can use.

Prints one JSON object with, for the GPU it runs on:
  - total_bytes: the device's memory as the driver reports it
    (torch.cuda.mem_get_info), which is what a cluster file's hbm_bytes
    stands for;
  - context_bytes: what the CUDA context takes (the driver's free memory
    after the first allocation, less that allocation);
  - library_bytes: what cuBLAS and the attention kernels add on first use
    (workspaces, loaded kernel images), outside PyTorch's allocator;
  - allocatable_bytes: how much PyTorch's allocator can then hold (1 GiB
    blocks until the first refusal, then 32 MiB blocks);
  - fragmentation: a training step's peak allocated over peak reserved
    bytes (PyTorch's caching allocator), for a stack of Llama-shaped
    layers trained with AdamW, with the default allocator and with
    expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,
    measured in a process of its own).

The cost model's usable memory is total less the fixed reserve, times the
fragmentation (docs/cost-model.md, "Usable memory"). Needs a CUDA GPU;
exit status 0 measured, 2 no GPU or bad arguments, 3 a measurement failed.
"""

import argparse
import json
import os
import subprocess
import sys

GIB = 1 << 30


def fragmentation(torch, layers: int, hidden: int, ffn: int, heads: int,
                  seq: int, batch: int, steps: int) -> dict:
    """Peak allocated / peak reserved over the steps after the first."""
    device = torch.device("cuda")
    dtype = torch.bfloat16
    nn = torch.nn
    functional = torch.nn.functional

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1 = nn.LayerNorm(hidden, dtype=dtype)
            self.qkv = nn.Linear(hidden, 3 * hidden, bias=False, dtype=dtype)
            self.out = nn.Linear(hidden, hidden, bias=False, dtype=dtype)
            self.norm2 = nn.LayerNorm(hidden, dtype=dtype)
            self.fc1 = nn.Linear(hidden, 2 * ffn, bias=False, dtype=dtype)
            self.fc2 = nn.Linear(ffn, hidden, bias=False, dtype=dtype)

        def forward(self, x):
            b, s, _ = x.shape
            q, k, v = self.qkv(self.norm1(x)).view(
                b, s, 3, heads, hidden // heads).permute(2, 0, 3, 1, 4)
            a = functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.out(a.transpose(1, 2).reshape(b, s, hidden))
            gate, up = self.fc1(self.norm2(x)).chunk(2, dim=-1)
            return x + self.fc2(functional.silu(gate) * up)

    model = nn.Sequential(*[Layer() for _ in range(layers)]).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(steps):
        if step == 1:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        x = torch.randn(batch, seq, hidden, device=device, dtype=dtype,
                        requires_grad=True)
        model(x).float().square().mean().backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    allocated = torch.cuda.max_memory_allocated()
    reserved = torch.cuda.max_memory_reserved()
    return {"peak_allocated_bytes": allocated, "peak_reserved_bytes": reserved,
            "fraction": round(allocated / reserved, 6)}


def fixed_reserve(torch) -> dict:
    device = torch.device("cuda")
    first = torch.empty(1 << 20, dtype=torch.uint8, device=device)
    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()
    reserved = torch.cuda.memory_reserved()
    context = total - free - reserved
    # First use of cuBLAS (BF16 and FP8 GEMMs) and of the attention kernels.
    a = torch.randn(4096, 4096, device=device, dtype=torch.bfloat16)
    (a @ a).sum().item()
    q = torch.randn(1, 8, 1024, 128, device=device, dtype=torch.bfloat16,
                    requires_grad=True)
    torch.nn.functional.scaled_dot_product_attention(
        q, q, q, is_causal=True).sum().backward()
    if hasattr(torch, "_scaled_mm") and hasattr(torch, "float8_e4m3fn"):
        f = a.to(torch.float8_e4m3fn)
        one = torch.ones((), device=device)
        torch._scaled_mm(f, f.t(), scale_a=one, scale_b=one,
                         out_dtype=torch.bfloat16)
    torch.cuda.synchronize()
    del a, q, first
    free2, _ = torch.cuda.mem_get_info()
    library = (total - free2 - torch.cuda.memory_reserved()) - context
    torch.cuda.empty_cache()
    blocks = []
    for size in (GIB, 32 << 20):
        while True:
            try:
                blocks.append(torch.empty(size, dtype=torch.uint8,
                                          device=device))
            except torch.cuda.OutOfMemoryError:
                break
    allocatable = sum(b.numel() for b in blocks)
    del blocks
    torch.cuda.empty_cache()
    return {"device": torch.cuda.get_device_name(), "total_bytes": total,
            "context_bytes": context, "library_bytes": library,
            "allocatable_bytes": allocatable,
            "reserve_bytes": total - allocatable}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="measure_memory.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--ffn", type=int, default=14336)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--seq-len", type=int, default=8192)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--fragmentation-only", action="store_true",
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    for name in ("layers", "hidden", "ffn", "heads", "seq_len", "batch",
                 "steps"):
        if not 1 <= getattr(args, name) <= 1 << 20:
            print(f"measure_memory.py: error: --{name.replace('_', '-')} must "
                  f"be in [1, 2^20]", file=sys.stderr)
            return 2
    if args.steps < 2 or args.hidden % args.heads:
        print("measure_memory.py: error: --steps must be at least 2 and "
              "--heads must divide --hidden", file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError as e:
        print(f"measure_memory.py: error: cannot import torch ({e})",
              file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("measure_memory.py: error: needs a CUDA GPU", file=sys.stderr)
        return 2
    shape = (args.layers, args.hidden, args.ffn, args.heads, args.seq_len,
             args.batch, args.steps)
    try:
        if args.fragmentation_only:
            print(json.dumps(fragmentation(torch, *shape)))
            return 0
        result = fixed_reserve(torch)
        result["workload"] = dict(zip(
            ("layers", "hidden", "ffn", "heads", "seq_len", "batch", "steps"),
            shape))
        result["fragmentation_default"] = fragmentation(torch, *shape)
        # Hand the memory back before the second process measures.
        torch.cuda.empty_cache()
        env = dict(os.environ,
                   PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True")
        child = subprocess.run(
            [sys.executable, __file__, "--fragmentation-only"] + argv,
            env=env, capture_output=True, text=True, timeout=600)
        if child.returncode != 0:
            raise RuntimeError(child.stderr.strip().splitlines()[-1]
                               if child.stderr.strip() else "child failed")
        result["fragmentation_expandable"] = json.loads(child.stdout)
        result["torch"] = torch.__version__
        result["cuda"] = torch.version.cuda
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        print(f"measure_memory.py: measurement failed: "
              f"{str(e).splitlines()[0][:200]}", file=sys.stderr)
        return 3
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
