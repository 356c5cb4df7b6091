//===- InterleavedCombinedOneFOneB.cpp - interleaved combined 1F1B --------===//
//
// Megatron-Core's interleaved 1F1B with --overlap-moe-expert-parallel-comm
// (combined_1f1b_schedule_for_interleaved_pipelining): the chunks, groups
// and order of interleaved 1F1B, one more warm-up forward on every rank, and
// each step of the steady phase a forward of one chunk-microbatch run
// together with the backward of another (a sched.overlap pair), so that a
// runtime hides the expert all-to-all of the one under the computation of
// the other, layer by layer. The extra forward is what keeps every pair
// independent: without it the last rank would pair the forward of a
// microbatch's last stage with that microbatch's own backward.
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/InterleavedOrder.h"

using namespace sched;

Schedule
sched::generateInterleavedCombinedOneFOneB(const PipelineShape &shape) {
  return interleavedOneFOneBSchedule(shape, /*combined=*/true);
}
