//===- PipelineLimits.h - the largest pipeline schedc takes -----*- C++ -*-===//
//
// The most stages and microbatches one pipeline may have, wherever it
// comes from: the sched dialect's verifiers, the generators' shape check
// (schedc generate, the Python module's generate), the importers. Header
// only, so that the dialect needs no library for it. docs/limits.md gives
// the reasons.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_LIMITS_PIPELINELIMITS_H
#define LIB_LIMITS_PIPELINELIMITS_H

#include <cstdint>

namespace sched {

/// The largest number of stages (pp x vpp) or ranks a pipeline may name;
/// anything larger is a typo, not a training job.
inline constexpr int64_t kMaxPipelineStages = int64_t(1) << 20;

/// The largest number of microbatches a pipeline may name.
inline constexpr int64_t kMaxPipelineMicrobatches = int64_t(1) << 26;

} // namespace sched

#endif // LIB_LIMITS_PIPELINELIMITS_H
