//===- Efficiency.cpp - measured kernel and link efficiencies by device ----===//
//
// Every figure below is a kernel- or link-level measurement; the comment
// beside it names where it was read (../shared/reference/KERNELS.md has
// the tables, docs/cost-model.md repeats them). Fractions are of the
// device's dense datasheet peak.
//
//===----------------------------------------------------------------------===//

#include "lib/CostModel/Efficiency.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cctype>
#include <cmath>

using namespace sched;

double Efficiency::attentionAt(double seqLen, bool latent,
                               bool backward) const {
  const std::vector<AttentionPoint> &points =
      latent && !latentAttention.empty() ? latentAttention : attention;
  auto value = [&](const AttentionPoint &p) {
    return backward ? p.backward : p.forward;
  };
  if (points.empty())
    return 0.5;
  if (seqLen <= points.front().seqLen)
    return value(points.front());
  if (seqLen >= points.back().seqLen)
    return value(points.back());
  for (size_t i = 1; i < points.size(); ++i) {
    if (seqLen > points[i].seqLen)
      continue;
    const AttentionPoint &a = points[i - 1], &b = points[i];
    const double t =
        std::log(seqLen / a.seqLen) / std::log(b.seqLen / a.seqLen);
    return value(a) + t * (value(b) - value(a));
  }
  return value(points.back());
}

void Efficiency::useCudnnRelease(double release) {
  if (release <= 0)
    return;
  // One release per cost model: the curves are used up here.
  const std::vector<AttentionRelease> releases = std::move(olderAttention);
  olderAttention.clear();
  for (const AttentionRelease &older : releases) {
    if (release >= older.before)
      continue;
    attention = older.points;
    profile += llvm::formatv(", attention as {0} ran it (the stack's cuDNN "
                             "{1:F2})",
                             older.measured, release)
                   .str();
    return;
  }
}

double Efficiency::expertExchangeAt(double ranks, bool dispatch,
                                    bool fp8) const {
  auto value = [&](const ExpertExchangePoint &p) {
    if (!dispatch)
      return p.combine;
    return fp8 ? p.fp8Dispatch : p.bf16Dispatch;
  };
  const std::vector<ExpertExchangePoint> &points = expertExchange;
  if (ranks <= points.front().ranks)
    return value(points.front());
  for (size_t i = 1; i < points.size(); ++i) {
    if (ranks > points[i].ranks)
      continue;
    const ExpertExchangePoint &a = points[i - 1], &b = points[i];
    const double t = (ranks - a.ranks) / (b.ranks - a.ranks);
    return value(a) + t * (value(b) - value(a));
  }
  return value(points.back());
}

double Efficiency::computeShareBeside(int sms) const {
  if (multiprocessors <= 1 || sms <= 0)
    return 1;
  return std::max(0.1, 1 - static_cast<double>(sms) / multiprocessors);
}

/// cuDNN SDPA on H200, Llama 3.1 heads (d 128), causal BF16: forward /
/// backward 49/37% at 2k, 65/55% at 8k, 70/59% at 32k
/// (NVIDIA/cudnn-frontend sdpa_benchmark_training results, KERNELS.md 2c).
static std::vector<AttentionPoint> hopperAttention() {
  return {{2048, 0.49, 0.37}, {8192, 0.65, 0.55}, {32768, 0.70, 0.59}};
}

