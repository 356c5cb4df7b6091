//===- ResourceLimits.cpp - working-memory budget of a request ------------===//
//
// The bytes per action below are measured, not guessed: `make bench` runs
// each path in a child process and divides the peak resident memory it
// added by its actions (bench/schedc-bench.cpp, "Memory per action"). Each
// figure is the largest over the strategies plus about 10%, rounded up to
// a multiple of 8 (the measured largest in comments); remeasure when a path
// changes.
//
//===----------------------------------------------------------------------===//

#include "lib/Limits/ResourceLimits.h"
#include "lib/Limits/DiagnosticExcerpt.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace sched;

int64_t sched::bytesPerAction(MemoryPath path) {
  switch (path) {
  case MemoryPath::Generate:
    // 40 for most strategies (an Action is 40 bytes since it names its
    // declaration), 46 for zb-v, 50 for dualpipe-v (the V list
    // scheduler's tables).
    return 56; // measured 50
  case MemoryPath::Lower:
    // With bytesPerMicrobatch: 1f1b, zb-h2, interleaved-1f1b and zb-v at
    // pp 8 take 131 to 135 per action, of which about 6 are their
    // microbatches'.
    return 144; // measured 129
  case MemoryPath::InsertTransfers:
    // With bytesPerTransfer and bytesPerTransferGroup: the compute action
    // read from the IR (its Action and op pointer), its place in the
    // transfer insertion's order and simulation, its copy in the result.
    // no-pp (no transfers) takes 185 per action.
    return 208; // fit 186
  case MemoryPath::Import:
    // With bytesPerOverlap and bytesPerMicrobatch: the plain action and its
    // column, a location uniqued per cell, the op.
    return 272; // fit 248
  case MemoryPath::EmitMlir:
    // As Lower: 146 to 177 per action at pp 8, of which up to 19 are their
    // microbatches'.
    return 176; // measured 158
  case MemoryPath::EmitText:
    // On the CLI as --emit torch-csv below: 115 (dualpipe-v at 25,000
    // microbatches), 98 to 110 for 1f1b, gpipe, interleaved-1f1b and
    // dualpipe, 81 to 89 for zb-h1, 84 to 93 for zb-v and v-min.
    return 120; // measured 115
  case MemoryPath::EmitTorchCsv:
    // Measured on the CLI, not in-process: `schedc generate --emit
    // torch-csv -o /dev/null` under /usr/bin/time -v at pp 8, 25,000 and
    // 125,000 microbatches, the maximum resident size less that of the same
    // command at 2 x pp microbatches (7 MiB: this path loads no Z3, so the
    // 27 MiB floor of --emit json does not apply), over computeActionCount:
    // 1f1b 38.0 and 39.7, gpipe 38.8 and 39.7, zb-h1 39.3 and 39.8,
    // interleaved-1f1b (vpp 2) 40.6 and 40.9, zb-v 44.9 and 45.2, v-min
    // 41.5 and 41.9, dualpipe-v 48.9 and 49.4; no-pp with 10^6
    // microbatches 40.8. The 40-byte actions and the generator's tables;
    // the CSV is written cell by cell. The largest plus about 5%.
    return 52; // measured 49.4
  case MemoryPath::EmitTorchCsvComms:
    // With bytesPerTransfer: the generated action, its place in the
    // transfer insertion's order and simulation, its copy in the result;
    // the CSV is written cell by cell. no-pp (no transfers) takes 161.
    return 184; // fit 166
  case MemoryPath::ReadJson:
    // schedc verify on {"x": [{"a": 1}, ...]}: 1.08 GB for 200,000
    // objects (docs/limits.md).
    return 5920; // measured 5,548
  }
  llvm_unreachable("unknown memory path");
}

int64_t sched::bytesPerOverlap(MemoryPath path) {
  // `make bench`'s "Memory per action" at pp 8, 2 million actions:
  // DualPipeV and DualPipe, one overlap per two actions, against 1F1B's
  // figure per action.
  switch (path) {
  case MemoryPath::Lower:
    return 192; // measured 170 (dualpipe-v), 176 (dualpipe)
  case MemoryPath::EmitMlir:
    return 280; // measured 236 (dualpipe-v), 258 (dualpipe)
  case MemoryPath::Import:
    // The sched.overlap op and region of a `(F;B)OVERLAP_F_B` cell: the
    // combined 1F1B over no-pp, DualPipeV over 1F1B.
    return 84; // fit 76
  default:
    // Within the figure per action: the plain schedule marks an overlap
    // in the actions' own fields.
    return 0;
  }
}

