//===- RuntimePlan.h - a schedule with what a runtime needs -----*- C++ -*-===//
//
// The content of a runtime plan (docs/runtime-plan.md): the plain schedule
// plus the mesh, auxiliary-loss heads, buffer slots and the verdict the plan
// was emitted under. lib/Export/JsonPlan writes it, lib/Import/JsonPlan
// reads it back, and lib/ScheduleIR converts it to and from the dialect.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_SCHEDULE_RUNTIMEPLAN_H
#define LIB_SCHEDULE_RUNTIMEPLAN_H

#include "lib/Schedule/Schedule.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace sched {

/// The version of the JSON plan schema this build reads and writes: 4
/// adds shape exchanges (a transfer's "payload": "shape").
constexpr int kRuntimePlanVersion = 4;
/// Version 3 adds streams and events (an instruction's "stream" names a
/// stream of its rank, "wait_event" and "record_event" order them); plans
/// with them and no shape exchange are written, and still read, as 3.
constexpr int kRuntimePlanVersionWithStreams = 3;
/// Plans with communicators (a lazy group, a transfer on a group's
/// communicator) but no streams are written, and still read, as version 2:
/// their "stream" is compute or comm by the op and the rank runs on one
/// stream.
constexpr int kRuntimePlanVersionWithCommunicators = 2;
/// Plans without either are written, and still read, as version 1.
constexpr int kRuntimePlanVersionWithoutCommunicators = 1;

/// The version of schedc that wrote a plan.
constexpr const char *kSchedcVersion = "0.1.0";

/// One axis of the device mesh (`sched.mesh`).
struct MeshAxis {
  std::string name;
  int64_t size = 1;
};

/// An auxiliary-loss head (`sched.aux_head`); the scope is the dialect's
/// spelling: microbatch, sequence, global_batch or aux_free.
struct AuxHead {
  int32_t stage = 0;
  std::string scope;
  /// An aux-free head's bias update: the all-reduce's group and bytes
  /// (`bias @group bytes N`); empty group when it names none.
  std::string biasGroup;
  int64_t biasBytes = 0;
};

/// What the plan was checked against when it was emitted.
struct PlanVerdict {
  /// True when `schedc verify` proved the plan; false when the user asked
  /// for a plan without verification.
  bool verified = false;
  /// "rendezvous" or "eager".
  std::string p2p = "rendezvous";
  /// The device memory limit the proof used, if any.
  std::optional<double> memoryLimit;
  /// The same limit exactly as written (a JSON number's text, or the IR's
  /// whole number), which takes precedence over `memoryLimit` when set: a
  /// double cannot hold 2^53 + 1 or 7.99999999999999999.
  std::string memoryLimitText;
};

/// The buffers `sched-assign-buffers` gave an action: `slot` is the
/// activation slot of a compute (the receive slot of a RECV), `recvSlot` the
/// receive buffer a compute consumes; -1 for none.
struct BufferSlots {
  int64_t slot = -1;
  int64_t recvSlot = -1;
};

/// A runtime plan: a schedule and everything an executor needs to run it.
struct RuntimePlan {
  std::string name = "plan";
  Schedule schedule;
  std::vector<MeshAxis> mesh;
  std::vector<AuxHead> auxHeads;
  /// Per rank and action: its buffers. Empty when none are assigned.
  std::vector<std::vector<BufferSlots>> slots;
  PlanVerdict verdict;
};

/// The plan's name of an action kind: forward, backward, backward_input,
/// backward_weight, send, recv, all_reduce, reduce_scatter, all_gather,
/// all_to_all, barrier, unshard, reshard, reduce_grad, optimizer_step.
llvm::StringRef planOpName(ActionKind kind);
/// The action kind of a plan op name, if it is one.
std::optional<ActionKind> parsePlanOpName(llvm::StringRef name);

/// The plan's name of when a declared collective runs: before_forward,
/// after_forward, before_backward, after_backward, step.
llvm::StringRef collectiveTimingName(CollectiveTiming timing);
std::optional<CollectiveTiming> parseCollectiveTiming(llvm::StringRef name);

/// True for the collective kinds (all_reduce ... barrier).
bool isCollective(ActionKind kind);

} // namespace sched

#endif // LIB_SCHEDULE_RUNTIMEPLAN_H