/// cuDNN SDPA before release 9.18 on Blackwell, through cuDNN's frontend
/// graph (what Transformer Engine's fused attention calls), Llama 3.1 405B
/// heads (128 query, 8 KV, d 128), batch 1, causal BF16, fractions of the
/// device's BF16 peak at 2k / 8k / 32k (NVIDIA/cudnn-frontend
/// benchmark/sdpa_benchmark_training/artifacts/sdpa_fp8_benchmark_results_
/// NVIDIA_{B200,GB300}.csv, the bf16 rows; KERNELS.md 2c). B200 under
/// cuDNN 9.10.2 (PyTorch 25.06 container, @9793df5): 670/500, 1248/988,
/// 1435/1175 TFLOP/s of 2250. B200 and GB300 under 9.13.1 (@0b1577c):
/// 908/545, 1384/995, 1515/1180 of 2250; GB300 1000/545, 1716/1151,
/// 1884/1350 of 2500. From 9.18 the newer curves stand: GB200 under 9.18.0
/// reaches 0.625/0.512 at 8k (@b8c0656), 9.22's 0.63/0.53 within 3%.
static std::vector<AttentionRelease> blackwellOlderAttention(bool ultra) {
  const AttentionRelease b200Cudnn910{
      9.13,
      "cuDNN 9.10.2 on a B200",
      {{2048, 0.298, 0.222}, {8192, 0.555, 0.439}, {32768, 0.638, 0.522}}};
  const AttentionRelease b200Cudnn913{
      9.18,
      "cuDNN 9.13.1 on a B200",
      {{2048, 0.403, 0.242}, {8192, 0.615, 0.442}, {32768, 0.673, 0.525}}};
  // No Blackwell Ultra run before 9.13.1 is published: its 9.13.1 curve
  // stands for the releases before it too.
  const AttentionRelease gb300Cudnn913{
      9.18,
      "cuDNN 9.13.1 on a GB300",
      {{2048, 0.400, 0.218}, {8192, 0.686, 0.460}, {32768, 0.753, 0.540}}};
  if (ultra)
    return {gb300Cudnn913};
  return {b200Cudnn910, b200Cudnn913};
}

/// TPU7x (Ironwood) splash attention, tuned, causal, 32 query and 8 KV
/// heads, BF16, of one TensorCore's 1.15e15: forward / backward at head
/// dimension 128 20.6/25.2% at 4k, 24.9/30.2% at 8k, 30.9/34.7% at 32k,
/// 34.3/37.2% at 128k; latent (d_qk 192, d_v 128) 25.4/30.1%,
/// 30.3/36.0%, 37.6/42.0%, 41.2/45.5% (openxla/tokamax
/// splash_attention/microbenchmarks.pdf @9f3f664, "Performance Benchmarks
/// on Ironwood TPU, November 13, 2025"; the same FLOP convention as ours).
static std::vector<AttentionPoint> ironwoodAttention() {
  return {{4096, 0.206, 0.252},
          {8192, 0.249, 0.302},
          {32768, 0.309, 0.347},
          {131072, 0.343, 0.372}};
}
static std::vector<AttentionPoint> ironwoodLatentAttention() {
  return {{4096, 0.254, 0.301},
          {8192, 0.303, 0.360},
          {32768, 0.376, 0.420},
          {131072, 0.412, 0.455}};
}

/// TPU7x (Ironwood) grouped expert GEMMs, BF16: tokamax's Pallas Mosaic
/// `ragged_dot` (the kernel MaxText's `use_tokamax_gmm` calls, moe.py
/// `sparse_matmul` @a0fceb5) timed on one TensorCore at every balanced
/// shape of its autotuning table (openxla/tokamax data/autotuning/tpu7x/
/// pallas_mosaic_tpu_ragged_dot.json @0a69d97): the best configuration's
/// median device time, in seconds, for the forward as a gradient runs it
/// (`return_residuals`, tokamax ops/op.py `fwd_res`), the data gradient
/// (the output gradient times the weights, contracted on n) and the weight
/// gradient (the k-by-n product over the rows). Rows, k, n, groups; 0: not
/// timed. A shape with no timed pass keeps the table's median fraction.
static std::vector<MeasuredGroupedGemm> ironwoodGroupedGemms() {
  return {{8192, 4096, 14336, 8, 1.701e-3, 0, 0},
          {65536, 7168, 2048, 256, 5.421e-3, 6.365e-3, 7.26e-3},
          {131072, 512, 7168, 256, 3.55e-3, 2.418e-3, 2.634e-3},
          {131072, 1024, 7168, 256, 5.19e-3, 6.4e-3, 5.193e-3},
          {131072, 1536, 4096, 128, 3.281e-3, 3.574e-3, 3.126e-3},
          {131072, 2048, 768, 128, 0.984e-3, 1.625e-3, 0.963e-3},
          {131072, 4096, 1536, 128, 2.795e-3, 3.382e-3, 3.148e-3},
          {131072, 7168, 512, 256, 2.174e-3, 2.461e-3, 2.651e-3},
          {131072, 7168, 1024, 256, 4.006e-3, 6.527e-3, 5.196e-3},
          {131072, 7168, 2048, 128, 6.549e-3, 7.132e-3, 7.82e-3},
          {131072, 7168, 2048, 256, 7.984e-3, 8.714e-3, 10.121e-3},
          {262144, 256, 7168, 256, 4.804e-3, 4.329e-3, 2.076e-3},
          {262144, 512, 7168, 256, 6.026e-3, 3.322e-3, 4.048e-3},
          {262144, 1024, 7168, 256, 8.764e-3, 9.574e-3, 8.06e-3},
          {262144, 1536, 4096, 128, 5.819e-3, 5.91e-3, 5.299e-3},
          {262144, 4096, 1536, 128, 4.906e-3, 5.501e-3, 5.339e-3},
          {262144, 7168, 512, 256, 3.432e-3, 3.703e-3, 4.089e-3},
          {262144, 7168, 1024, 256, 6.561e-3, 9.213e-3, 8.068e-3},
          {262144, 7168, 2048, 256, 13.087e-3, 13.238e-3, 15.624e-3},
          {327680, 2880, 2880, 128, 16.751e-3, 15.71e-3, 16.641e-3},
          {393216, 768, 2048, 128, 2.932e-3, 1.925e-3, 2.053e-3},
          {393216, 2048, 768, 128, 2.268e-3, 1.949e-3, 2.058e-3},
          {524288, 1536, 4096, 128, 10.868e-3, 9.79e-3, 9.593e-3},
          {524288, 4096, 1536, 128, 9.13e-3, 9.471e-3, 9.667e-3},
          {524288, 7168, 2048, 256, 22.702e-3, 23.485e-3, 25.905e-3}};
}