int64_t sched::bytesPerMicrobatch(MemoryPath path) {
  // `make bench`'s "Memory per action": no-pp (one microbatch per two
  // actions) takes 178 bytes per action to lower and 313 to print against
  // 1f1b's 135 and 177 on 8 ranks (one per 16): 98 and 311 bytes per
  // microbatch. The IR's attributes are uniqued per microbatch index.
  // Each plus about 9%. (--emit torch-csv wrote a rank's row whole, 29
  // bytes per microbatch more; it writes cell by cell now.)
  switch (path) {
  case MemoryPath::Lower:
    return 112; // measured 98
  case MemoryPath::EmitMlir:
    return 340; // measured 311
  case MemoryPath::Import:
    // As Lower's: no-pp and the combined 1F1B (a microbatch per two
    // actions) over 1F1B at pp 8.
    return 144; // fit 132
  default:
    return 0;
  }
}

int64_t sched::bytesPerTransfer(MemoryPath path) {
  // `make bench`'s "Memory per action" at pp 8, 2 million compute actions
  // and 3.5 to 3.75 million sends and receives, against no-pp's and the
  // combined 1F1B's none: a send or receive placed in the insertion's
  // order, its action in the result and, for the pass, its op. One figure
  // per compute action was 2 to 3 times the peak of a schedule with few
  // transfers per compute action (zb-h2) or none (no-pp).
  switch (path) {
  case MemoryPath::InsertTransfers:
    return 104; // fit 92
  case MemoryPath::EmitTorchCsvComms:
    return 80; // fit 70
  default:
    return 0;
  }
}

int64_t sched::bytesPerTransferGroup(MemoryPath path) {
  // A sched.p2p_group op with its region and block, on each of its two
  // ranks: 1F1B groups about every second transfer (1.75 million groups
  // for 3.5 million transfers), ZB-H2 almost none (98).
  switch (path) {
  case MemoryPath::InsertTransfers:
    return 216; // fit 196
  default:
    return 0;
  }
}

uint64_t sched::estimateMemory(MemoryPath path, const RequestSize &size) {
  auto times = [](int64_t count, int64_t each) {
    return llvm::SaturatingMultiply(
        static_cast<uint64_t>(std::max<int64_t>(count, 0)),
        static_cast<uint64_t>(each));
  };
  uint64_t total = times(size.actions, bytesPerAction(path));
  total =
      llvm::SaturatingAdd(total, times(size.overlaps, bytesPerOverlap(path)));
  total = llvm::SaturatingAdd(
      total, times(size.microbatches, bytesPerMicrobatch(path)));
  total =
      llvm::SaturatingAdd(total, times(size.transfers, bytesPerTransfer(path)));
  return llvm::SaturatingAdd(
      total, times(size.transferGroups, bytesPerTransferGroup(path)));
}

llvm::Error sched::checkMemoryBudget(MemoryPath path, const RequestSize &size,
                                     int64_t budget, llvm::StringRef what,
                                     llvm::StringRef raise) {
  // A budget under 1 byte must not wrap to a huge unsigned one: that
  // switched the check off (a negative memory-budget pass option).
  if (budget < 1)
    return llvm::createStringError(
        llvm::formatv("{0}: the memory budget must be at least 1 byte, got "
                      "{1}; set it with {2} (docs/limits.md)",
                      what, budget, raise)
            .str());
  const uint64_t need = estimateMemory(path, size);
  if (need <= static_cast<uint64_t>(budget))
    return llvm::Error::success();
  std::string each = llvm::formatv("{0} actions at {1} bytes each",
                                   size.actions, bytesPerAction(path));
  if (size.overlaps > 0 && bytesPerOverlap(path) > 0)
    each += llvm::formatv(", {0} overlaps at {1} bytes more each",
                          size.overlaps, bytesPerOverlap(path));
  if (size.microbatches > 0 && bytesPerMicrobatch(path) > 0)
    each += llvm::formatv(", {0} microbatches at {1} bytes each",
                          size.microbatches, bytesPerMicrobatch(path));
  if (size.transfers > 0 && bytesPerTransfer(path) > 0)
    each += llvm::formatv(", {0} sends and receives at {1} bytes each",
                          size.transfers, bytesPerTransfer(path));
  if (size.transferGroups > 0 && bytesPerTransferGroup(path) > 0)
    each += llvm::formatv(", {0} p2p groups at {1} bytes each",
                          size.transferGroups, bytesPerTransferGroup(path));
  return llvm::createStringError(
      llvm::formatv("{0} needs {1} of working memory ({2}), more than the "
                    "budget of {3}; raise it with {4} (docs/limits.md)",
                    what, formatMemoryNeed(need), each,
                    formatMemorySize(budget), raise)
          .str());
}

