//===- ResourceLimits.h - working-memory budget of a request ----*- C++ -*-===//
//
// The one place that decides how big a request may get. Every entry point
// that builds schedules (schedc generate, the sched-lower-* passes,
// sched-insert-p2p; the importers may call it too) estimates the working
// memory of its request from its sizes before it allocates anything, and
// refuses a request over its budget with one line that names the budget
// and how to raise it. docs/limits.md describes the budget to users.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_LIMITS_RESOURCELIMITS_H
#define LIB_LIMITS_RESOURCELIMITS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace sched {

/// The default working-memory budget of one request: 2 GiB, which leaves a
/// small machine (2 cores, 24 GB) responsive while a few run at once.
inline constexpr int64_t kDefaultMemoryBudget = int64_t(2) << 30;

/// The default budget as a pass option or flag value.
inline constexpr llvm::StringLiteral kDefaultMemoryBudgetText = "2G";

/// What a request does with its actions; each way has its own cost per
/// action.
enum class MemoryPath : uint8_t {
  /// Generating the plain schedule of a strategy (lib/Generate).
  Generate,
  /// Generating it and writing it as sched.schedule IR (sched-lower-*).
  Lower,
  /// Reading a compute-only sched.schedule, inserting its transfers and
  /// writing them back (sched-insert-p2p): per compute action and per
  /// transfer added.
  InsertTransfers,
  /// Building sched.schedule IR of that many actions from a PyTorch CSV
  /// (sched-translate --import-torch-csv).
  Import,
  /// schedc generate --emit mlir: generate, lower, print.
  EmitMlir,
  /// schedc generate --emit text: generate, simulate, print the grid.
  EmitText,
  /// schedc generate --emit torch-csv: generate, write the CSV.
  EmitTorchCsv,
  /// schedc generate --emit torch-csv-comms: generate, insert transfers,
  /// write the CSV; per compute action and per transfer added. (--emit
  /// json has an estimate per strategy and plan instruction:
  /// lib/Generate/PlanMemory.h.)
  EmitTorchCsvComms,
  /// Reading a JSON document (a runtime plan) with llvm::json, per object
  /// and array it holds: its DOM gives each object a hash table of 64
  /// slots at the first key.
  ReadJson,
};

/// The peak working memory per action of `path`, in bytes: the peak
/// resident memory a request of N actions adds, over N, as `make bench`
/// measures it (the "Memory per action" table), rounded up.
int64_t bytesPerAction(MemoryPath path);

/// What an overlap (a forward and a backward issued together: DualPipe,
/// DualPipeV) costs `path` beyond its two actions, in bytes, measured as
/// bytesPerAction: the sched.overlap op and its region in the IR paths, 0
/// where the plain schedule is all there is.
int64_t bytesPerOverlap(MemoryPath path);

/// What a microbatch costs `path` beyond its actions, in bytes, measured
/// as bytesPerAction: the IR's attributes are uniqued per microbatch index,
/// so that a pipeline of one rank and a million microbatches takes more
/// than one of eight ranks with the same actions.
int64_t bytesPerMicrobatch(MemoryPath path);

/// What a send or a receive that `path` adds costs it, in bytes, measured
/// as bytesPerAction: its place in the transfer insertion's order, its
/// action, its op or its CSV cell. 0 where a path adds none.
int64_t bytesPerTransfer(MemoryPath path);

/// What a p2p group (sched.p2p_group: transfers issued together) that
/// `path` writes costs it, in bytes, measured as bytesPerAction: the op, its
/// region and block. 0 where a path writes none.
int64_t bytesPerTransferGroup(MemoryPath path);

/// The sizes a request's working memory follows, each counted exactly
/// before anything is allocated for them.
struct RequestSize {
  /// Compute actions (F, B, I, W; an overlap's two count apart).
  int64_t actions = 0;
  /// Overlapped pairs among them.
  int64_t overlaps = 0;
  /// Microbatches of the schedule.
  int64_t microbatches = 0;
  /// Sends and receives the request adds: two per activation or gradient
  /// that crosses ranks (countPlanInstructions in lib/Generate/PlanMemory.h).
  int64_t transfers = 0;
  /// The p2p groups those form, one on each of the two ranks of a group:
  /// counted on the transfer insertion's result, before its ops are
  /// written (sched-insert-p2p).
  int64_t transferGroups = 0;
};

/// The estimated working memory of a request of `size` along `path`, in
/// bytes (saturating): actions, overlaps, microbatches, transfers and their
/// groups, each at the path's measured bytes.
uint64_t estimateMemory(MemoryPath path, const RequestSize &size);

/// Refuses a request of `size` along `path` when its estimated working
/// memory is over `budget` bytes. The message is one line: `what` (e.g.
/// "lowering @p with 1f1b") needs about X of working memory (each count at
/// its bytes), more than the budget; raise it with `raise` (e.g.
/// "--memory-budget=SIZE"). A budget under 1 byte is refused too (as a
/// huge unsigned one it would switch the check off).
llvm::Error checkMemoryBudget(MemoryPath path, const RequestSize &size,
                              int64_t budget, llvm::StringRef what,
                              llvm::StringRef raise);

/// Refuses reading a JSON document of `containers` objects and arrays
/// (MemoryPath::ReadJson) when that is over `budget` bytes. One line:
/// `what` holds N JSON objects and arrays, about X to read, more than the
/// budget.
llvm::Error checkJsonBudget(int64_t containers, int64_t budget,
                            llvm::StringRef what);

/// Refuses output of `bytes` bytes over `budget`: output that grows with
/// something else than the actions (the text grid: ranks x time steps).
/// One line, as checkMemoryBudget's.
llvm::Error checkOutputBudget(int64_t bytes, int64_t budget,
                              llvm::StringRef what, llvm::StringRef raise);

/// Parses a memory size: bytes, or a number with a binary suffix K, M, G
/// or T (optionally followed by "iB" or "B"): "1073741824", "512M", "2GiB".
/// It must be at least 1 byte and fit int64_t (under 8 EiB); the one
/// validation of every --memory-budget flag and memory-budget pass option
/// (lib/Limits/MemoryBudgetOption.h).
llvm::Expected<int64_t> parseMemorySize(llvm::StringRef text);

/// A size for messages: "2 GiB", "26.4 GiB", "300 MiB", "512 bytes".
std::string formatMemorySize(int64_t bytes);

/// An estimated need for a budget refusal: "about 2 GiB", or "more than 8
/// EiB" past what int64_t holds.
std::string formatMemoryNeed(uint64_t bytes);

} // namespace sched

#endif // LIB_LIMITS_RESOURCELIMITS_H
