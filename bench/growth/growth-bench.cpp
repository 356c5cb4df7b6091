//===- growth-bench.cpp - how each path's CPU time grows with its size ----===//
//
// Issue 31 asks that the planner (in layers and in devices), the PyTorch
// CSV import (in microbatches) and the CSV emission (in actions) grow at
// most as n log n. Each row runs the command as a user does, the whole
// process in a child (under peak-rss), at four doubling sizes, three
// times each, and reads its CPU time (user + system, which other
// processes on the machine do not inflate). It fits the exponent of the
// growth on a log-log scale: from the median CPU time of each size, less
// the same tool's on a trivial input (the process floor: loading the tool
// and Z3), the median of the slopes between every two sizes (Theil-Sen,
// which one noisy size does not move). A row above 1.2 is flagged: n log
// n over these ranges is 1.05 to 1.1 (docs/limits.md, "Growth").
//
// `growth-bench` runs every row; `growth-bench ROW` the rows whose name
// contains ROW.
//
//===----------------------------------------------------------------------===//

#include "bench/common/ProcessTimes.h"
#include "bench/peak-rss/PeakRssRun.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

using namespace sched;

namespace {

/// The exponent above which a row is flagged: n log n, with room for noise.
constexpr double kNLogNAllowance = 1.2;
constexpr int kRepeats = 3;

/// The median CPU seconds of `kRepeats` runs of `argv`, or nullopt when a
/// run fails.
std::optional<double> cpuSeconds(llvm::StringRef binDir,
                                 const std::vector<std::string> &argv) {
  std::vector<double> runs;
  for (int run = 0; run < kRepeats; ++run) {
    const double before = childrenCpuSeconds();
    std::optional<ChildRun> child = runChild(binDir, argv);
    if (!child || child->status != 0)
      return std::nullopt;
    runs.push_back(childrenCpuSeconds() - before);
  }
  return median(runs);
}

/// The Theil-Sen slope of log(seconds) against log(sizes): the median of
/// the slopes between every two points. NaN without two positive points.
double growthExponent(const std::vector<double> &sizes,
                      const std::vector<double> &seconds) {
  std::vector<double> slopes;
  for (size_t i = 0; i < sizes.size(); ++i)
    for (size_t j = i + 1; j < sizes.size(); ++j)
      if (seconds[i] > 0 && seconds[j] > 0)
        slopes.push_back(std::log(seconds[j] / seconds[i]) /
                         std::log(sizes[j] / sizes[i]));
  return slopes.empty() ? NAN : median(slopes);
}

/// One path: its command at each size, and its floor run.
struct Row {
  std::string name;
  std::string unit;
  std::vector<int64_t> sizes;
  /// The command at a size (it may write the input it needs first); empty
  /// when it could not be prepared.
  std::function<std::vector<std::string>(int64_t)> command;
  /// The same tool on a trivial input (the process floor); none for the
  /// planner, whose searches take seconds and its process start
  /// milliseconds.
  std::function<std::vector<std::string>()> floor;
};

/// Runs `row` and prints its line; returns false when its exponent is over
/// the allowance or a run failed.
bool runRow(llvm::StringRef binDir, const Row &row) {
  auto measure = [&](int64_t size) -> std::optional<double> {
    std::vector<std::string> argv = row.command(size);
    if (argv.empty())
      return std::nullopt;
    return cpuSeconds(binDir, argv);
  };
  std::optional<double> floor =
      row.floor ? cpuSeconds(binDir, row.floor()) : std::optional<double>(0);
  std::vector<double> sizes, seconds;
  std::string cells;
  for (int64_t size : row.sizes) {
    std::optional<double> cpu = measure(size);
    if (!cpu || !floor) {
      llvm::outs() << llvm::formatv("| {0} | run failed at {1} {2} |\n",
                                    row.name, size, row.unit);
      return false;
    }
    sizes.push_back(static_cast<double>(size));
    seconds.push_back(std::max(0.0, *cpu - *floor));
    cells += llvm::formatv("{0}: {1:F2} s; ", size, *cpu).str();
  }
  const double exponent = growthExponent(sizes, seconds);
  const bool within = exponent <= kNLogNAllowance;
  llvm::outs() << llvm::formatv("| {0} | {1} | {2}| {3:F2} | {4:F2} | {5} |\n",
                                row.name, row.unit, cells, *floor, exponent,
                                within ? "yes" : "NO (above n log n)");
  return within;
}

/// Writes `text` to a temporary file named for `label`; "" when it cannot.
std::string writeTemporary(llvm::StringRef label, llvm::StringRef suffix,
                           llvm::StringRef text,
                           std::vector<std::string> &files) {
  llvm::SmallString<128> path;
  int fd = -1;
  if (llvm::sys::fs::createTemporaryFile(label, suffix, fd, path))
    return "";
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << text;
  files.push_back(path.str().str());
  return files.back();
}

/// Llama 3 8B's layer (the preset's figures), `layers` deep, as a model
/// file.
std::string llamaLayers(int64_t layers) {
  return llvm::formatv(
             R"({{"name": "llama3-8b-{0}", "layers": {0}, "hidden": 4096, )"
             R"("ffn_hidden": 14336, "heads": 32, "kv_heads": 8, )"
             R"("vocab": 128256, "seq_len": 8192, )"
             R"("global_batch_tokens": 16777216})",
             layers)
      .str();
}

std::vector<Row> rows(llvm::StringRef binDir, std::vector<std::string> &files) {
  const std::string schedc = (binDir + "/schedc").str();
  const std::string translate = (binDir + "/sched-translate").str();
  // The PyTorch CSV with transfers of 1F1B on 8 ranks, as `schedc
  // generate` writes it for a user.
  auto csv = [&, schedc](int64_t microbatches) -> std::string {
    llvm::SmallString<128> path;
    if (llvm::sys::fs::createTemporaryFile("growth-bench", "csv", path))
      return "";
    files.push_back(path.str().str());
    std::optional<ChildRun> run =
        runChild(binDir, {schedc, "generate", "--strategy", "1f1b", "--pp", "8",
                          "--microbatches", std::to_string(microbatches),
                          "--emit", "torch-csv-comms", "-o", files.back()});
    return run && run->status == 0 ? files.back() : "";
  };
  auto orEmpty = [](const std::string &file,
                    std::vector<std::string> argv) -> std::vector<std::string> {
    return file.empty() ? std::vector<std::string>{} : argv;
  };
  std::vector<Row> all;
  all.push_back(
      {"planner, Llama 3 8B's layer on 64 H100s",
       "layers",
       {64, 128, 256, 512},
       [&, schedc](int64_t layers) {
         const std::string model =
             writeTemporary("growth-bench", "json", llamaLayers(layers), files);
         return orEmpty(model, {schedc, "plan", "--model", model, "--cluster",
                                "h100-ib", "--devices", "64", "--top", "1"});
       },
       nullptr});
  all.push_back({"planner, DeepSeek-V3 FP8 on h800-ib",
                 "devices",
                 {256, 512, 1024, 2048},
                 [schedc](int64_t devices) {
                   return std::vector<std::string>{schedc,
                                                   "plan",
                                                   "--model",
                                                   "deepseek-v3",
                                                   "--cluster",
                                                   "h800-ib",
                                                   "--devices",
                                                   std::to_string(devices),
                                                   "--precision",
                                                   "fp8",
                                                   "--no-fewer-devices",
                                                   "--top",
                                                   "1"};
                 },
                 nullptr});
  all.push_back({"CSV import with transfers (sched-translate "
                 "--import-torch-csv-comms), 1F1B pp 8",
                 "microbatches",
                 {2'000, 4'000, 8'000, 16'000},
                 [=](int64_t microbatches) {
                   const std::string file = csv(microbatches);
                   return orEmpty(file, {translate, "--import-torch-csv-comms",
                                         file, "-o", "/dev/null"});
                 },
                 [=] {
                   const std::string file = csv(16);
                   return orEmpty(file, {translate, "--import-torch-csv-comms",
                                         file, "-o", "/dev/null"});
                 }});
  all.push_back({"CSV import and verify (schedc verify), 1F1B pp 8",
                 "microbatches",
                 {4'000, 8'000, 16'000, 32'000},
                 [=](int64_t microbatches) {
                   const std::string file = csv(microbatches);
                   return orEmpty(file, {schedc, "verify", file});
                 },
                 [=] {
                   const std::string file = csv(16);
                   return orEmpty(file, {schedc, "verify", file});
                 }});
  // The actions grow in proportion to the microbatches at a fixed pp, and
  // to pp at fixed microbatches (the ranks' rows grow too).
  auto emit = [schedc](llvm::StringRef form, int64_t pp, int64_t microbatches) {
    return std::vector<std::string>{schedc,
                                    "generate",
                                    "--strategy",
                                    "dualpipe-v",
                                    "--pp",
                                    std::to_string(pp),
                                    "--microbatches",
                                    std::to_string(microbatches),
                                    "--emit",
                                    form.str(),
                                    "-o",
                                    "/dev/null"};
  };
  for (llvm::StringRef form : {"torch-csv", "torch-csv-comms"}) {
    all.push_back({llvm::formatv("CSV emission (schedc generate --emit {0}), "
                                 "dualpipe-v pp 8",
                                 form)
                       .str(),
                   "microbatches",
                   {8'000, 16'000, 32'000, 64'000},
                   [emit, form](int64_t microbatches) {
                     return emit(form, 8, microbatches);
                   },
                   [emit, form] { return emit(form, 8, 16); }});
    all.push_back({llvm::formatv("CSV emission (schedc generate --emit {0}), "
                                 "dualpipe-v, 2,048 microbatches",
                                 form)
                       .str(),
                   "pp",
                   {16, 32, 64, 128},
                   [emit, form](int64_t pp) { return emit(form, pp, 2'048); },
                   [emit, form] { return emit(form, 2, 4); }});
  }
  return all;
}

} // namespace

int main(int argc, char **argv) {
  const llvm::StringRef only = argc > 1 ? argv[1] : "";
  const std::string self = llvm::sys::fs::getMainExecutable(
      argc > 0 ? argv[0] : "growth-bench", reinterpret_cast<void *>(&main));
  const std::string binDir = llvm::sys::path::parent_path(self).str();
  llvm::outs() << "\n## Growth in the size of the input (CPU seconds of the "
                  "whole process, median of "
               << kRepeats
               << "; exponent: Theil-Sen slope on log-log, less the floor)\n\n"
               << "| path | n | CPU at each n | floor (s) | exponent | at "
                  "most n log n |\n|---|---|---|---|---|---|\n";
  std::vector<std::string> files;
  bool within = true;
  for (const Row &row : rows(binDir, files))
    if (row.name.find(only.str()) != std::string::npos)
      within = runRow(binDir, row) && within;
  for (const std::string &file : files)
    llvm::sys::fs::remove(file);
  llvm::outs() << "Every path at most n log n (exponent <= "
               << llvm::formatv("{0:F1}", kNLogNAllowance)
               << "): " << (within ? "yes" : "NO") << "\n";
  return 0;
}
