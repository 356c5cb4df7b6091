//===- VShape.cpp - V-shaped zero-bubble schedules ZB-V, V-Half, V-Min ----===//
//
// Qi et al. 2024 ("Zero Bubble Pipeline Parallelism", ZB-V) and Qi et al.
// 2024b ("Pipeline Parallelism with Controllable Memory", V-Half, V-Min):
// every rank holds two stages in a V, stage r and stage 2P-1-r, and the
// backward splits into I and W. The three differ in how many activations a
// rank may hold, which trades memory against bubble. V-Min repeats its
// building block every six steps; ZB-V and V-Half list-schedule the V under
// a cap of 2P and P+2 stage activations, preferring actions in V-Min block
// order (docs/schedules.md).
//
//===----------------------------------------------------------------------===//

#include "lib/Generate/VShape.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

using namespace sched;

//===----------------------------------------------------------------------===//
// The V-Min building block
//===----------------------------------------------------------------------===//

VBlock sched::buildVMinBlock(int32_t pp) {
  VBlock block;
  block.start.resize(pp);
  std::vector<std::array<bool, 6>> used(pp, std::array<bool, 6>{});
  auto place = [&](int32_t r, VOp op, int64_t earliest) {
    int64_t step = earliest;
    while (used[r][step % 6])
      ++step;
    used[r][step % 6] = true;
    block.start[r][static_cast<int>(op)] = step;
    return step + 1;
  };
  // The forward goes down the ranks on chunk 0 and back up on chunk 1, the
  // input gradient down on chunk 1 and up on chunk 0, each as soon as its
  // input exists and its rank has the slot free.
  int64_t next = 0;
  for (int32_t r = 0; r < pp; ++r)
    next = place(r, VOp::Forward0, next);
  for (int32_t r = pp - 1; r >= 0; --r)
    next = place(r, VOp::Forward1, next);
  for (int32_t r = 0; r < pp; ++r)
    next = place(r, VOp::InputGrad1, next);
  for (int32_t r = pp - 1; r >= 0; --r)
    next = place(r, VOp::InputGrad0, next);
  // Six actions in six slots: the two W take the two slots left.
  for (int32_t r = 0; r < pp; ++r) {
    place(r, VOp::WeightGrad1,
          block.start[r][static_cast<int>(VOp::InputGrad1)] + 1);
    place(r, VOp::WeightGrad0,
          block.start[r][static_cast<int>(VOp::InputGrad0)] + 1);
  }
  return block;
}

//===----------------------------------------------------------------------===//
// The list scheduler
//===----------------------------------------------------------------------===//

namespace {

/// What a rank does next and when it can start.
struct VChoice {
  enum What : uint8_t {
    WeightGrad,
    Forward,
    InputGrad,
    Backward,
    OverlapBackward,
    OverlapInputGrad,
  };
  int64_t start = 0;
  What what = WeightGrad;
  int8_t chunk = 0;
  int8_t backwardChunk = 0;
  bool fromPrefix = false;
};

/// The ranks with a next choice, by (start, rank): a tournament tree over
/// the ranks, so that the scheduler's three updates per action allocate
/// nothing (a std::set of (start, rank) pairs allocated a node for each,
/// a tenth of the planner's time on Llama 3 405B at 2^40 tokens).
class RankQueue {
public:
  explicit RankQueue(int32_t ranks) {
    while (leaves < ranks)
      leaves *= 2;
    starts.assign(leaves, kNone);
    tree.assign(2 * size_t(leaves), -1);
    for (int32_t r = 0; r < leaves; ++r)
      tree[leaves + r] = r;
    for (int32_t n = leaves - 1; n >= 1; --n)
      tree[n] = better(tree[2 * n], tree[2 * n + 1]);
  }
  bool empty() const { return starts[tree[1]] == kNone; }
  /// The rank with the earliest start (the lowest rank among equals).
  int32_t front() const { return tree[1]; }
  void set(int32_t r, int64_t start) { update(r, start); }
  void remove(int32_t r) { update(r, kNone); }

private:
  static constexpr int64_t kNone = INT64_MAX;
  int32_t better(int32_t a, int32_t b) const {
    return starts[b] < starts[a] ? b : a;
  }
  void update(int32_t r, int64_t start) {
    starts[r] = start;
    for (size_t n = (size_t(leaves) + r) / 2; n >= 1; n /= 2)
      tree[n] = better(tree[2 * n], tree[2 * n + 1]);
  }
  int32_t leaves = 1;
  std::vector<int64_t> starts;
  std::vector<int32_t> tree;
};

class VListScheduler {
public:
  VListScheduler(const PipelineShape &shape, const VListOptions &options)
      : options(options), pp(shape.pp), m(shape.microbatches),
        schedule(emptySchedule(shape)) {
    const size_t slots = size_t(2) * pp * m;
    forwardDone.assign(slots, -1);
    gradDone.assign(slots, -1);
    ranks.resize(pp);
    if (options.priority == VPriority::BlockOrder)
      block = buildVMinBlock(pp);
  }

