//===- SteadyState.cpp - fewer microbatches, the same memory states -------===//
//
// Each strategy's argument that its schedule at M microbatches is its
// schedule at fewer with a steady block run again (SteadyState.h): a block
// run right after an identical one starts from the state the first one
// started from, so it reaches no state that was not reached before.
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/SteadyState.h"

#include "lib/Generate/VShape.h"

#include <algorithm>

using namespace sched;

/// Where the schedule at m is the one at m - period with a block run once
/// more, for every m >= floor + period: the count in [floor, floor +
/// period) that m reduces to.
static int32_t reduce(int32_t m, int64_t floor, int64_t period) {
  if (m < floor + period)
    return m;
  return static_cast<int32_t>(floor + (m - floor) % period);
}

/// Interleaved 1F1B, its combined variant and interleaved zero bubble
/// walk the same chunk order (InterleavedOrder.h): with M = qP + s and
/// q > s, s groups of P + 1 microbatches, then q - s groups of P, the
/// warm-up fixed by the largest group. Each rank's program reads the
/// order's forwards a fixed warm-up ahead of its backwards (and zero
/// bubble its W r behind), so a group added among at least `keep` of its
/// size (M + P, or M + P + 1 with s + 1 < P) repeats the program's block
/// of a group's length there. Each kind of group is cut down to `keep`.
static int32_t reduceInterleaved(const PipelineShape &shape, int32_t atLeast) {
  const int64_t p = shape.pp, m = shape.microbatches;
  const int64_t q = m / p, s = m % p;
  if (q <= s)
    return shape.microbatches;
  // The warm-up is under v + 2 groups, and the W lag under one.
  for (int64_t keep = shape.vpp + 4;; keep *= 2) {
    const int64_t larger = std::min(s, keep);
    const int64_t smaller = std::min(q - s, keep);
    const int64_t reduced = (larger + smaller) * p + larger;
    if (reduced >= atLeast || reduced == m)
      return static_cast<int32_t>(reduced);
  }
}

/// V-Min: rank r runs action a of microbatch k at block step b_a + 6k,
/// the six b_a distinct modulo 6. Between its largest b_a and its
/// smallest plus 6M every step runs exactly one action, the one whose b_a
/// has that step's residue; one more microbatch adds six such steps.
static int32_t reduceVMin(const PipelineShape &shape, int32_t atLeast) {
  const VBlock block = buildVMinBlock(shape.pp);
  int64_t span = 0;
  for (const auto &starts : block.start) {
    auto [low, high] = std::minmax_element(starts.begin(), starts.end());
    span = std::max(span, *high - *low);
  }
  return reduce(shape.microbatches,
                std::max<int64_t>((span + 5) / 6 + 4, atLeast), 1);
}

/// ZB-V, V-Half and DualPipeV: the list schedule's own period
/// (findVListPeriod), looked for in a schedule of a few microbatches per
/// rank.
static std::optional<SteadyStateMicrobatches::Period>
findPeriod(Strategy strategy, const PipelineShape &shape) {
  PipelineShape probe = shape;
  probe.microbatches = 4 * shape.pp + 64;
  VListOptions options = strategy == Strategy::ZBV ? zbvListOptions(probe)
                         : strategy == Strategy::VHalf
                             ? vHalfListOptions(probe)
                             : dualPipeVListOptions(probe);
  std::optional<VListPeriod> period = findVListPeriod(probe, options);
  if (!period)
    return std::nullopt;
  // DualPipeV's warm-up is the same from 2P microbatches on.
  const int64_t floor = std::max<int64_t>(
      period->floor,
      strategy == Strategy::DualPipeV ? 2 * int64_t(shape.pp) : 0);
  return SteadyStateMicrobatches::Period{static_cast<int32_t>(floor),
                                         period->to - period->from};
}

int32_t SteadyStateMicrobatches::operator()(Strategy strategy,
                                            const PipelineShape &shape,
                                            int32_t atLeast) {
  const int32_t m = shape.microbatches;
  const int64_t p = shape.pp;
  // Any count at least the floor where a period repeats reduces as well.
  auto reduce = [m, atLeast](int64_t floor, int64_t period) {
    return ::reduce(m, std::max<int64_t>(floor, atLeast), period);
  };
  switch (strategy) {
  case Strategy::NoPipeline:
  case Strategy::Combined1F1B:
    // F B (a layerwise pair frees first: B F) per microbatch.
    return reduce(4, 1);
  case Strategy::OneFOneB:
    // Rank r: P-1-r forwards, (F B) per further microbatch, P-1-r
    // backwards.
    return reduce(2 * p + 2, 1);
  case Strategy::ZBH1:
  case Strategy::ZBH2:
    // Rank r: at most 2P-1 forwards, then (I, W once more than at most
    // 2r wait, F while any remain) per microbatch, then the waiting W;
    // ZB-H2's W allowance is fixed from M = 2P on.
    return reduce(4 * p + 4, 1);
  case Strategy::Interleaved1F1B:
  case Strategy::InterleavedCombined1F1B:
  case Strategy::InterleavedZB:
    return reduceInterleaved(shape, atLeast);
  case Strategy::VMin:
    return reduceVMin(shape, atLeast);
  case Strategy::ZBV:
  case Strategy::VHalf:
  case Strategy::DualPipeV: {
    // Not worth a probe below it.
    if (m <= 2 * p + 8)
      return m;
    auto [at, fresh] = periods.try_emplace({strategy, shape.pp});
    if (fresh)
      at->second = findPeriod(strategy, shape);
    if (!at->second)
      return m;
    return reduce(at->second->floor, at->second->length);
  }
  case Strategy::DualPipe:
    // Rank r: a warm-up and a cool-down fixed by P and r around M/2 - P +
    // min(r, P-1-r) + 1 steady rounds of F, B, F, B of its two stages (the
    // middle ranks' first round the same actions, apart); M even.
    return reduce(2 * p + 8, 2);
  case Strategy::GPipe:
  case Strategy::LoopedBFS:
    return m;
  }
  return m;
}

std::optional<std::vector<std::vector<ComputeRun>>>
sched::computeRuns(Strategy strategy, const PipelineShape &shape) {
  if (strategy != Strategy::GPipe && strategy != Strategy::LoopedBFS)
    return std::nullopt;
  // GPipe is looped BFS with one chunk per rank.
  const int32_t chunks = strategy == Strategy::GPipe ? 1 : shape.vpp;
  std::vector<std::vector<ComputeRun>> ranks(shape.pp);
  for (int32_t r = 0; r < shape.pp; ++r) {
    for (int32_t chunk = 0; chunk < chunks; ++chunk)
      ranks[r].push_back(
          {ActionKind::Forward, chunk * shape.pp + r, shape.microbatches});
    for (int32_t chunk = chunks - 1; chunk >= 0; --chunk)
      ranks[r].push_back(
          {ActionKind::Backward, chunk * shape.pp + r, shape.microbatches});
  }
  return ranks;
}
