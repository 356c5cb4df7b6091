//===- Roofline.cpp - an operator's time on a device ----------------------===//

#include "lib/CostModel/Roofline.h"

#include <algorithm>
#include <cmath>
#include <optional>

using namespace sched;

double sched::operatorFlops(const Operator &op) {
  switch (op.kind) {
  case OperatorClass::Gemm:
    return 2 * op.m * op.n * op.k * op.groups;
  case OperatorClass::Attention:
    return op.flops;
  case OperatorClass::MemoryBound:
    return 0;
  }
  return 0;
}

double sched::waveEfficiency(double m, double n, double groups,
                             const Efficiency &efficiency) {
  const double sms = static_cast<double>(efficiency.multiprocessors);
  if (sms <= 1)
    return 1;
  // cuBLAS picks among tile shapes; the best of the usual three.
  const double rows = efficiency.tileRows, cols = efficiency.tileColumns;
  double best = 0;
  for (auto [tr, tc] : {std::pair{rows, cols}, std::pair{cols, rows},
                        std::pair{rows, rows}}) {
    const double tiles = groups * std::ceil(m / tr) * std::ceil(n / tc);
    if (tiles < sms)
      return 1;
    best = std::max(best, tiles / (std::ceil(tiles / sms) * sms));
  }
  return best;
}

/// Whether a measured dimension stands for the operator's: within 1%.
static bool sameDimension(double a, double b) {
  return std::abs(a - b) <= 0.01 * std::max(a, b);
}

/// A GEMM measured on this machine with the same shape and precision, if
/// calibration recorded one.
static const MeasuredGemm *measured(const Operator &op,
                                    const Efficiency &efficiency) {
  for (const MeasuredGemm &g : efficiency.gemms)
    if (op.precision == (g.fp8 ? Precision::FP8 : Precision::BF16) &&
        sameDimension(g.m, op.m) && sameDimension(g.n, op.n) &&
        sameDimension(g.k, op.k))
      return &g;
  return nullptr;
}

double sched::gemmCeiling(const Operator &op, const Efficiency &efficiency) {
  if (op.precision == Precision::BF16)
    return op.grouped && efficiency.groupedMatmul > 0
               ? efficiency.groupedMatmul
               : efficiency.matmul;
  // NVFP4: one measured figure at a transformer layer's shapes (dense; no
  // grouped NVFP4 GEMM is priced: checkTraining refuses MoE at fp4).
  if (op.precision == Precision::FP4)
    return efficiency.matmulFp4;
  // Grouped expert GEMMs measure below dense ones of the same precision
  // (DeepGEMM, torchao's grouped MXFP8: KERNELS.md 1e); the weight
  // gradient, grouped over K, lowest.
  const double grouped = op.accumulates ? efficiency.groupedMatmulFp8Weight
                                        : efficiency.groupedMatmulFp8;
  if (op.grouped && grouped > 0)
    return grouped;
  return efficiency.matmulFp8;
}

/// A BF16 grouped GEMM timed at this shape (one core's share of the rows),
/// as the seconds of its pass scaled to the operator's FLOPs; none where the
/// profile timed no such shape or not this pass. The operator's shape is
/// its pass's: the forward's (rows/groups x k)(k x n), the data
/// gradient's (rows/groups x n)(n x k), the weight gradient's
/// (k x rows/groups)(rows/groups x n).
static std::optional<double> measuredGroupedTime(const Operator &op,
                                                 const Efficiency &efficiency) {
  if (!op.grouped || op.precision != Precision::BF16)
    return std::nullopt;
  const bool weight = op.accumulates, data = op.backward && !weight;
  const double perGroup = weight ? op.k : op.m;
  const double k = weight ? op.m : data ? op.n : op.k;
  const double n = weight ? op.n : data ? op.k : op.n;
  const double rows = perGroup * op.groups / efficiency.coresPerDevice;
  for (const MeasuredGroupedGemm &g : efficiency.groupedGemms) {
    if (!sameDimension(g.rows, rows) || !sameDimension(g.k, k) ||
        !sameDimension(g.n, n) || !sameDimension(g.groups, op.groups))
      continue;
    const double seconds = weight ? g.weight : data ? g.data : g.forward;
    if (seconds <= 0)
      return std::nullopt;
    const double timed = 2 * g.rows * g.k * g.n * efficiency.coresPerDevice;
    return seconds * operatorFlops(op) / timed;
  }
  return std::nullopt;
}

static double gemmTime(const Operator &op, const ClusterSpec &cluster) {
  const Efficiency &eff = cluster.efficiency;
  const double peak = cluster.peak(op.precision);
  const double flops = operatorFlops(op);
  if (const MeasuredGemm *g = measured(op, eff))
    return flops / (peak * g->fraction);
  if (std::optional<double> seconds = measuredGroupedTime(op, eff))
    return *seconds;
  const double ceiling = gemmCeiling(op, eff);
  const double compute =
      flops / (peak * ceiling * waveEfficiency(op.m, op.n, op.groups, eff));
  // Operands stream from HBM while the tiles compute; the output (BF16, or
  // an FP32 main gradient read and written) is stored after them.
  const double element = elementBytes(op.precision);
  const double operands = op.groups * (op.m * op.k + op.k * op.n) * element;
  const double output = op.groups * op.m * op.n * (op.accumulates ? 8 : 2);
  const double bandwidth = cluster.hbmBandwidth * eff.hbm;
  return std::max(compute, operands / bandwidth) + output / bandwidth;
}

double sched::operatorTime(const Operator &op, const ClusterSpec &cluster,
                           double seqLen) {
  const Efficiency &eff = cluster.efficiency;
  double time = 0;
  switch (op.kind) {
  case OperatorClass::Gemm:
    time = gemmTime(op, cluster);
    break;
  case OperatorClass::Attention:
    time = op.flops * op.workRatio /
           (cluster.peakBf16 * eff.attentionAt(seqLen, op.latent, op.backward));
    break;
  case OperatorClass::MemoryBound:
    time = op.bytes / (cluster.hbmBandwidth * eff.hbm);
    break;
  }
  return std::max(time, eff.kernelLaunch);
}
