//===- DualPipe.cpp - DeepSeek's bidirectional DualPipe -------------------===//
//
// DualPipe (DeepSeek-V3 report; deepseek-ai/DualPipe): two replicas of a
// P-stage pipeline on P ranks. Replica A runs its stage k on rank k and the
// first half of the microbatches down from rank 0; replica B runs its
// stage k on rank P-1-k and the second half up from rank P-1. In the
// schedule replica A's stages are 0..P-1 and replica B's P..2P-1 (its
// stage k is stage P+k), so rank r holds stages r and 2P-1-r, as in a V.
//
// Each rank runs DeepSeek's eight phases. A rank's "phase 0" is the
// direction that starts on its side of the pipeline (replica A on the
// first half of the ranks, B on the second), "phase 1" the other:
//   1. 2(P/2-h-1) forwards of phase 0        (h = min(r, P-1-r))
//   2. h+1 times: F phase 0, F phase 1
//   3. P/2-h-1 times: I phase 1 (its W waits), the oldest W, F phase 1
//   4. M/2-P+h+1 times: F0 overlapped with B1, F1 overlapped with B0 (the
//      two middle ranks run their first F0 and B1 apart)
//   5. P/2-h-1 times: B phase 1, F1 overlapped with B0
//   6. h+1 times: B phase 1, B phase 0, the later half split (I, W waits)
//   7. P/2-h-1 times: the oldest W, I phase 0 (its W waits)
//   8. the remaining h+1 waiting Ws
// The counts hold for P even, M even and M >= 2P, DeepSeek's own rules.
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/Strategy.h"

#include <algorithm>
#include <deque>

using namespace sched;

namespace {

/// Writes the program of one rank, tracking the next microbatch of each
/// direction and the weight gradients still waiting.
class DualPipeRank {
public:
  DualPipeRank(int32_t pp, int32_t microbatches, int32_t rank,
               RankProgram &program)
      : pp(pp), half(microbatches / 2), rank(rank), secondHalf(rank >= pp / 2),
        actions(program.actions) {}

  /// Replica (0 = A, 1 = B) that `phase` names on this rank.
  int32_t replica(int32_t phase) const { return phase ^ int32_t(secondHalf); }
  int32_t stage(int32_t phase) const {
    return replica(phase) == 0 ? rank : 2 * pp - 1 - rank;
  }

  void forward(int32_t phase, uint32_t bundle = 0) {
    push(ActionKind::Forward, phase, nextForward[replica(phase)]++, bundle);
  }
  /// A full backward, or with `split` an I whose W waits.
  void backward(int32_t phase, bool split = false, uint32_t bundle = 0) {
    const int32_t mb = nextBackward[replica(phase)]++;
    if (!split) {
      push(ActionKind::Backward, phase, mb, bundle);
      return;
    }
    push(ActionKind::BackwardInput, phase, mb, bundle);
    waiting.push_back({stage(phase), actions.back().microbatch});
  }
  /// The oldest waiting weight gradient.
  void weight() {
    auto [stageIndex, mb] = waiting.front();
    waiting.pop_front();
    actions.push_back(
        Action::compute(ActionKind::BackwardWeight, stageIndex, mb));
  }
  /// A forward of `forwardPhase` overlapped with a full backward of
  /// `backwardPhase`.
  void overlap(int32_t forwardPhase, int32_t backwardPhase) {
    ++lastBundle;
    forward(forwardPhase, lastBundle);
    backward(backwardPhase, /*split=*/false, lastBundle);
  }

private:
  void push(ActionKind kind, int32_t phase, int32_t index, uint32_t bundle) {
    Action action =
        Action::compute(kind, stage(phase), replica(phase) * half + index);
    action.bundle = bundle;
    actions.push_back(action);
  }

  const int32_t pp;
  const int32_t half;
  const int32_t rank;
  const bool secondHalf;
  std::vector<Action> &actions;
  int32_t nextForward[2] = {0, 0};
  int32_t nextBackward[2] = {0, 0};
  std::deque<std::pair<int32_t, int32_t>> waiting;
  uint32_t lastBundle = 0;
};

} // namespace

Schedule sched::generateDualPipe(const PipelineShape &shape) {
  const int32_t pp = shape.pp;
  const int32_t halfRanks = pp / 2;
  const int32_t halfMicrobatches = shape.microbatches / 2;
  Schedule schedule = emptySchedule(shape);
  schedule.numStages = 2 * pp;
  schedule.replicas = 2;
  if (!shape.stageCosts.empty())
    schedule.stageCosts.insert(schedule.stageCosts.end(),
                               shape.stageCosts.begin(),
                               shape.stageCosts.end());
  for (int32_t r = 0; r < pp; ++r) {
    RankProgram &program = schedule.ranks[r];
    program.actions.reserve(3 * shape.microbatches);
    DualPipeRank rank(pp, shape.microbatches, r, program);
    const int32_t h = std::min(r, pp - 1 - r);
    const int32_t outer = halfRanks - h - 1;
    const bool middle = h == halfRanks - 1;
    for (int32_t i = 0; i < 2 * outer; ++i)
      rank.forward(0);
    for (int32_t i = 0; i < h + 1; ++i) {
      rank.forward(0);
      rank.forward(1);
    }
    for (int32_t i = 0; i < outer; ++i) {
      rank.backward(1, /*split=*/true);
      rank.weight();
      rank.forward(1);
    }
    const int32_t steady = halfMicrobatches - pp + h + 1;
    for (int32_t i = 0; i < steady; ++i) {
      if (i == 0 && middle) {
        // DeepSeek runs these two apart on the middle ranks: alone, the F
        // need not wait for the gradient the B needs, which shortens the
        // bubble.
        rank.forward(0);
        rank.backward(1);
      } else {
        rank.overlap(0, 1);
      }
      rank.overlap(1, 0);
    }
    for (int32_t i = 0; i < outer; ++i) {
      rank.backward(1);
      rank.overlap(1, 0);
    }
    // The later half of these backwards leave their weight gradients to
    // fill the drain.
    bool split = false;
    for (int32_t i = 0; i < h + 1; ++i) {
      if (i == (h + 1) / 2 && h % 2 == 1)
        split = true;
      rank.backward(1, split);
      if (i == (h + 1) / 2 && h % 2 == 0)
        split = true;
      rank.backward(0, split);
    }
    for (int32_t i = 0; i < outer; ++i) {
      rank.weight();
      rank.backward(0, /*split=*/true);
    }
    for (int32_t i = 0; i < h + 1; ++i)
      rank.weight();
  }
  return schedule;
}