  Schedule run();
  /// Runs until the state repeats (findVListPeriod).
  std::optional<VListPeriod> findPeriod();

private:
  struct RankState {
    int64_t clock = 0;
    /// Live activations in halves (a waiting W holds one half).
    int64_t liveHalves = 0;
    std::array<int32_t, 2> nextForward{};
    std::array<int32_t, 2> nextBackward{};
    std::deque<std::pair<int32_t, int32_t>> waitingW;
    size_t prefixPos = 0;
  };

  size_t slot(int32_t stage, int32_t mb) const {
    return size_t(stage) * m + mb;
  }
  int32_t stageOf(int32_t r, int32_t chunk) const {
    return vStage(pp, r, chunk);
  }
  /// When the input of rank r's next forward (backward) of `chunk` exists;
  /// nothing while unknown or when the chunk is done.
  std::optional<int64_t> forwardInput(int32_t r, int32_t chunk) const;
  std::optional<int64_t> backwardInput(int32_t r, int32_t chunk) const;
  bool forwardFits(int32_t r, int32_t chunk) const;
  int64_t priorityKey(int32_t r, VChoice::What what, int32_t chunk) const;
  std::optional<VChoice> prefixChoice(int32_t r);
  std::optional<VChoice> listChoice(int32_t r);
  std::optional<VChoice> decide(int32_t r);
  void runForward(int32_t r, int32_t chunk, uint32_t bundle, int64_t end);
  void runBackward(int32_t r, int32_t chunk, bool split, uint32_t bundle,
                   int64_t end);
  void apply(int32_t r, const VChoice &choice);
  bool finished(int32_t r) const;
  /// The rank and chunk that hold `stage`.
  std::pair<int32_t, int32_t> holderOf(int32_t stage) const {
    return stage < pp ? std::make_pair(stage, 0)
                      : std::make_pair(2 * pp - 1 - stage, 1);
  }
  /// The whole state as rank 0 has just forwarded microbatch `mb` of chunk
  /// 0, started at `start`: microbatches relative to `mb`, times to
  /// `start`; of the completion times, those still to be read (from the
  /// consumer's next microbatch to the producer's).
  std::vector<int64_t> stateRelativeTo(int32_t mb, int64_t start) const;
  /// Plays the schedule; with `periods`, stops at the first repeated state
  /// and records it there.
  void play(std::optional<VListPeriod> *periods);

  const VListOptions &options;
  int32_t pp;
  int32_t m;
  Schedule schedule;
  VBlock block;
  std::vector<int64_t> forwardDone;
  std::vector<int64_t> gradDone;
  std::vector<RankState> ranks;
  uint32_t lastBundle = 0;
};

} // namespace

std::optional<int64_t> VListScheduler::forwardInput(int32_t r,
                                                    int32_t chunk) const {
  const int32_t mb = ranks[r].nextForward[chunk];
  if (mb >= m)
    return std::nullopt;
  const int32_t stage = stageOf(r, chunk);
  if (stage == 0)
    return 0;
  const int64_t done = forwardDone[slot(stage - 1, mb)];
  if (done < 0)
    return std::nullopt;
  return done;
}

