//===- AssignBuffers.cpp - the sched-assign-buffers pass ------------------===//
//
// Gives every activation and receive buffer a slot from liveness: F takes
// the lowest free activation slot, B or W (after I) gives it back; a
// receive takes the lowest free receive slot until its consumer runs. The
// number of slots a rank needs is its peak.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sched/SchedOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <map>
#include <set>

namespace sched {
#define GEN_PASS_DEF_ASSIGNBUFFERS
#include "passes/Passes.h.inc"
} // namespace sched

using namespace sched;

namespace {

/// Slots of one kind of buffer: the lowest free one is taken first.
class SlotPool {
public:
  int64_t take() {
    if (free.empty())
      return used++;
    int64_t slot = *free.begin();
    free.erase(free.begin());
    return slot;
  }
  void give(int64_t slot) { free.insert(slot); }
  int64_t size() const { return used; }

private:
  std::set<int64_t> free;
  int64_t used = 0;
};

using Key = std::tuple<int, int64_t, int64_t>;

/// Assigns the slots of one rank's program.
class RankBuffers {
public:
  explicit RankBuffers(mlir::Builder &builder) : builder(builder) {}

  mlir::LogicalResult visit(mlir::Operation &op) {
    if (auto f = llvm::dyn_cast<ForwardOp>(op)) {
      consumeRecv(op, /*gradient=*/false, f.getStage(), f.getMicrobatch());
      int64_t slot = activations.take();
      live[{f.getStage(), f.getMicrobatch()}] = slot;
      setSlot(op, "sched.slot", slot);
      return mlir::success();
    }
    if (auto b = llvm::dyn_cast<BackwardOp>(op)) {
      consumeRecv(op, /*gradient=*/true, b.getStage(), b.getMicrobatch());
      return release(op, b.getStage(), b.getMicrobatch());
    }
    if (auto i = llvm::dyn_cast<BackwardInputOp>(op)) {
      consumeRecv(op, /*gradient=*/true, i.getStage(), i.getMicrobatch());
      return read(op, i.getStage(), i.getMicrobatch());
    }
    if (auto w = llvm::dyn_cast<BackwardWeightOp>(op))
      return release(op, w.getStage(), w.getMicrobatch());
    // A shape exchange's few bytes are read at once: no slot.
    if (auto recv = llvm::dyn_cast<RecvOp>(op); recv && !recv.getShape()) {
      int64_t slot = receives.take();
      pending[{recv.getDirection() == Direction::Backward ? 1 : 0,
               recv.getStage(), recv.getMicrobatch()}] = slot;
      setSlot(op, "sched.slot", slot);
    }
    return mlir::success();
  }

  int64_t activationSlots() const { return activations.size(); }
  int64_t receiveSlots() const { return receives.size(); }

private:
  void setSlot(mlir::Operation &op, llvm::StringRef name, int64_t slot) {
    op.setAttr(name, builder.getI64IntegerAttr(slot));
  }

  void consumeRecv(mlir::Operation &op, bool gradient, int64_t stage,
                   int64_t mb) {
    auto it = pending.find({gradient ? 1 : 0, stage, mb});
    if (it == pending.end())
      return;
    setSlot(op, "sched.recv_slot", it->second);
    receives.give(it->second);
    pending.erase(it);
  }

  mlir::LogicalResult read(mlir::Operation &op, int64_t stage, int64_t mb) {
    auto it = live.find({stage, mb});
    if (it == live.end())
      return op.emitOpError()
             << "reads the activation of stage " << stage << " mb " << mb
             << ", which no earlier forward on this rank allocated; run "
                "--sched-verify for the full diagnosis";
    setSlot(op, "sched.slot", it->second);
    return mlir::success();
  }

  mlir::LogicalResult release(mlir::Operation &op, int64_t stage,
                              int64_t mb) {
    if (mlir::failed(read(op, stage, mb)))
      return mlir::failure();
    activations.give(live[{stage, mb}]);
    live.erase({stage, mb});
    return mlir::success();
  }

  mlir::Builder &builder;
  SlotPool activations, receives;
  std::map<std::pair<int64_t, int64_t>, int64_t> live;
  std::map<Key, int64_t> pending;
};

struct AssignBuffersPass : impl::AssignBuffersBase<AssignBuffersPass> {
  void runOnOperation() override {
    mlir::Builder builder(&getContext());
    auto result = getOperation().walk([&](RankOp rank) {
      RankBuffers buffers(builder);
      // Ops in program order, bundle members included.
      auto status = rank.getBody().walk<mlir::WalkOrder::PreOrder>(
          [&](mlir::Operation *op) {
            return mlir::failed(buffers.visit(*op))
                       ? mlir::WalkResult::interrupt()
                       : mlir::WalkResult::advance();
          });
      if (status.wasInterrupted())
        return mlir::WalkResult::interrupt();
      rank->setAttr("sched.activation_slots",
                    builder.getI64IntegerAttr(buffers.activationSlots()));
      rank->setAttr("sched.recv_slots",
                    builder.getI64IntegerAttr(buffers.receiveSlots()));
      return mlir::WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