/// TPU v5p flash attention forward (tokamax's Pallas Mosaic kernel, the
/// autotuner's device-timed best), causal, head dimension 128: 29.7% at
/// 2k (batch 8), 40.6% at 4k (batch 4), 68.7% at 16k (batch 1) of 459e12
/// (openxla/tokamax data/autotuning/tpu_v5/pallas_mosaic_tpu_flash_attention
/// .json @c3661e3). No v5p backward timing is published: the forward's
/// fractions stand for it.
static std::vector<AttentionPoint> tpuV5pAttention() {
  return {{2048, 0.297, 0.297}, {4096, 0.406, 0.406}, {16384, 0.687, 0.687}};
}

/// HybridEP (DeepEP's hybrid-ep branch, the dispatcher Megatron-Core's
/// flex dispatcher runs on Blackwell) on GB200 inside one NVL72 rack, 32
/// SMs (what Megatron-Bridge's performance recipes set:
/// scripts/performance/utils/overrides.py), through its Torch API as
/// Megatron calls it, 4096 tokens of hidden 7168, top-8 of 8 local experts
/// per rank, uniform routing: FP8 dispatch / BF16 dispatch / combine
/// 455.35 / 545.71 / 568.94 GB/s on 8 ranks, 444.67 / 523.48 / 521.55 on
/// 16, 403.20 / 507.32 / 483.76 on 24, 392.70 / 484.22 / 464.54 on 32,
/// 361.13 / 479.02 / 447.89 on 36 (deepseek-ai/DeepEP hybrid-ep
/// docs/README_Hybrid-EP.md @7febc6e). Its test counts one received row per
/// token and destination rank, FP8 rows at 1 + 4/128 bytes per element
/// with their scales (tests/test_hybrid_ep.py): of NVLink 5's 900 GB/s, and
/// FP8 per FP8 element. The HGX B200's 8-rank row at 16 SMs (409.71 /
/// 535.94 / 530.86) is within 3% of GB200's at 16 SMs (421.67 / 550.10 /
/// 538.44): the same link, one table.
static std::vector<ExpertExchangePoint> blackwellExpertExchange() {
  const double link = 900, fp8Row = 1 + 4.0 / 128;
  auto point = [&](double ranks, double fp8, double bf16, double combine) {
    return ExpertExchangePoint{ranks, fp8 / fp8Row / link, bf16 / link,
                               combine / link};
  };
  return {point(8, 455.35, 545.71, 568.94), point(16, 444.67, 523.48, 521.55),
          point(24, 403.20, 507.32, 483.76), point(32, 392.70, 484.22, 464.54),
          point(36, 361.13, 479.02, 447.89)};
}

namespace {
enum class Family {
  Generic,
  A100,
  Hopper,
  B200,
  GB200,
  B300,
  TpuV4,
  TpuV5p,
  Ironwood
};
} // namespace