std::optional<int64_t> VListScheduler::backwardInput(int32_t r,
                                                     int32_t chunk) const {
  const int32_t mb = ranks[r].nextBackward[chunk];
  if (mb >= m)
    return std::nullopt;
  const int32_t stage = stageOf(r, chunk);
  const int64_t done = stage == 2 * pp - 1 ? forwardDone[slot(stage, mb)]
                                           : gradDone[slot(stage + 1, mb)];
  if (done < 0)
    return std::nullopt;
  return done;
}

bool VListScheduler::forwardFits(int32_t r, int32_t chunk) const {
  const RankState &state = ranks[r];
  // A chunk-0 forward admits a microbatch, which will also need its chunk-1
  // forward here: keep room for those of every admitted microbatch, or the
  // cap could stop a microbatch half way down the V.
  int64_t need = 1;
  if (chunk == 0)
    need = 2 + state.nextForward[0] - state.nextForward[1];
  return double(state.liveHalves) / 2 + double(need) <=
         options.activationCap + 1e-9;
}

int64_t VListScheduler::priorityKey(int32_t r, VChoice::What what,
                                    int32_t chunk) const {
  const bool forward = what == VChoice::Forward;
  if (options.priority == VPriority::InputGradFirst)
    return (forward ? 2 : 0) + (1 - chunk);
  const RankState &state = ranks[r];
  if (forward)
    return block.at(r, chunk == 0 ? VOp::Forward0 : VOp::Forward1,
                    state.nextForward[chunk]);
  return block.at(r, chunk == 0 ? VOp::InputGrad0 : VOp::InputGrad1,
                  state.nextBackward[chunk]);
}

std::optional<VChoice> VListScheduler::prefixChoice(int32_t r) {
  RankState &state = ranks[r];
  const std::vector<VStep> &prefix = options.prefix[r];
  while (state.prefixPos < prefix.size()) {
    VStep step = prefix[state.prefixPos];
    const bool forwardLeft = step.kind != VStep::InputGrad &&
                             step.kind != VStep::WeightGrad &&
                             state.nextForward[step.chunk] < m;
    const int8_t backChunk =
        step.kind == VStep::InputGrad ? step.chunk : step.backwardChunk;
    const bool backwardLeft = step.kind != VStep::Forward &&
                              step.kind != VStep::WeightGrad &&
                              state.nextBackward[backChunk] < m;
    VChoice choice;
    choice.fromPrefix = true;
    choice.chunk = step.chunk;
    choice.backwardChunk = backChunk;
    std::optional<int64_t> ready = 0;
    auto need = [&](std::optional<int64_t> input) {
      if (!ready || !input)
        ready = std::nullopt;
      else
        ready = std::max(*ready, *input);
    };
    if (step.kind == VStep::WeightGrad) {
      if (state.waitingW.empty()) {
        ++state.prefixPos;
        continue;
      }
      choice.what = VChoice::WeightGrad;
    } else if (forwardLeft && backwardLeft) {
      choice.what = step.kind == VStep::OverlapBackward
                        ? VChoice::OverlapBackward
                        : VChoice::OverlapInputGrad;
      need(forwardInput(r, step.chunk));
      need(backwardInput(r, backChunk));
    } else if (forwardLeft) {
      choice.what = VChoice::Forward;
      need(forwardInput(r, step.chunk));
    } else if (backwardLeft) {
      choice.what = step.kind == VStep::OverlapBackward ? VChoice::Backward
                                                        : VChoice::InputGrad;
      choice.chunk = backChunk;
      need(backwardInput(r, backChunk));
    } else {
      ++state.prefixPos;
      continue;
    }
    if (!ready)
      return std::nullopt;
    choice.start = std::max(state.clock, *ready);
    return choice;
  }
  return listChoice(r);
}

