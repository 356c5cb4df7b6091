//===- InterleavedOrder.h - the chunk order of interleaving -----*- C++ -*-===//
//
// The order in which the interleaved strategies (interleaved-1f1b,
// interleaved-combined-1f1b, interleaved-zb) walk the chunks of a rank:
// microbatch groups, forwards chunk by chunk, backwards chunk by chunk in
// reverse. Internal to lib/Generate.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_GENERATE_INTERLEAVEDORDER_H
#define LIB_GENERATE_INTERLEAVEDORDER_H

#include "lib/Generate/Strategy.h"

#include <vector>

namespace sched {

/// One chunk of one microbatch, the unit of the interleaved order.
struct ChunkMicrobatch {
  int32_t chunk;
  int32_t microbatch;
};

/// The order every rank visits its chunks in, and the largest group.
struct InterleavedOrder {
  std::vector<ChunkMicrobatch> forwards;
  std::vector<ChunkMicrobatch> backwards;
  int32_t largestGroup = 0;
};

/// Microbatches form max(1, floor(M/P)) groups as even as possible, larger
/// ones first, so each holds P to 2P-1 microbatches (a single group of M
/// when M < P). Within a group every rank runs the forwards chunk by chunk
/// and the backwards chunk by chunk from the last chunk down.
///
/// Megatron uses groups of exactly P and needs P to divide M; PyTorch takes
/// only M that its max(1, M/P) rounds divide, for which these groups are its
/// rounds. A trailing group smaller than P would leave rank 0 idle while its
/// microbatches go round the ring between chunks, and with the usual warm-up
/// the list simulation can even get stuck (P = 4, v = 3, M = 5); larger
/// groups cost (v-1)(G-P) more warm-up forwards instead.
InterleavedOrder interleavedOrder(const PipelineShape &shape);

/// Interleaved 1F1B over interleavedOrder(shape): rank r runs
/// 2(P-1-r) + (v-1)G warm-up forwards (G the largest group), then one
/// forward and one backward at a time, then the remaining backwards.
/// `combined` gives Megatron-Core's combined 1F1B: one more warm-up forward,
/// and each steady forward and backward run together as a sched.overlap
/// pair; the extra forward keeps the backward of a pair independent of its
/// forward. Defined in InterleavedOneFOneB.cpp.
Schedule interleavedOneFOneBSchedule(const PipelineShape &shape, bool combined);

} // namespace sched

#endif // LIB_GENERATE_INTERLEAVEDORDER_H