/// A device name lower-cased without punctuation ("H100 SXM" -> "h100sxm").
static std::string normalizedName(llvm::StringRef deviceName) {
  std::string name;
  for (char c : deviceName)
    if (std::isalnum(static_cast<unsigned char>(c)))
      name.push_back(
          static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return name;
}

static Family familyOf(llvm::StringRef deviceName) {
  const std::string name = normalizedName(deviceName);
  llvm::StringRef n(name);
  if (n.contains("a100"))
    return Family::A100;
  if (n.contains("h100") || n.contains("h800") || n.contains("h200") ||
      n.contains("gh200"))
    return Family::Hopper;
  if (n.contains("b300") || n.contains("gb300"))
    return Family::B300;
  if (n.contains("gb200") || (n.contains("b200") && n.contains("nvl")))
    return Family::GB200;
  if (n.contains("b200"))
    return Family::B200;
  if (n.contains("tpu") && n.contains("v4"))
    return Family::TpuV4;
  if (n.contains("ironwood") || n.contains("tpu7") || n.contains("tpuv7"))
    return Family::Ironwood;
  if (n.contains("tpu"))
    return Family::TpuV5p;
  return Family::Generic;
}

llvm::StringRef sched::deviceGeneration(llvm::StringRef deviceName) {
  switch (familyOf(deviceName)) {
  case Family::A100:
    return "ampere";
  case Family::Hopper:
    return "hopper";
  case Family::B200:
  case Family::GB200:
  case Family::B300:
    return "blackwell";
  case Family::TpuV4:
  case Family::TpuV5p:
  case Family::Ironwood:
    return "tpu";
  case Family::Generic:
    break;
  }
  return "other";
}

namespace {
/// A datasheet's memory label (decimal GB, or GiB for a TPU) and what the
/// device has, for devices whose name holds `part` (first match wins).
struct MemoryLabel {
  const char *part;
  double label;
  double bytes;
};
} // namespace

static constexpr double kMiB = 1 << 20;
static constexpr double kGiB = 1 << 30;

/// nvidia-smi's memory.total (docs/cost-model.md, "Usable memory", lists
/// the logs): A100 80GB 81,920 MiB and 40GB 40,960; H100 / H800 81,559;
/// H200 (141 GB) 143,771; GB200 (186 GB) 189,471; B200 (180 or 192 GB)
/// 183,359; GB300 (288 GB) 284,208; B300 (288 GB) 275,040. TPUs: the GiB
/// of Google's tables (v4 32, v5p 95, TPU7x 192).
static const MemoryLabel kMemoryLabels[] = {
    {"gb300", 288, 284208 * kMiB}, {"b300", 288, 275040 * kMiB},
    {"gb200", 186, 189471 * kMiB}, {"b200nvl", 186, 189471 * kMiB},
    {"b200", 180, 183359 * kMiB},  {"b200", 192, 183359 * kMiB},
    {"h200", 141, 143771 * kMiB},  {"h100", 80, 81559 * kMiB},
    {"h800", 80, 81559 * kMiB},    {"a100", 80, 81920 * kMiB},
    {"a100", 40, 40960 * kMiB},    {"v5p", 95, 95 * kGiB},
    {"v4", 32, 32 * kGiB},         {"ironwood", 192, 192 * kGiB},
    {"tpu7", 192, 192 * kGiB},     {"tpuv7", 192, 192 * kGiB},
};

std::optional<double> sched::labelledMemory(llvm::StringRef deviceName,
                                            double hbmBytes) {
  const std::string name = normalizedName(deviceName);
  for (const MemoryLabel &m : kMemoryLabels)
    if (llvm::StringRef(name).contains(m.part) &&
        std::abs(hbmBytes - m.label * 1e9) <= 1e-3 * m.label * 1e9)
      return m.bytes;
  return std::nullopt;
}

/// A TPU chip's PCIe link to its host, one way, as the scaling book's TPU
/// chapter gives it (jax-ml/scaling-book tpus.md @54e2c43): 16 GB/s each
/// way on v4, "typically around 1.6e10 bytes / second per TPU (3.2e10 for
/// TPU v6e)". The book names no TPU7x (Ironwood) figure and Google's TPU7x
/// page has no host-link row: its chips take the book's "per TPU" figure,
/// stated as such in docs/cost-model.md.
static double tpuHostBandwidth(llvm::StringRef deviceName) {
  const std::string name = normalizedName(deviceName);
  llvm::StringRef n(name);
  if (n.contains("v4"))
    return 16e9;
  if (n.contains("v6e") || n.contains("trillium"))
    return 3.2e10;
  return 1.6e10;
}

Efficiency sched::efficiencyForDevice(llvm::StringRef deviceName) {
  Efficiency e;
  // Memory-bound library kernels: cuDNN RMSNorm forward/backward at
  // 16384 x 4096 reaches 77-81% of HBM on H200, GB200 and GB300
  // (NVIDIA/cudnn-frontend benchmark/norms/results, KERNELS.md 3a).
  e.hbm = 0.8;
  // cudaLaunchKernel median 3 us on DeepSeek's H800 training host
  // (deepseek-ai/profile-data train.json, KERNELS.md 5).
  e.kernelLaunch = 3e-6;
  // Across domains: the inter-node shard of a hierarchical all-reduce
  // moves at ~73% of wire rate, and 16 MiB reach 64 of the 382 GB/s bus
  // bandwidth of 1-16 GiB (4 x 8 B200 over EFA, ml-engineering
  // network/README.md, KERNELS.md 4b): half-bandwidth at ~80 MB.
  e.scaleOutCollective = 0.73;
  e.scaleOutHalfBytes = 80e6;
  // DeepEP normal kernels: 153-158 GB/s of the H800's ~200 GB/s NVLink,
  // 43-58 GB/s of its 50 GB/s NIC (deepseek-ai/DeepEP docs/legacy.md,
  // KERNELS.md 4d); they run on 20 SMs in DeepSeek-V3's training (report
  // 3.2.2; Megatron-Core's moe_deepep_num_sms default 20; KERNELS.md 4e).
  e.allToAll = 0.8;
  e.allToAllMultiprocessors = 20;
  // Transformer Engine's userbuffers defaults: bulk and pipelined overlap
  // on 16 SMs (transformer_engine/pytorch/module/base.py,
  // get_default_config; KERNELS.md 4e).
  e.tensorParallelMultiprocessors = 16;
  // Usable memory, measured on an H100 80GB (PyTorch 2.11, CUDA 13.0;
  // integrations/torch/measure_memory.py, measurements/h100-2026-11-27):
  // of nvidia-smi's 81,559 MiB, 84.19e9 bytes remain allocatable once the
  // CUDA context, cuBLAS and the attention kernels are loaded, 1.333e9
  // gone. A training step of Llama-shaped layers under AdamW peaks at
  // 0.917 of the caching allocator's reservation (0.878-0.976 over five
  // workloads of 19-54 GB, median) and at 0.988 (0.976-0.999) with
  // expandable segments. The context and libraries are the same software on
  // every NVIDIA GPU; cluster presets give nvidia-smi's total as hbm_bytes.
  e.reservedMemory = 1.333e9;
  e.usableMemory = 0.917;
  e.usableMemoryExpandable = 0.988;
  switch (familyOf(deviceName)) {
  case Family::A100:
    e.profile = "A100";
    // Best-shape torch.matmul BF16: 271.2 of 312 TFLOP/s (ml-engineering
    // MAMF table, KERNELS.md 1a).
    e.matmul = 0.869;
    e.matmulFp8 = 0.869;
    e.multiprocessors = 108;
    e.tileColumns = 128;
    // FlashAttention-2 forward+backward, causal, head dim 128, A100 SXM4:
    // 99 / 155 / 189 TFLOP/s at 512 / 2k / 16k (flash-attention assets,
    // KERNELS.md 2a).
    e.attention = {
        {512, 0.317, 0.317}, {2048, 0.497, 0.497}, {16384, 0.606, 0.606}};
    // NVLink 3 all-reduce bus bandwidth: 235 GB/s at 16 GiB (0.78 of 300),
    // 106 GB/s at 16 MiB (45% of the asymptote: half at ~20 MB)
    // (ml-engineering network/README.md, KERNELS.md 4a).
    e.domainCollective = 0.78;
    e.domainHalfBytes = 20e6;
    e.collectiveMultiprocessors = 16;
    // PCIe Gen4 x16: 64 GB/s both ways (A100 datasheet).
    e.hostBandwidth = 32e9;
    break;
  case Family::Hopper:
    e.profile = "Hopper (H100, H800, H200)";
    // MAMF: BF16 794.5 of 989 (80.3%), FP8 1402.6 of 1979 (70.9%) on H100
    // SXM (KERNELS.md 1a).
    e.matmul = 0.803;
    e.matmulFp8 = 0.709;
    // DeepGEMM's contiguous grouped FP8 GEMMs on H800, 4 groups of 8192
    // rows: 68% (N 4096, K 7168) and 61% (N 7168, K 2048), their mean; its
    // k-grouped weight gradient on H200: 41-44% (KERNELS.md 1e).
    e.groupedMatmulFp8 = 0.645;
    e.groupedMatmulFp8Weight = 0.425;
    e.multiprocessors = 132;
    e.attention = hopperAttention();
    // DeepSeek-V3 MLA (d_qk 192, d_v 128) at 8k: 65/45% (same CSVs).
    e.latentAttention = {{8192, 0.65, 0.45}};
    // H200 NVLink 4 ring all-gather / reduce-scatter at 16 GiB: 361 / 363
    // GB/s of 450 (0.80); all-reduce 220 of 482 GB/s at 16 MiB (half at
    // ~19 MB) (KERNELS.md 4a).
    e.domainCollective = 0.80;
    e.domainHalfBytes = 19e6;
    // NCCL NVLS uses 16 channels (one CTA each) on SM90 (NVIDIA/nccl
    // src/transport/nvls.cc, KERNELS.md 4e).
    e.collectiveMultiprocessors = 16;
    // PCIe Gen5 x16: 128 GB/s both ways (H100 SXM datasheet).
    e.hostBandwidth = 64e9;
    break;
  case Family::B200:
  case Family::GB200:
  case Family::B300:
    e.multiprocessors = 148; // B200/B300 SKUs (KERNELS.md 1d)
    // Grouped MXFP8 GEMMs at DeepSeek-V3's expert shapes on a 1000 W B200
    // (8 groups, 131072 tokens, N 2048, K 7168): forward 2303 and data
    // gradient 2286 TFLOP/s, 51% of the 4.5 PF datasheet; weight gradient
    // 1830, 41% (pytorch/ao moe_training README, KERNELS.md 1e). The only
    // grouped measurement on Blackwell: GB200 and B300 take its fractions.
    e.groupedMatmulFp8 = 0.51;
    e.groupedMatmulFp8Weight = 0.41;
    // B200 all-reduce, 8 GPUs, ring: 682 of 900 GB/s (0.76); 255 GB/s at
    // 16 MiB of 846 at 16 GiB (half at ~37 MB) (KERNELS.md 4a). GB200 NVL72
    // without SHARP: 680 of 900 (NVIDIA slide, same section).
    e.domainCollective = 0.76;
    e.domainHalfBytes = 37e6;
    // NCCL NVLS channels on SM100 in one NVLink domain (KERNELS.md 4e).
    e.collectiveMultiprocessors = 24;
    e.expertExchange = blackwellExpertExchange();
    // cuDNN SDPA on GB200, causal BF16, Llama heads: 44/35% at 2k, 63/53%
    // at 8k, 65/49% at 32k; MLA: 56/42% at 4k, 67/45% at 16k (KERNELS.md
    // 2c). The HGX B200 runs the same chip.
    e.attention = {{2048, 0.44, 0.35}, {8192, 0.63, 0.53}, {32768, 0.65, 0.49}};
    e.latentAttention = {{4096, 0.56, 0.42}, {16384, 0.67, 0.45}};
    // A stack naming an older cuDNN (`cudnn` in a stack file) runs its
    // measured curve instead (MLA has no older measurement: it keeps its).
    e.olderAttention =
        blackwellOlderAttention(familyOf(deviceName) == Family::B300);
    // HGX boards reach the host over PCIe Gen5 x16 (64 GB/s one way); a
    // Grace superchip over NVLink-C2C, 900 GB/s both ways for its two GPUs
    // (GB200 / GB300 NVL72 datasheets): 225 GB/s one way each.
    {
      const bool grace = familyOf(deviceName) == Family::GB200 ||
                         deviceName.contains_insensitive("gb300") ||
                         (familyOf(deviceName) == Family::B300 &&
                          deviceName.contains_insensitive("nvl"));
      e.hostBandwidth = grace ? 225e9 : 64e9;
    }
    if (familyOf(deviceName) == Family::B200) {
      e.profile = "B200 (HGX)";
      // MAMF B200 SXM: BF16 77.6%, FP8 76.3% (KERNELS.md 1a).
      e.matmul = 0.776;
      e.matmulFp8 = 0.763;
    } else if (familyOf(deviceName) == Family::GB200) {
      e.profile = "GB200";
      // MAMF GB200: BF16 1822 of 2500 (72.9%), FP8 3615.6 of 5000 (72.3%).
      e.matmul = 0.729;
      e.matmulFp8 = 0.723;
    } else {
      e.profile = "Blackwell Ultra (B300, GB300)";
      // MAMF B300 SXM: BF16 78.6%, FP8 74.5% (KERNELS.md 1a).
      e.matmul = 0.786;
      e.matmulFp8 = 0.745;
      // cuDNN SDPA on GB300: 55/39% at 2k, 74/57% at 8k, 78/60% at 32k;
      // MLA 79/52% at 16k (KERNELS.md 2c).
      e.attention = {
          {2048, 0.55, 0.39}, {8192, 0.74, 0.57}, {32768, 0.78, 0.60}};
      e.latentAttention = {{16384, 0.79, 0.52}};
    }
    // MAMF's ceilings are the best over a brute-force shape search; at a
    // transformer layer's shapes Blackwell's cuBLAS lands lower. Transformer
    // Engine's GEMM profile on a B300 (hidden 4096, FFN 16384, 15,872
    // tokens; 12 GEMMs: forward, data and weight gradients) measures 1503
    // TFLOP/s in BF16 against MAMF's 1769 on the same chip (0.850), and
    // 2815 (FP8 current scaling) / 2677 (MXFP8) pre-quantized against
    // MAMF's FP8 3353 (0.840 / 0.798; the model has one FP8 switch: their
    // mean, 0.819); the quantize kernels are costed apart (KERNELS.md 1c,
    // NVIDIA/TransformerEngine gemm_profiling.rst d0067d0da). The same
    // Blackwell tensor cores in B200 and GB200 take the same factors on
    // their own MAMF ceilings. Hopper keeps MAMF, although its layers land
    // lower too: PyTorch's cuBLAS GEMMs at nine layers' shapes measured
    // 0.852-0.888 of MAMF on the H100 and H200 (BF16 and FP8 alike; the
    // best single shapes reached it). That is PyTorch eager's share, not
    // Transformer Engine's, and applied to every Hopper run it moved
    // bench/fidelity's development median the wrong way (cost-model.md,
    // "GEMMs at a layer's shapes on Hopper").
    e.matmul *= 0.850;
    e.matmulFp8 *= 0.819;
    // NVFP4 at the same layer's shapes, pre-quantized: 3.764 ms for three
    // passes of 6.39e12 FLOP, 5,093 TFLOP/s (TE gemm_profiling.rst, KERNELS.md
    // 1c): 0.340 of the 15 PF dense NVFP4 NVIDIA gives the Blackwell Ultra
    // chip (developer blog "Inside NVIDIA Blackwell Ultra"; other sources
    // rate the HGX B300 at 13-14 PF, which would make it 0.36-0.39). The
    // B200's and GB200's tensor cores take the same fraction of their own
    // 9 and 10 PF, as for BF16 and FP8; the quantize kernels are costed
    // apart (Operators.cpp, castBytes).
    e.matmulFp4 = 5.093e15 / 15e15;
    // The B200's own NVFP4 measurement replaces that transfer on Blackwell
    // (its FP4 peak is twice its FP8, the B300's three times): CUTLASS's
    // NVFP4 GEMM (vLLM's, pre-quantized) at Llama 3 8B's QKV shape,
    // 16384 x 6144 x 4096, 3,904 TFLOP/s, 0.434 of 9 PF (vllm-project/vllm
    // PR #20578 / #20646, bench_nvfp4_gemm.py, July 2025; the thread names
    // no device, its BF16 column matches the B200 tables of PR #18778 and
    // #19566). The GB200 (the same chip) takes the fraction of its 10 PF.
    if (familyOf(deviceName) != Family::B300)
      e.matmulFp4 = 3904.329e12 / 9e15;
    break;
  case Family::TpuV4:
  case Family::TpuV5p:
  case Family::Ironwood: {
    const Family family = familyOf(deviceName);
    e.profile = family == Family::TpuV4   ? "TPU v4"
                : family == Family::TpuV5p ? "TPU v5p"
                                           : "TPU7x (Ironwood)";
    e.multiprocessors = 1; // the MXUs have no SM waves
    if (family == Family::Ironwood) {
      // XLA's BF16 GEMM on one TensorCore, device-timed: 892.9 TFLOP/s at
      // 4096^3, 950.1 at 16384^3, 956.4 at 32768^3 of 1153.5 (half the
      // chip's 2307): 0.774, 0.824, 0.829 (AI-Hypercomputer/
      // accelerator-microbenchmarks Ironwood_Microbenchmarks_readme.md
      // @ee16a1c). No FP8 GEMM result is published: the MXU's FP8 rate is
      // twice its BF16 one and takes the same fraction.
      e.matmul = 0.829;
      e.matmulFp8 = 0.829;
      // Grouped expert GEMMs (tokamax's Pallas ragged_dot, the autotuner's
      // device-timed best, BF16): 0.701 at 524288 x 4096 rows over 128
      // experts of 1536, 0.685 at 4096 x 4096 over 8 of 4096, 0.624 at
      // 524288 x 7168 over 256 of 2048 (openxla/tokamax data/autotuning/
      // tpu7x/pallas_mosaic_tpu_ragged_dot.json @0a69d97): the median. No
      // FP8 grouped timing is published: FP8 takes it too.
      e.groupedMatmul = 0.685;
      e.groupedMatmulFp8 = 0.685;
      e.groupedMatmulFp8Weight = 0.685;
      // The timings themselves, at each shape tokamax timed: a grouped
      // BF16 GEMM of one of them runs as long as its pass did. Each of a
      // chip's two TensorCores is a JAX device (MaxText's
      // per_device_batch_size counts them) and takes half of its rows.
      e.groupedGemms = ironwoodGroupedGemms();
      e.coresPerDevice = 2;
      e.attention = ironwoodAttention();
      e.latentAttention = ironwoodLatentAttention();
      // An 8 GiB copy at 6421 GB/s per chip of 7380 (Ironwood/guides/hbm/
      // hbm.md @8fd8a3e, same repository).
      e.hbm = 0.87;
    } else if (family == Family::TpuV5p) {
      // XLA's BF16 jnp.matmul on a TPU v5e (the same generation's MXU; no
      // v5p table is published): 84.3% at 4096^3, 92.3% at 8192^3, timed
      // with Python dispatch (jax-ml/jax docs/pallas/tpu/matmul.ipynb
      // @1082251).
      e.matmul = 0.923;
      e.matmulFp8 = 0.923;
      e.attention = tpuV5pAttention();
    } else {
      // No kernel-level TPU v4 matmul or attention measurement was found:
      // the generic ceiling and Hopper's attention curve stand, as
      // docs/cost-model.md says.
      e.matmul = 0.8;
      e.matmulFp8 = 0.8;
      e.attention = hopperAttention();
    }
    e.domainCollective = 0.8;
    e.domainHalfBytes = 20e6;
    e.collectiveMultiprocessors = 0;
    e.allToAllMultiprocessors = 0;
    e.tensorParallelMultiprocessors = 0;
    e.tensorParallelOverlap = false;
    // XLA places buffers when it compiles the step, with no caching
    // allocator, up to its HBM budget ("Used X of Y hbm", bytes_limit):
    // 31.25 GiB of a v6e's 32 (0.977; vlasenkoalexey/
    // tpu_performance_autoresearch_wiki @b329d5f, vLLM PR #16211), 94.75
    // GiB of a TPU7x TensorCore's 96 (0.987; geeningwang/sglang-jax
    // docs/tpu7tests @5e7c740), 15.75 of a v5e's 16 (0.984). No device-named
    // v4 or v5p budget is citable: they take the lowest, 0.977.
    e.reservedMemory = 0;
    e.usableMemory = family == Family::Ironwood ? 0.987 : 0.977;
    e.usableMemoryExpandable = e.usableMemory;
    e.measuredAllocator = false;
    e.hostBandwidth = tpuHostBandwidth(deviceName);
    break;
  }
  case Family::Generic:
    e.profile = "generic (no measured profile for this device: Hopper's "
                "figures)";
    e.matmul = 0.803;
    e.matmulFp8 = 0.709;
    e.attention = hopperAttention();
    e.domainCollective = 0.80;
    e.domainHalfBytes = 19e6;
    break;
  }
  return e;
}