std::optional<VChoice> VListScheduler::listChoice(int32_t r) {
  const RankState &state = ranks[r];
  std::optional<VChoice> best;
  int64_t bestKey = 0;
  auto consider = [&](VChoice::What what, int32_t chunk,
                      std::optional<int64_t> input) {
    if (!input)
      return;
    VChoice choice;
    choice.what = what;
    choice.chunk = static_cast<int8_t>(chunk);
    choice.start = std::max(state.clock, *input);
    const int64_t key = priorityKey(r, what, chunk);
    if (!best || choice.start < best->start ||
        (choice.start == best->start && key < bestKey)) {
      best = choice;
      bestKey = key;
    }
  };
  for (int32_t chunk = 0; chunk < 2; ++chunk) {
    consider(VChoice::InputGrad, chunk, backwardInput(r, chunk));
    if (forwardFits(r, chunk))
      consider(VChoice::Forward, chunk, forwardInput(r, chunk));
  }
  // A waiting W fills the rank whenever nothing else could start now.
  if (!state.waitingW.empty() && (!best || best->start >= state.clock + 1)) {
    VChoice fill;
    fill.what = VChoice::WeightGrad;
    fill.start = state.clock;
    return fill;
  }
  return best;
}

std::optional<VChoice> VListScheduler::decide(int32_t r) {
  if (!options.prefix.empty())
    return prefixChoice(r);
  return listChoice(r);
}

void VListScheduler::runForward(int32_t r, int32_t chunk, uint32_t bundle,
                                int64_t end) {
  RankState &state = ranks[r];
  const int32_t stage = stageOf(r, chunk);
  const int32_t mb = state.nextForward[chunk]++;
  Action action = Action::compute(ActionKind::Forward, stage, mb);
  action.bundle = bundle;
  schedule.ranks[r].actions.push_back(action);
  forwardDone[slot(stage, mb)] = end;
  state.liveHalves += 2;
}

void VListScheduler::runBackward(int32_t r, int32_t chunk, bool split,
                                 uint32_t bundle, int64_t end) {
  RankState &state = ranks[r];
  const int32_t stage = stageOf(r, chunk);
  const int32_t mb = state.nextBackward[chunk]++;
  Action action = Action::compute(
      split ? ActionKind::BackwardInput : ActionKind::Backward, stage, mb);
  action.bundle = bundle;
  schedule.ranks[r].actions.push_back(action);
  gradDone[slot(stage, mb)] = end;
  if (split) {
    state.waitingW.emplace_back(stage, mb);
    state.liveHalves -= 1;
  } else {
    state.liveHalves -= 2;
  }
}

void VListScheduler::apply(int32_t r, const VChoice &choice) {
  RankState &state = ranks[r];
  if (choice.fromPrefix)
    ++state.prefixPos;
  int64_t end = choice.start + 1;
  switch (choice.what) {
  case VChoice::WeightGrad: {
    auto [stage, mb] = state.waitingW.front();
    state.waitingW.pop_front();
    schedule.ranks[r].actions.push_back(
        Action::compute(ActionKind::BackwardWeight, stage, mb));
    state.liveHalves -= 1;
    break;
  }
  case VChoice::Forward:
    runForward(r, choice.chunk, 0, end);
    break;
  case VChoice::InputGrad:
    runBackward(r, choice.chunk, /*split=*/true, 0, end);
    break;
  case VChoice::Backward:
    end = choice.start + 2;
    runBackward(r, choice.backwardChunk, /*split=*/false, 0, end);
    break;
  case VChoice::OverlapBackward:
  case VChoice::OverlapInputGrad: {
    // Both halves of an overlap finish together (lib/Simulate runs them
    // back to back from a common start).
    const bool split = choice.what == VChoice::OverlapInputGrad;
    end = choice.start + (split ? 2 : 3);
    const uint32_t bundle = ++lastBundle;
    runForward(r, choice.chunk, bundle, end);
    runBackward(r, choice.backwardChunk, split, bundle, end);
    break;
  }
  }
  state.clock = end;
}

bool VListScheduler::finished(int32_t r) const {
  const RankState &state = ranks[r];
  return state.waitingW.empty() && state.nextForward[0] == m &&
         state.nextForward[1] == m && state.nextBackward[0] == m &&
         state.nextBackward[1] == m;
}