llvm::Error sched::checkJsonBudget(int64_t containers, int64_t budget,
                                   llvm::StringRef what) {
  if (budget < 1)
    return llvm::createStringError(
        llvm::formatv("{0}: the memory budget must be at least 1 byte, got "
                      "{1} (docs/limits.md)",
                      what, budget)
            .str());
  const int64_t each = bytesPerAction(MemoryPath::ReadJson);
  const uint64_t need = llvm::SaturatingMultiply(
      static_cast<uint64_t>(std::max<int64_t>(containers, 0)),
      static_cast<uint64_t>(each));
  if (need <= static_cast<uint64_t>(budget))
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::formatv("{0} holds {1} JSON objects and arrays, about {2} to read "
                    "at {3} bytes each, more than the budget of {4} "
                    "(docs/limits.md)",
                    what, containers, formatMemorySize(int64_t(need)), each,
                    formatMemorySize(budget))
          .str());
}

llvm::Error sched::checkOutputBudget(int64_t bytes, int64_t budget,
                                     llvm::StringRef what,
                                     llvm::StringRef raise) {
  if (bytes <= budget)
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::formatv("{0} would be about {1} of text, more than the budget of "
                    "{2}; raise it with {3} (docs/limits.md)",
                    what, formatMemorySize(bytes), formatMemorySize(budget),
                    raise)
          .str());
}

llvm::Expected<int64_t> sched::parseMemorySize(llvm::StringRef text) {
  llvm::StringRef rest = text.trim();
  uint64_t value = 0;
  auto invalid = [&] {
    return llvm::createStringError(
        llvm::formatv("invalid memory size '{0}': expected bytes, or a "
                      "number with a K, M, G or T suffix (e.g. 512M, 4G), "
                      "from 1 byte to 8 EiB",
                      clipForMessage(text))
            .str());
  };
  if (rest.consumeInteger(10, value) || value == 0)
    return invalid();
  unsigned shift = 0;
  if (!rest.empty()) {
    switch (llvm::toUpper(rest.front())) {
    case 'K':
      shift = 10;
      break;
    case 'M':
      shift = 20;
      break;
    case 'G':
      shift = 30;
      break;
    case 'T':
      shift = 40;
      break;
    default:
      return invalid();
    }
    rest = rest.drop_front();
    if (!rest.consume_front_insensitive("ib"))
      rest.consume_front_insensitive("b");
  }
  if (!rest.empty() || value > (uint64_t(INT64_MAX) >> shift))
    return invalid();
  return static_cast<int64_t>(value << shift);
}

std::string sched::formatMemoryNeed(uint64_t bytes) {
  return bytes > uint64_t(INT64_MAX)
             ? "more than 8 EiB"
             : "about " + formatMemorySize(static_cast<int64_t>(bytes));
}

std::string sched::formatMemorySize(int64_t bytes) {
  static constexpr llvm::StringLiteral kUnits[] = {"KiB", "MiB", "GiB",
                                                   "TiB", "PiB", "EiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " bytes";
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  for (value /= 1024; value >= 1024 && unit + 1 < std::size(kUnits); ++unit)
    value /= 1024;
  // Whole numbers print without a fraction: "2 GiB", not "2.0 GiB".
  if (value == static_cast<double>(static_cast<int64_t>(value)))
    return llvm::formatv("{0} {1}", static_cast<int64_t>(value), kUnits[unit]);
  return llvm::formatv("{0:F1} {1}", value, kUnits[unit]);
}
