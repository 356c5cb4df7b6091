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

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace sched;

int64_t sched::bytesPerAction(MemoryPath path) {
  switch (path) {
  case MemoryPath::Generate:
    return 48; // measured 38
  case MemoryPath::Lower:
    // With bytesPerMicrobatch: 1f1b, zb-h2, interleaved-1f1b and zb-v at
    // pp 8 take 131 to 135 per action, of which about 6 are their
    // microbatches'.
    return 144; // measured 129
  case MemoryPath::InsertTransfers:
    return 536; // measured 486
  case MemoryPath::Import:
    return 360; // measured 322
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
    // 1f1b 34.8, gpipe 34.7, zb-h1 34.2, interleaved-1f1b (vpp 2) 34.9,
    // zb-v 37.2, v-min 34.3, dualpipe-v 41.4 (27.6 while its actions were
    // overcounted by half); about 33 at 400,000 actions. Mostly the
    // 32-byte actions, written row by row. The largest plus about 6%.
    return 44; // measured 41.4
  case MemoryPath::EmitTorchCsvComms:
    return 328; // measured 296
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
  // --emit torch-csv writes a rank's row whole, two to six cells per
  // microbatch: 47.5 bytes per action for no-pp on the CLI against 1f1b's
  // 34.7 at pp 8, 29 per microbatch. Each plus about 9%.
  switch (path) {
  case MemoryPath::Lower:
    return 112; // measured 98
  case MemoryPath::EmitMlir:
    return 340; // measured 311
  case MemoryPath::EmitTorchCsv:
    return 32; // measured 29
  default:
    return 0;
  }
}

uint64_t sched::estimateMemory(MemoryPath path, int64_t actions,
                               int64_t overlaps, int64_t microbatches) {
  auto times = [](int64_t count, int64_t each) {
    return llvm::SaturatingMultiply(
        static_cast<uint64_t>(std::max<int64_t>(count, 0)),
        static_cast<uint64_t>(each));
  };
  return llvm::SaturatingAdd(
      llvm::SaturatingAdd(times(actions, bytesPerAction(path)),
                          times(overlaps, bytesPerOverlap(path))),
      times(microbatches, bytesPerMicrobatch(path)));
}

llvm::Error sched::checkMemoryBudget(MemoryPath path, int64_t actions,
                                     int64_t budget, llvm::StringRef what,
                                     llvm::StringRef raise, int64_t overlaps,
                                     int64_t microbatches) {
  const uint64_t need = estimateMemory(path, actions, overlaps, microbatches);
  if (need <= static_cast<uint64_t>(budget))
    return llvm::Error::success();
  std::string each = llvm::formatv("{0} actions at {1} bytes each", actions,
                                   bytesPerAction(path));
  if (overlaps > 0 && bytesPerOverlap(path) > 0)
    each += llvm::formatv(", {0} overlaps at {1} bytes more each", overlaps,
                          bytesPerOverlap(path));
  if (microbatches > 0 && bytesPerMicrobatch(path) > 0)
    each += llvm::formatv(", {0} microbatches at {1} bytes each", microbatches,
                          bytesPerMicrobatch(path));
  return llvm::createStringError(
      llvm::formatv("{0} needs {1} of working memory ({2}), more than the "
                    "budget of {3}; raise it with {4} (docs/limits.md)",
                    what, formatMemoryNeed(need), each,
                    formatMemorySize(budget), raise)
          .str());
}

llvm::Error sched::checkJsonBudget(int64_t containers, int64_t budget,
                                   llvm::StringRef what) {
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
                      "number with a K, M, G or T suffix (e.g. 512M, 4G)",
                      text)
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