std::vector<int64_t> VListScheduler::stateRelativeTo(int32_t mb,
                                                     int64_t start) const {
  std::vector<int64_t> state;
  // A rank's place in a repeating prefix: two steps per microbatch there,
  // up to its last step (none when a rank is outside that part).
  for (int32_t r = 0; r < pp && !options.prefix.empty(); ++r) {
    const size_t at = ranks[r].prefixPos;
    if (options.prefixRepeatsFrom.empty() ||
        at < options.prefixRepeatsFrom[r] || at + 1 >= options.prefix[r].size())
      return {};
    state.push_back(static_cast<int64_t>(at) - 2 * int64_t(mb));
  }
  for (const RankState &rank : ranks) {
    state.insert(state.end(),
                 {rank.clock - start, rank.liveHalves, rank.nextForward[0] - mb,
                  rank.nextForward[1] - mb, rank.nextBackward[0] - mb,
                  rank.nextBackward[1] - mb,
                  static_cast<int64_t>(rank.waitingW.size())});
    for (auto [stage, waiting] : rank.waitingW)
      state.insert(state.end(), {stage, waiting - mb});
  }
  auto next = [&](int32_t stage, bool forward) {
    auto [r, chunk] = holderOf(stage);
    return forward ? ranks[r].nextForward[chunk] : ranks[r].nextBackward[chunk];
  };
  const int32_t last = 2 * pp - 1;
  for (int32_t stage = 0; stage <= last; ++stage) {
    // A forward's end is read by the next stage's forward (the last
    // stage's by its own backward), a backward's by the previous stage's.
    const int32_t forwardReader =
        stage == last ? next(stage, /*forward=*/false) : next(stage + 1, true);
    for (int32_t k = forwardReader; k < next(stage, true); ++k)
      state.push_back(forwardDone[slot(stage, k)] - start);
    const int32_t backwardReader =
        stage == 0 ? next(stage, false) : next(stage - 1, false);
    for (int32_t k = backwardReader; k < next(stage, false); ++k)
      state.push_back(gradDone[slot(stage, k)] - start);
  }
  return state;
}

void VListScheduler::play(std::optional<VListPeriod> *periods) {
  for (RankProgram &program : schedule.ranks)
    program.actions.reserve(size_t(6) * m);
  // Every rank's next choice, ordered by start (then rank). No action can
  // end before the earliest start plus one step, so the earliest choice
  // cannot be overtaken by an input that is still unknown.
  std::vector<std::optional<VChoice>> choice(pp);
  RankQueue queue(pp);
  auto refresh = [&](int32_t r) {
    if (r < 0 || r >= pp)
      return;
    choice[r] = decide(r);
    if (choice[r])
      queue.set(r, choice[r]->start);
    else
      queue.remove(r);
  };
  for (int32_t r = 0; r < pp; ++r)
    refresh(r);
  // Each choice is decide() of the state as it is (a rank's inputs change
  // only when it or a neighbour acts), so the state below is all there is.
  std::map<std::vector<int64_t>, int32_t> seen;
  while (!queue.empty()) {
    const int32_t r = queue.front();
    queue.remove(r);
    const VChoice next = *choice[r];
    choice[r].reset();
    apply(r, next);
    // Only the rank itself and its neighbours in the V consume what it
    // produced.
    for (int32_t q : {r - 1, r, r + 1})
      refresh(q);
    const bool forward = next.what == VChoice::Forward ||
                         next.what == VChoice::OverlapBackward ||
                         next.what == VChoice::OverlapInputGrad;
    if (!periods || r != 0 || !forward || next.chunk != 0)
      continue;
    const int32_t mb = ranks[0].nextForward[0] - 1;
    std::vector<int64_t> state = stateRelativeTo(mb, next.start);
    if (state.empty())
      continue;
    auto [at, fresh] = seen.try_emplace(std::move(state), mb);
    if (fresh)
      continue;
    // Runs of M microbatches are this one up to here while no rank has
    // reached the part of its prefix that differs for M (each prefix is
    // two steps per microbatch shorter per microbatch fewer), and no
    // microbatch index compared with M has reached it.
    int32_t floor = mb + 2;
    for (int32_t q = 0; q < pp && !options.prefix.empty(); ++q) {
      const int64_t slack = static_cast<int64_t>(options.prefix[q].size()) - 1 -
                            static_cast<int64_t>(ranks[q].prefixPos);
      floor = std::max<int64_t>(floor, m - (slack - 1) / 2);
    }
    *periods = VListPeriod{at->second, mb, floor};
    return;
  }
}

