#!/usr/bin/env python3
"""Measure this machine for schedc's cost model and write a cluster file.

Times, on the device it runs on (CUDA when present, else the CPU):
  - the GEMMs of one transformer layer of MODEL at the layout's shapes
    (forward, data gradient and weight gradient of QKV, the attention
    output, the MLP or the experts, and the output layer), in BF16 and, on
    a GPU with FP8 matmuls, FP8;
  - the attention core, forward and backward, at the sequence length;
  - a memory-bound kernel (an elementwise add over a large tensor);
  - for a mixture-of-experts model on a GPU whose PyTorch has grouped
    GEMMs, the experts' grouped GEMMs (torch._grouped_mm in BF16 and
    torch._scaled_grouped_mm in FP8 with row-wise scales): the forward
    (rows grouped) and the weight gradient (the inner dimension grouped);
  - all-reduces of 1 to 64 MiB over RANKS processes (gloo on CPU, NCCL on
    GPUs) when --ranks is more than 1.
Each measurement becomes a fraction of the peak figures of the cluster file
given as --cluster (its datasheet numbers), and the file is written back
with an `efficiency` block holding them: the cost model then uses the
measured tables instead of its analytical defaults (docs/cost-model.md,
"Calibration").

On a CPU the figures describe the CPU (float32 stands in for BF16): the
run checks the format and the flow, not a GPU's numbers.

Exit status: 0 written, 2 bad input (the message names it; shapes past
what one device measures included), 3 a measurement failed. An all-reduce
fit that timing noise makes unreliable is a warning: the file is written
without its figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

from schedc_torch import strict_json


class CalibrationError(Exception):
    """Bad input: one line, exit 2."""


@dataclasses.dataclass
class Gemm:
    name: str
    m: int
    n: int
    k: int


def positive_int(obj: dict, key: str, where: str) -> int:
    value = obj.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise CalibrationError(f"{where}: {key}: expected a positive integer")
    if value > 1 << 24:
        raise CalibrationError(f"{where}: {key}: larger than 2^24")
    return value


def optional_positive_int(obj: dict, key: str, where: str,
                          default: int) -> int:
    """An optional positive integer field (at most 2^24, as the model
    reader's); `default` when absent. A string `kv_heads` was only noticed
    after seconds of measuring, as a traceback."""
    return positive_int(obj, key, where) if key in obj else default


def positive_number(obj: dict, key: str, where: str) -> float:
    value = obj.get(key)
    if (not isinstance(value, (int, float)) or isinstance(value, bool)
            or not math.isfinite(value) or value <= 0):
        raise CalibrationError(f"{where}: {key}: expected a finite number > 0")
    return float(value)


# The limits of what the cluster and model readers take (docs/limits.md):
# integers of at most 20 digits (int64), finite numbers, fractions in
# [0.001, 1] (kMinFraction), sizes and dimensions up to 2^24, tables of at
# most 4,096 entries, half-bandwidth sizes of 0 to 1e12 bytes.
MAX_INTEGER_DIGITS = 20
MIN_FRACTION = 1e-3
MAX_DIMENSION = 1 << 24
MAX_TABLE_ENTRIES = 4096
MAX_HALF_BYTES = 1e12
# The all-reduce fit is unreliable where a measured time strays from the
# fitted line by more than this share of itself.
MAX_FIT_STRAY = 0.5
# The largest operand one measurement allocates, in elements: past it a
# shape is an input error (--seq-len x --microbatch-size, or the model's
# sizes), not a measurement that fails for want of memory.
MAX_OPERAND_ELEMENTS = 1 << 32


def _parse_int(text: str) -> int:
    # Before int(): Python refuses 4,300 digits and more with a ValueError
    # of its own.
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise CalibrationError(f"a number of {len(text)} digits; integers "
                               f"have at most {MAX_INTEGER_DIGITS}")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise CalibrationError(f"the number {text[:40]} is out of range")
    return value


def _parse_constant(name: str) -> float:
    raise CalibrationError(f"{name} is not JSON")


def read_json(path: str, what: str) -> dict:
    """The JSON object in `path`: finite numbers, int64-sized integers, each
    key once; CalibrationError (one line naming the file) otherwise."""
    try:
        data = strict_json.loads(Path(path).read_text(),
                                 parse_int=_parse_int,
                                 parse_float=_parse_float,
                                 parse_constant=_parse_constant)
    except CalibrationError as e:
        raise CalibrationError(f"{path}: {e}")
    except OSError as e:
        raise CalibrationError(f"{path}: cannot read the {what}: {e.strerror}")
    except strict_json.DuplicateKeyError as e:
        where = f"{path}:{e.line}:{e.column}" if e.line else path
        raise CalibrationError(f"{where}: {e.what}")
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise CalibrationError(f"{path}: not a JSON {what}: {str(e)[:120]}")
    if not isinstance(data, dict):
        raise CalibrationError(f"{path}: the {what} is not a JSON object")
    return data


def layer_gemms(model: dict, tokens: int, tp: int) -> list[Gemm]:
    """The forward GEMMs of one layer and the output layer, per device, as
    lib/CostModel/Operators.cpp shapes them (column-parallel: all tokens,
    1/tp of the columns; row-parallel: 1/tp of the inner dimension)."""
    h = positive_int(model, "hidden", "model")
    heads = positive_int(model, "heads", "model")
    kv_heads = optional_positive_int(model, "kv_heads", "model", heads)
    head_dim = optional_positive_int(model, "head_dim", "model",
                                     max(1, h // heads))
    vocab = positive_int(model, "vocab", "model")
    if heads % tp:
        raise CalibrationError(f"--tp {tp} does not divide the {heads} heads")
    gated = model.get("mlp", "gated") == "gated"
    q = heads // tp * head_dim
    kv = max(1, kv_heads // tp) * head_dim
    gemms = [Gemm("qkv", tokens, q + 2 * kv, h),
             Gemm("attention out", tokens, h, q)]
    moe = model.get("moe")
    if isinstance(moe, dict):
        experts = positive_int(moe, "experts", "model.moe")
        top_k = positive_int(moe, "top_k", "model.moe")
        width = optional_positive_int(
            moe, "expert_ffn_hidden", "model.moe",
            optional_positive_int(model, "ffn_hidden", "model", 4 * h))
        rows = max(1, tokens // tp * top_k // experts)
        gemms += [Gemm("experts fc1", rows, (2 if gated else 1) * width, h),
                  Gemm("experts fc2", rows, h, width)]
    else:
        ffn = positive_int(model, "ffn_hidden", "model") // tp
        gemms += [Gemm("fc1", tokens, (2 if gated else 1) * ffn, h),
                  Gemm("fc2", tokens, h, ffn)]
    gemms.append(Gemm("output", tokens, vocab // tp, h))
    # Backward: data gradient (m x n)(n x k), weight gradient (k x m)(m x n).
    backward = []
    for g in gemms:
        backward.append(Gemm(g.name + " dgrad", g.m, g.k, g.n))
        backward.append(Gemm(g.name + " wgrad", g.k, g.n, g.m))
    for g in gemms:
        check_operand(f"GEMM {g.name} ({g.m} x {g.n} x {g.k})",
                      max(g.m * g.k, g.k * g.n, g.m * g.n))
    return gemms + backward


def check_operand(what: str, elements: int) -> None:
    """Refuses a measurement whose largest operand is past
    MAX_OPERAND_ELEMENTS: an input error, where allocating it failed as a
    measurement (exit 3)."""
    if elements > MAX_OPERAND_ELEMENTS:
        raise CalibrationError(
            f"{what}: an operand of {elements} elements, more than the 2^32 "
            f"one device measures (--seq-len x --microbatch-size, --tp or "
            f"the model's sizes)")


def median_seconds(run: Callable[..., None], sync: Callable[[], None],
                   repeats: int, prepare: Optional[Callable[[], object]] = None
                   ) -> float:
    """The median of `repeats` timed calls of `run` after one untimed one;
    `prepare`, untimed before each call, makes run's argument."""
    def once() -> float:
        args = () if prepare is None else (prepare(),)
        sync()
        start = time.perf_counter()
        run(*args)
        sync()
        return time.perf_counter() - start
    once()
    return statistics.median(once() for _ in range(repeats))


def fraction(measured: float, peak: float, what: str) -> float:
    value = measured / peak
    if value > 1:
        raise CalibrationError(
            f"{what}: measured {measured:.4g}/s exceeds the cluster's peak "
            f"{peak:.4g}/s; is --cluster this machine's datasheet?")
    return value


def floor_fractions(efficiency: dict) -> list[str]:
    """Raises the measured fractions below MIN_FRACTION to it, in place, and
    returns a warning line for each: the cluster reader refuses a fraction
    below 0.001 (a device that does no work), and a loaded machine measures
    one now and then (the CPU attention backward at 0.0006 of the peak)."""
    lines = []

    def floor(entry: dict, key: str, what: str) -> None:
        value = entry.get(key)
        if isinstance(value, float) and value < MIN_FRACTION:
            lines.append(f"{what}: measured {value:.3g} of the peak, below "
                         f"the cluster reader's {MIN_FRACTION:g}; written "
                         f"as {MIN_FRACTION:g} (the measurement is "
                         f"unreliable on this machine)")
            entry[key] = MIN_FRACTION

    for key in ("matmul", "matmul_fp8", "hbm", "grouped_matmul_fp8",
                "grouped_matmul_fp8_weight"):
        floor(efficiency, key, key)
    for g in efficiency.get("gemms", []):
        floor(g, "fraction", f"GEMM {g.get('op')} {g.get('dtype')}")
    for point in efficiency.get("attention_table", []):
        for key in ("forward", "backward"):
            floor(point, key, f"attention {key} at {point['seq_len']}")
    return lines


def measure_gemms(torch, device, gemms: list[Gemm], dtype, label: str,
                  peak: float, repeats: int, sync) -> list[dict]:
    table = []
    for g in gemms:
        a = torch.randn(g.m, g.k, device=device, dtype=dtype)
        b = torch.randn(g.k, g.n, device=device, dtype=dtype)
        seconds = median_seconds(lambda: torch.matmul(a, b), sync, repeats)
        flops = 2.0 * g.m * g.n * g.k / seconds
        table.append({"name": g.name, "m": g.m, "n": g.n, "k": g.k,
                      "dtype": label,
                      "fraction": round(fraction(flops, peak, g.name), 6)})
    return table


def measure_attention(torch, device, dtype, seq: int, heads: int, dim: int,
                      peak: float, repeats: int, sync) -> dict:
    """Causal attention of one sequence: forward and backward FLOPs counted
    on the unmasked half (backward 2.5x the forward), as the cost model and
    cudnn-frontend count them."""
    fn = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    q = torch.randn(1, heads, seq, dim, device=device, dtype=dtype,
                    requires_grad=True)
    k = torch.randn_like(q, requires_grad=True)
    v = torch.randn_like(q, requires_grad=True)
    mask = torch.ones(seq, seq, device=device, dtype=torch.bool).tril()

    def forward():
        if fn is not None:
            return fn(q, k, v, is_causal=True)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(dim)
        scores = scores.masked_fill(~mask, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)

    out = forward()
    grad = torch.randn_like(out)
    fwd = median_seconds(forward, sync, repeats)
    # The backward timed alone, after an untimed forward: the difference of
    # two medians (forward and backward, forward) goes to zero or below
    # when a loaded machine slows the forward-only samples.
    bwd = median_seconds(lambda out: torch.autograd.backward(out, grad),
                         sync, repeats, prepare=forward)
    flops = 2 * 2.0 * heads * dim * seq * seq / 2
    return {"seq_len": seq,
            "forward": round(fraction(flops / fwd, peak, "attention forward"), 6),
            "backward": round(fraction(2.5 * flops / bwd, peak,
                                       "attention backward"), 6)}


def measure_bandwidth(torch, device, dtype, bandwidth: float, repeats: int,
                      sync, elements: int) -> float:
    x = torch.randn(elements, device=device, dtype=dtype)
    y = torch.randn_like(x)
    out = torch.empty_like(x)
    seconds = median_seconds(lambda: torch.add(x, y, out=out), sync, repeats)
    moved = 3 * elements * x.element_size()
    return fraction(moved / seconds, bandwidth, "memory-bound add")


def measure_grouped(torch, device, model: dict, tokens: int, tp: int,
                    ep: int, bf16_peak: float, fp8_peak: float, repeats: int,
                    sync) -> tuple[dict, list[str]]:
    """The routed experts' grouped GEMMs of one device of an `ep`-way
    expert-parallel group (fc1's shape): it holds `experts/ep` experts and
    receives `tokens·top_k·ep/experts` rows for each (DeepSeek-V3 at ep 64:
    4 groups of 8,192 rows, DeepGEMM's measured shape). The forward groups
    the rows, the weight gradient the inner dimension.
    Returns the cluster-file keys measured and a line per kernel PyTorch
    lacks or refuses (the run goes on without it)."""
    moe = model["moe"]
    experts = positive_int(moe, "experts", "model.moe")
    top_k = positive_int(moe, "top_k", "model.moe")
    h = model["hidden"]
    width = optional_positive_int(
        moe, "expert_ffn_hidden", "model.moe",
        optional_positive_int(model, "ffn_hidden", "model", 4 * h))
    gated = model.get("mlp", "gated") == "gated"
    n = (2 if gated else 1) * width // tp
    groups = experts // ep
    per_group = max(16, (tokens * top_k * ep // experts) // 16 * 16)
    if groups * per_group * max(h, width) > 1 << 32:
        raise CalibrationError(f"--ep {ep}: {groups} experts of {per_group} "
                               f"rows are more than one device measures")
    rows = groups * per_group
    offs = torch.arange(per_group, rows + 1, per_group, device=device,
                        dtype=torch.int32)
    flops = 2.0 * rows * n * h
    found: dict = {}
    skipped: list[str] = []

    def attempt(label: str, peak: float, run: Callable[[], None]) -> None:
        try:
            seconds = median_seconds(run, sync, repeats)
        except (RuntimeError, TypeError, AttributeError) as e:
            skipped.append(f"{label}: {str(e).splitlines()[0][:160]}")
            return
        found[label] = round(fraction(flops / seconds, peak, label), 6)

    bf16 = torch.bfloat16
    grouped = getattr(torch, "_grouped_mm", None)
    if grouped is None:
        skipped.append("grouped bf16: torch._grouped_mm missing")
    else:
        x = torch.randn(rows, h, device=device, dtype=bf16)
        w = torch.randn(groups, n, h, device=device, dtype=bf16).transpose(-2, -1)
        dy = torch.randn(rows, n, device=device, dtype=bf16)
        attempt("grouped_matmul_bf16", bf16_peak,
                lambda: grouped(x, w, offs=offs, out_dtype=bf16))
        attempt("grouped_matmul_bf16_weight", bf16_peak,
                lambda: grouped(x.t(), dy, offs=offs, out_dtype=bf16))
    scaled = getattr(torch, "_scaled_grouped_mm", None)
    fp8 = getattr(torch, "float8_e4m3fn", None)
    if scaled is None or fp8 is None or not fp8_peak:
        skipped.append("grouped fp8: torch._scaled_grouped_mm or an FP8 "
                       "peak missing")
    else:
        f32 = torch.float32
        x8 = torch.randn(rows, h, device=device).to(fp8)
        w8 = torch.randn(groups, n, h, device=device).to(fp8).transpose(-2, -1)
        attempt("grouped_matmul_fp8", fp8_peak,
                lambda: scaled(x8, w8, torch.ones(rows, device=device, dtype=f32),
                               torch.ones(groups, n, device=device, dtype=f32),
                               offs=offs, out_dtype=bf16))
        xt8 = torch.randn(h, rows, device=device).to(fp8)
        dy8 = torch.randn(n, rows, device=device).to(fp8).t()
        attempt("grouped_matmul_fp8_weight", fp8_peak,
                lambda: scaled(xt8, dy8,
                               torch.ones(groups * h, device=device, dtype=f32),
                               torch.ones(groups * n, device=device, dtype=f32),
                               offs=offs, out_dtype=bf16))
    return found, skipped


def collective_worker(rank: int, ranks: int, store_path: str, sizes: list,
                      repeats: int, out_path: str) -> None:
    import torch
    import torch.distributed as dist
    store = dist.FileStore(store_path, ranks)
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend, store=store, rank=rank, world_size=ranks)
    device = torch.device("cuda", rank) if backend == "nccl" else "cpu"
    times = {}
    for size in sizes:
        x = torch.ones(size // 4, dtype=torch.float32, device=device)
        dist.all_reduce(x)
        samples = []
        for _ in range(repeats):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(x)
            if backend == "nccl":
                torch.cuda.synchronize()
            samples.append(time.perf_counter() - start)
        times[size] = statistics.median(samples)
    if rank == 0:
        Path(out_path).write_text(json.dumps(times))
    dist.destroy_process_group()


def measure_collectives(
        ranks: int, repeats: int, domain_bandwidth: float,
        sizes: list) -> tuple[Optional[tuple[float, float]], str]:
    """All-reduce times over `ranks` processes, fitted by fit_all_reduce."""
    import torch.multiprocessing as mp
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "times.json")
        mp.spawn(collective_worker,
                 args=(ranks, os.path.join(tmp, "store"), sizes, repeats, out),
                 nprocs=ranks, join=True)
        times = {int(k): v for k, v in json.loads(Path(out).read_text()).items()}
    return fit_all_reduce(times, ranks, domain_bandwidth)


def fit_all_reduce(times: dict, ranks: int,
                   bandwidth: float) -> tuple[Optional[tuple[float, float]],
                                              str]:
    """Fits all-reduce `times` (seconds by bytes) to t = c0 + c1·S and
    returns ((e, S½), "") for the cost model's t = 2(n-1)/n · (S + S½) /
    (B · e), or (None, why) when the fit is unreliable: the times do not
    grow with the size, a measured time strays from the line by more than
    MAX_FIT_STRAY of itself, or the fit gives a fraction or a half size
    the cluster reader refuses. Timing noise does that on a loaded machine
    (gloo on loopback, small sizes): it is a warning, not a failure.
    The line is Theil-Sen's (the median of the pairwise slopes, then the
    median intercept they leave), which one stretched size tilts less
    than least squares does."""
    xs = sorted(times)
    if len(xs) < 2:
        return None, "fewer than two sizes measured"
    c1 = statistics.median((times[b] - times[a]) / (b - a)
                           for i, a in enumerate(xs) for b in xs[i + 1:])
    if not c1 > 0:
        return None, "the time does not grow with the size"
    c0 = max(0.0, statistics.median(times[x] - c1 * x for x in xs))
    stray = max(abs(times[x] - (c0 + c1 * x)) / times[x] for x in xs)
    if stray > MAX_FIT_STRAY:
        return None, (f"a measured time strays {stray:.0%} from the fitted "
                      f"line, more than {MAX_FIT_STRAY:.0%}")
    efficiency = 2 * (ranks - 1) / ranks / c1 / bandwidth
    if not MIN_FRACTION <= efficiency <= 1:
        return None, (f"it gives {efficiency:.3g} of the domain bandwidth, "
                      f"outside [{MIN_FRACTION:g}, 1]")
    half = c0 / c1
    if not 0 <= half <= MAX_HALF_BYTES:
        return None, (f"it gives a half-bandwidth size of {half:.3g} bytes, "
                      f"outside [0, {MAX_HALF_BYTES:g}]")
    return (efficiency, half), ""


def measured_stack(torch, gpu: bool, ranks: int) -> dict:
    """The software the figures were measured under (issue 27: a figure is
    a fact of its stack): PyTorch eager calling cuBLAS, SDPA and
    _scaled_mm, with the library versions it was built with."""
    stack = {"name": "pytorch-eager", "torch": torch.__version__,
             "gemm": "torch.matmul", "fp8_gemm": "torch._scaled_mm",
             "attention": "torch.nn.functional.scaled_dot_product_attention"}
    if gpu:
        stack["cuda"] = str(torch.version.cuda)
        cudnn = torch.backends.cudnn.version()
        if cudnn:
            stack["cudnn"] = str(cudnn)
    if ranks > 1:
        backend = "nccl" if gpu else "gloo"
        stack["collectives"] = f"torch.distributed all_reduce ({backend})"
        if gpu:
            try:
                stack["nccl"] = ".".join(
                    str(v) for v in torch.cuda.nccl.version())
            except (AttributeError, RuntimeError, TypeError):
                pass
    return stack


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(
        prog="calibrate.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cluster", required=True, metavar="CLUSTER.json",
                        help="the cluster file whose datasheet peaks the "
                             "measurements are fractions of")
    parser.add_argument("--model", required=True, metavar="MODEL.json",
                        help="the model whose GEMM shapes are measured")
    parser.add_argument("--seq-len", type=int, default=4096)
    parser.add_argument("--tp", type=int, default=1,
                        help="tensor-parallel ways the shapes are split")
    parser.add_argument("--microbatch-size", type=int, default=1)
    parser.add_argument("--ep", type=int, default=1,
                        help="expert-parallel ways the grouped expert GEMMs "
                             "are shaped for (a MoE model on a GPU)")
    parser.add_argument("--ranks", type=int, default=1,
                        help="processes for the all-reduce measurement "
                             "(1: none)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("-o", "--output", required=True, metavar="OUT.json")
    args = parser.parse_args(argv)
    try:
        for name in ("seq_len", "tp", "microbatch_size", "ep", "ranks",
                     "repeats"):
            value = getattr(args, name)
            if not 1 <= value <= 1 << 20:
                raise CalibrationError(
                    f"--{name.replace('_', '-')} must be in [1, 2^20], got {value}")
        if args.ranks > 64:
            raise CalibrationError("--ranks must be at most 64")
        cluster = read_json(args.cluster, "cluster")
        model = read_json(args.model, "model")
        device_desc = cluster.get("device")
        if not isinstance(device_desc, dict):
            raise CalibrationError(f"{args.cluster}: device: missing")
        peaks = device_desc.get("peak_flops")
        if not isinstance(peaks, dict):
            raise CalibrationError(f"{args.cluster}: device.peak_flops: missing")
        bf16_peak = positive_number(peaks, "bf16", "device.peak_flops")
        fp8_peak = peaks.get("fp8") or 0
        hbm = positive_number(device_desc, "hbm_bandwidth", "device")
        domain_bw = positive_number(cluster, "domain_bandwidth", "cluster")
        tokens = args.seq_len * args.microbatch_size
        gemms = layer_gemms(model, tokens, args.tp)
        heads = model["heads"] // args.tp
        head_dim = optional_positive_int(
            model, "head_dim", "model", max(1, model["hidden"] // model["heads"]))
        # The attention core holds q, k, v of heads x seq x dim and, without
        # a fused kernel, the seq x seq scores and mask.
        check_operand(f"attention at --seq-len {args.seq_len}",
                      max(heads * args.seq_len * head_dim,
                          heads * args.seq_len * args.seq_len))
        moe = model.get("moe")
        if not isinstance(moe, dict):
            if args.ep > 1:
                raise CalibrationError(
                    f"--ep {args.ep}: {args.model} has no experts")
        elif positive_int(moe, "experts", "model.moe") % args.ep:
            raise CalibrationError(f"--ep {args.ep} does not divide the "
                                   f"{moe['experts']} experts")
    except CalibrationError as e:
        print(f"calibrate.py: error: {e}", file=sys.stderr)
        return 2

    try:
        import torch
    except ImportError as e:
        print(f"calibrate.py: error: cannot import torch ({e}); run with "
              f"Debian's /usr/bin/python3", file=sys.stderr)
        return 2
    gpu = torch.cuda.is_available()
    device = torch.device("cuda" if gpu else "cpu")
    sync = torch.cuda.synchronize if gpu else (lambda: None)
    dtype = torch.bfloat16 if gpu else torch.float32
    name = torch.cuda.get_device_name() if gpu else "CPU"
    try:
        with torch.no_grad():
            table = measure_gemms(torch, device, gemms, dtype, "bf16",
                                  bf16_peak, args.repeats, sync)
        fp8 = getattr(torch, "float8_e4m3fn", None)
        if gpu and fp8 is not None and fp8_peak and hasattr(torch, "_scaled_mm"):
            for g in gemms:
                a = torch.randn(g.m, g.k, device=device).to(fp8)
                b = torch.randn(g.n, g.k, device=device).to(fp8).t()
                one = torch.ones((), device=device)
                seconds = median_seconds(
                    lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one,
                                             out_dtype=torch.bfloat16),
                    sync, args.repeats)
                table.append({"name": g.name, "m": g.m, "n": g.n, "k": g.k,
                              "dtype": "fp8", "fraction": round(fraction(
                                  2.0 * g.m * g.n * g.k / seconds, fp8_peak,
                                  g.name), 6)})
        attention = [measure_attention(torch, device, dtype, seq, heads,
                                       head_dim, bf16_peak, args.repeats, sync)
                     for seq in sorted({max(128, args.seq_len // 4),
                                        args.seq_len})]
        hbm_fraction = measure_bandwidth(torch, device, dtype, hbm,
                                         args.repeats, sync,
                                         (1 << 28) if gpu else (1 << 22))
        efficiency = {
            "profile": f"calibrated: {name}, "
                       f"{datetime.date.today().isoformat()}, torch "
                       f"{torch.__version__}"
                       + ("" if gpu else " (float32 stands in for bf16)"),
            "matmul": max(e["fraction"] for e in table if e["dtype"] == "bf16"),
            "gemms": [{k: v for k, v in e.items() if k != "name"} | {"op": e["name"]}
                      for e in table],
            "attention_table": attention,
            "hbm": round(hbm_fraction, 6),
        }
        efficiency["stack"] = measured_stack(torch, gpu, args.ranks)
        fp8_rows = [e["fraction"] for e in table if e["dtype"] == "fp8"]
        if fp8_rows:
            efficiency["matmul_fp8"] = max(fp8_rows)
        grouped_lines: list[str] = []
        if gpu and isinstance(model.get("moe"), dict):
            grouped, grouped_lines = measure_grouped(
                torch, device, model, tokens, args.tp, args.ep, bf16_peak,
                fp8_peak,
                args.repeats, sync)
            # The cost model reads the FP8 figures; the BF16 ones are
            # reported (a BF16 grouped GEMM keeps the dense ceiling).
            for key in ("grouped_matmul_fp8", "grouped_matmul_fp8_weight"):
                if key in grouped:
                    efficiency[key] = grouped[key]
            for key, value in grouped.items():
                grouped_lines.append(f"{key}: {value:.3f} of the peak")
        collective = ""
        if args.ranks > 1:
            sizes = [1 << 20, 4 << 20, 16 << 20] + ([64 << 20] if gpu else [])
            fit, why = measure_collectives(args.ranks, args.repeats,
                                           domain_bw, sizes)
            if fit is None:
                print(f"calibrate.py: warning: the all-reduce fit is "
                      f"unreliable on this machine ({why}); "
                      f"domain_collective and domain_half_bytes are not "
                      f"written, the cost model keeps its own",
                      file=sys.stderr)
                collective = ", all-reduce not fitted (unreliable)"
            else:
                efficiency["domain_collective"] = round(fit[0], 6)
                efficiency["domain_half_bytes"] = round(fit[1])
                collective = (f", all-reduce {fit[0]:.3f} of the domain "
                              f"bandwidth")
    except CalibrationError as e:
        print(f"calibrate.py: error: {e}", file=sys.stderr)
        return 2
    except (RuntimeError, OSError) as e:
        print(f"calibrate.py: measurement failed: {str(e).splitlines()[0][:200]}",
              file=sys.stderr)
        return 3

    for line in floor_fractions(efficiency):
        print(f"calibrate.py: warning: {line}", file=sys.stderr)
    cluster["efficiency"] = efficiency
    try:
        # Only finite numbers: NaN and Infinity are not JSON.
        text = json.dumps(cluster, indent=1, allow_nan=False) + "\n"
    except ValueError:
        print("calibrate.py: measurement failed: a measured figure is not a "
              "finite number", file=sys.stderr)
        return 3
    try:
        Path(args.output).write_text(text)
    except OSError as e:
        print(f"calibrate.py: error: cannot write {args.output}: {e.strerror}",
              file=sys.stderr)
        return 2
    for line in grouped_lines:
        print(f"calibrate.py: {line}")
    print(f"calibrate.py: wrote {args.output}: {len(table)} GEMMs (best "
          f"{efficiency['matmul']:.3f} of the bf16 peak), attention at "
          f"{', '.join(str(a['seq_len']) for a in attention)}, memory-bound "
          f"{hbm_fraction:.3f} of HBM{collective}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
