//===- DualPipeV.cpp - DeepSeek's DualPipeV -------------------------------===//
//
// DualPipeV (DeepSeek's DualPipe "cut in half", deepseek-ai/DualPipe; the
// DeepSeek-V3 report): P ranks hold 2P stages in a V and, in the steady
// phase, run a forward of one chunk overlapped with a full backward of the
// other (sched.overlap), which lets a runtime hide the communication of the
// one under the computation of the other. The warm-up and the steady phase
// follow DeepSeek's order; the cool-down is list-scheduled with split
// backwards so that weight gradients fill its gaps (docs/schedules.md).
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/VShape.h"

#include <algorithm>

using namespace sched;

/// DeepSeek's warm-up and steady phase on rank `r`. The last overlap of the
/// steady phase takes an input gradient rather than a full backward: its
/// weight gradient is then left to fill the rank's first gap of the
/// cool-down.
static std::vector<VStep> dualPipeVPrefix(int32_t pp, int32_t microbatches,
                                          int32_t r, size_t &repeatsFrom) {
  auto forward = [](int8_t chunk) { return VStep{VStep::Forward, chunk, 0}; };
  // Each loop below stops after `microbatches` rounds: by then every step
  // it would still add finds its microbatches done and is skipped (the
  // list scheduler's rule), and the prefix stays linear in the microbatches
  // rather than in pp (quadratic over the ranks: 714 MB at pp 8,192).
  auto rounds = [&](int32_t count) { return std::min(count, microbatches); };
  std::vector<VStep> steps;
  // Chunk-0 forwards until the first microbatch comes back up the V.
  for (int32_t k = 0; k < rounds(2 * (pp - 1 - r)); ++k)
    steps.push_back(forward(0));
  for (int32_t k = 0; k < rounds(r + 1); ++k) {
    steps.push_back(forward(0));
    steps.push_back(forward(1));
  }
  // Zero-bubble warm-up on chunk 1: I, a waiting W, F.
  for (int32_t k = 0; k < rounds(pp - 1 - r); ++k) {
    steps.push_back({VStep::InputGrad, 1, 0});
    steps.push_back({VStep::WeightGrad, 0, 0});
    steps.push_back(forward(1));
  }
  // Steady phase: F of chunk 0 with B of chunk 1, F of chunk 1 with B of
  // chunk 0.
  repeatsFrom = steps.size();
  const int32_t steady = std::max(0, microbatches - 2 * pp + r + 1);
  for (int32_t k = 0; k < steady; ++k) {
    steps.push_back({VStep::OverlapBackward, 0, 1});
    steps.push_back({VStep::OverlapBackward, 1, 0});
  }
  if (steady > 0)
    steps.back().kind = VStep::OverlapInputGrad;
  return steps;
}

VListOptions sched::dualPipeVListOptions(const PipelineShape &shape) {
  VListOptions options;
  // DualPipeV's own peak: one stage activation more than ZB-V's 2P.
  options.activationCap = 2.0 * shape.pp + 1;
  options.priority = VPriority::InputGradFirst;
  for (int32_t r = 0; r < shape.pp; ++r)
    options.prefix.push_back(
        dualPipeVPrefix(shape.pp, shape.microbatches, r,
                        options.prefixRepeatsFrom.emplace_back()));
  return options;
}

Schedule sched::generateDualPipeV(const PipelineShape &shape) {
  return scheduleVList(shape, dualPipeVListOptions(shape));
}