Schedule VListScheduler::run() {
  play(nullptr);
  for (int32_t r = 0; r < pp; ++r)
    if (!finished(r))
      llvm::report_fatal_error("V list scheduler stalled before the end");
  return std::move(schedule);
}

std::optional<VListPeriod> VListScheduler::findPeriod() {
  std::optional<VListPeriod> period;
  if (options.prefix.empty() || !options.prefixRepeatsFrom.empty())
    play(&period);
  return period;
}

Schedule sched::scheduleVList(const PipelineShape &shape,
                              const VListOptions &options) {
  return VListScheduler(shape, options).run();
}

std::optional<VListPeriod> sched::findVListPeriod(const PipelineShape &shape,
                                                  const VListOptions &options) {
  return VListScheduler(shape, options).findPeriod();
}

//===----------------------------------------------------------------------===//
// The strategies
//===----------------------------------------------------------------------===//

VListOptions sched::zbvListOptions(const PipelineShape &shape) {
  // ZB-V holds up to P rank-worths of activations (2P stage activations);
  // with T_F = T_I = T_W the list schedule then loses only the P - 1 steps
  // the first forward takes to reach the last rank.
  VListOptions options;
  options.activationCap = 2.0 * shape.pp;
  return options;
}

VListOptions sched::vHalfListOptions(const PipelineShape &shape) {
  // V-Half: about half of ZB-V's activations; the bubble stays within half
  // of 1F1B's.
  VListOptions options;
  options.activationCap = shape.pp + 2.0;
  return options;
}

Schedule sched::generateZBV(const PipelineShape &shape) {
  return scheduleVList(shape, zbvListOptions(shape));
}

Schedule sched::generateVHalf(const PipelineShape &shape) {
  return scheduleVList(shape, vHalfListOptions(shape));
}

Schedule sched::generateVMin(const PipelineShape &shape) {
  // V-Min repeats its block every six steps: each microbatch runs down and
  // up the V without waiting, so it is alive for the shortest time and a
  // rank holds about a third of 1F1B's activations.
  Schedule schedule = emptySchedule(shape);
  const VBlock block = buildVMinBlock(shape.pp);
  const int32_t m = shape.microbatches;
  struct Timed {
    int64_t step;
    VOp op;
    int32_t microbatch;
  };
  for (int32_t r = 0; r < shape.pp; ++r) {
    std::vector<Timed> timed;
    timed.reserve(size_t(kNumVOps) * m);
    for (int32_t mb = 0; mb < m; ++mb)
      for (int op = 0; op < kNumVOps; ++op)
        timed.push_back({block.at(r, VOp(op), mb), VOp(op), mb});
    llvm::sort(timed,
               [](const Timed &a, const Timed &b) { return a.step < b.step; });
    std::vector<Action> &actions = schedule.ranks[r].actions;
    actions.reserve(timed.size());
    for (const Timed &t : timed) {
      const int chunk = (static_cast<int>(t.op) % 2);
      ActionKind kind = ActionKind::Forward;
      if (t.op == VOp::InputGrad0 || t.op == VOp::InputGrad1)
        kind = ActionKind::BackwardInput;
      else if (t.op == VOp::WeightGrad0 || t.op == VOp::WeightGrad1)
        kind = ActionKind::BackwardWeight;
      actions.push_back(
          Action::compute(kind, vStage(shape.pp, r, chunk), t.microbatch));
    }
  }
  return schedule;
}
