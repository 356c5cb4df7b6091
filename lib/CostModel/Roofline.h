//===- Roofline.h - an operator's time on a device ----------------*- C++ -*-===//
//
// Times one operator of Operators.h on one device of a cluster
// (docs/cost-model.md, "Roofline"): a GEMM runs at the precision's
// best-shape ceiling, reduced by wave quantization of its output tiles on
// the device's SMs, and no faster than streaming its inputs from HBM, plus
// writing its output; the attention core at flash attention's measured
// efficiency for the sequence length; a memory-bound kernel at the
// measured fraction of HBM bandwidth. No kernel finishes before the host
// has launched it.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_COSTMODEL_ROOFLINE_H
#define LIB_COSTMODEL_ROOFLINE_H

#include "lib/CostModel/ClusterSpec.h"
#include "lib/CostModel/Operators.h"

namespace sched {

/// Seconds `op` takes on one device of `cluster`; `seqLen` is the length
/// the attention core runs at (for its measured efficiency).
double operatorTime(const Operator &op, const ClusterSpec &cluster,
                    double seqLen);

/// The fraction of its precision's peak a GEMM reaches at the best shape:
/// the dense ceiling, or the grouped one for grouped expert GEMMs at FP8
/// where the device's profile has a grouped measurement.
double gemmCeiling(const Operator &op, const Efficiency &efficiency);

/// FLOPs `op` executes.
double operatorFlops(const Operator &op);

/// The fraction of peak a GEMM of that shape reaches from its output tiles'
/// waves over the device's SMs (1 when the kernel has fewer tiles than
/// SMs: it splits K instead).
double waveEfficiency(double m, double n, double groups,
                      const Efficiency &efficiency);

} // namespace sched

#endif // LIB_COSTMODEL_ROOFLINE_H
