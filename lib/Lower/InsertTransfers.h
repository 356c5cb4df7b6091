//===- InsertTransfers.h - transfers of a compute schedule ------*- C++ -*-===//
//
// Adds the point-to-point transfers a compute-only schedule needs: every
// input that crosses ranks travels by a send on the producer's rank and a
// receive on the consumer's rank, in an order that cannot deadlock even
// when a send completes only together with its receive (rendezvous).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_LOWER_INSERTTRANSFERS_H
#define LIB_LOWER_INSERTTRANSFERS_H

#include "lib/Schedule/Schedule.h"

#include "llvm/Support/Error.h"

#include <string>

namespace sched {

/// How transfers are laid out.
struct InsertTransfersOptions {
  /// Issue adjacent transfers between the same two ranks as one p2p group
  /// on both sides (Megatron's send-forward-receive-backward). Never needed
  /// for progress; it lets a runtime batch them.
  bool group = true;
};

/// Why transfers could not be inserted, naming the action at fault when
/// there is one (`rank` and `index` into the input schedule, else -1).
class InsertTransfersError : public llvm::ErrorInfo<InsertTransfersError> {
public:
  static char ID;

  InsertTransfersError(std::string message, int32_t rank = -1,
                       int32_t index = -1)
      : message(std::move(message)), rank(rank), index(index) {}

  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

  std::string message;
  int32_t rank;
  int32_t index;
};

/// Returns `compute` with a send and a receive for every input that crosses
/// ranks: after F(s-1, m) a forward send at stage s-1, before F(s, m) a
/// forward receive at stage s; after B/I(s+1, m) a backward send at stage
/// s+1, before B/I(s, m) a backward receive at stage s.
///
/// Transfers are placed by a list simulation of the compute order: each
/// happens when its producer ends, and every rank issues its transfers and
/// computations in the order of those times. Both ends of a transfer thus
/// sit at the same point of one global order, so the result runs to the end
/// under rendezvous semantics (and a fortiori under eager ones).
///
/// Fails with an InsertTransfersError when `compute` holds anything but
/// F, B, I, W and overlaps, runs a stage on two ranks, computes a
/// (stage, microbatch) twice, misses an input, or cannot run to the end.
llvm::Expected<Schedule>
insertTransfers(const Schedule &compute,
                const InsertTransfersOptions &options = {});

/// The p2p groups of `lowered` (a result of insertTransfers): each run of
/// transfers of one bundle on a rank, the sched.p2p_group op
/// sched-insert-p2p writes for it.
int64_t countTransferGroups(const Schedule &lowered);

} // namespace sched

#endif // LIB_LOWER_INSERTTRANSFERS_H
