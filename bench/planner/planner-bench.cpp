//===- planner-bench.cpp - the planner's full search, timed ---------------===//
//
// Runs `schedc plan`'s exact search (no cap) for DeepSeek-V3 on 2,048
// devices (h800-ib, gb200-nvl72 and tpu-v5p, FP8 where the device has it)
// and Llama 3 405B on 131,072 H100s several times and prints the
// candidates considered, pruned by their memory and time bounds, scheduled
// and measured for memory, simulated and verified, with the median wall
// time. Targets: under 2 s for DeepSeek-V3 on 2,048, under 10 s for Llama 3
// 405B on 131,072, on a 2-core machine.
//
// Then the same DeepSeek-V3 questions as a user asks them (issue 31): the
// whole process of exactly `schedc plan --model deepseek-v3 --cluster C
// --devices 2048 --precision fp8 --no-fewer-devices` (bf16 on tpu-v5p), as
// a child process (reading the presets, the search, proving the
// recommendation, the bands, printing), its wall time, CPU time and peak
// RSS, median of 3. The in-process rows above leave out the proof and the
// process; these hold the 2 s target. Each in-process run plans with a
// cost model of its own: one shared by the runs kept the layer, head and
// split caches the first run filled, and the median was of warm runs.
//
// Then the two questions at 2^40 tokens per step that docs/limits.md
// measured over the 10 s CPU promise (Llama 3 405B on 2^20 H100s,
// DeepSeek-V3 on 2,048 H800s in FP8), the same way: the whole process,
// CPU time against 10 s.
//
// Then the search's growth in the model's layers: Llama 3 8B's layer on
// 64 H100s at 64 to 512 layers, CPU time (other processes on the machine
// do not inflate it), and the exponent of the growth (issue 31: 0.28 s to
// 6.6 s, 23x for 8x the layers).
//
//===----------------------------------------------------------------------===//

#include "bench/common/ProcessTimes.h"
#include "bench/peak-rss/PeakRssRun.h"
#include "lib/CostModel/CostModel.h"
#include "lib/Planner/Planner.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <optional>
#include <vector>

using namespace sched;

namespace {
/// Medians of `runs` runs of one command as a child process under
/// peak-rss: wall and CPU seconds, peak RSS, and the worst exit status.
struct ProcessMedians {
  double wall = 0, cpu = 0, peakMiB = 0;
  int status = 0;
};

/// Runs `argv` `runs` times; nullopt (and a line on stderr) when peak-rss
/// cannot run it.
std::optional<ProcessMedians> timeProcess(llvm::StringRef binDir,
                                          const std::vector<std::string> &argv,
                                          int runs) {
  std::vector<double> walls, cpus, peaks;
  ProcessMedians result;
  for (int run = 0; run < runs; ++run) {
    const double cpuBefore = childrenCpuSeconds();
    std::optional<ChildRun> child = runChild(binDir, argv);
    if (!child) {
      llvm::errs() << "planner-bench: cannot run " << binDir << "/peak-rss\n";
      return std::nullopt;
    }
    walls.push_back(child->seconds);
    cpus.push_back(childrenCpuSeconds() - cpuBefore);
    peaks.push_back(child->peakMiB);
    result.status = std::max(result.status, child->status);
  }
  result.wall = median(walls);
  result.cpu = median(cpus);
  result.peakMiB = median(peaks);
  return result;
}

/// `schedc plan` for DeepSeek-V3 on 2,048 devices of each cluster, with
/// the command line (default moments and rows). Returns whether
/// every median wall time is under the 2 s target.
bool benchWholeProcess(llvm::StringRef binDir) {
  constexpr int kRuns = 3;
  llvm::outs() << "\nplanner: the whole process of schedc plan --model "
                  "deepseek-v3 --cluster C --devices 2048 --precision fp8 "
                  "--no-fewer-devices (bf16 on tpu-v5p; median of "
               << kRuns << " runs)\n";
  llvm::outs() << llvm::formatv("{0,-32} {1,9} {2,9} {3,9} {4,5}\n",
                                "model / cluster / devices", "wall s",
                                "CPU s", "peak MiB", "exit");
  bool met = true;
  for (llvm::StringRef cluster : {"h800-ib", "gb200-nvl72", "tpu-v5p"}) {
    const std::string precision = cluster == "tpu-v5p" ? "bf16" : "fp8";
    std::optional<ProcessMedians> m =
        timeProcess(binDir,
                    {(binDir + "/schedc").str(), "plan", "--model",
                     "deepseek-v3", "--cluster", cluster.str(), "--devices",
                     "2048", "--precision", precision, "--no-fewer-devices"},
                    kRuns);
    if (!m)
      return false;
    met = met && m->status == 0 && m->wall < 2;
    llvm::outs() << llvm::formatv(
        "{0,-32} {1,9:f2} {2,9:f2} {3,9:f0} {4,5}\n",
        llvm::formatv("deepseek-v3 {0} 2048", cluster).str(), m->wall, m->cpu,
        m->peakMiB, m->status);
  }
  llvm::outs() << "Target (the whole process under 2 s wall on each "
                  "cluster): "
               << (met ? "met" : "NOT met") << "\n";
  return met;
}

/// The two questions at the largest batch descriptions accept (2^40
/// tokens) that docs/limits.md measured over 10 s of CPU: the whole
/// process, as a user runs it, median of 3. Returns whether each median
/// CPU time is under the 10 s promise.
bool benchLargestBatch(llvm::StringRef binDir) {
  constexpr int kRuns = 3;
  llvm::outs() << "\nplanner: the whole process at 2^40 tokens per step "
                  "(schedc plan ... --global-batch-tokens 1099511627776; "
                  "median of "
               << kRuns << " runs)\n";
  llvm::outs() << llvm::formatv("{0,-40} {1,9} {2,9} {3,9} {4,5}\n",
                                "model / cluster / devices", "wall s", "CPU s",
                                "peak MiB", "exit");
  struct Question {
    const char *model, *cluster, *devices, *precision;
  };
  bool met = true;
  for (Question q : {Question{"llama3-405b", "h100-ib", "1048576", nullptr},
                     Question{"deepseek-v3", "h800-ib", "2048", "fp8"}}) {
    std::vector<std::string> argv = {(binDir + "/schedc").str(),
                                     "plan",
                                     "--model",
                                     q.model,
                                     "--cluster",
                                     q.cluster,
                                     "--devices",
                                     q.devices,
                                     "--global-batch-tokens",
                                     "1099511627776"};
    if (q.precision)
      argv.insert(argv.end(), {"--precision", q.precision});
    std::optional<ProcessMedians> m = timeProcess(binDir, argv, kRuns);
    if (!m)
      return false;
    met = met && m->status == 0 && m->cpu < 10;
    llvm::outs() << llvm::formatv(
        "{0,-40} {1,9:f2} {2,9:f2} {3,9:f0} {4,5}\n",
        llvm::formatv("{0} {1} {2}", q.model, q.cluster, q.devices).str(),
        m->wall, m->cpu, m->peakMiB, m->status);
  }
  llvm::outs() << "Target (each under 10 s of CPU): "
               << (met ? "met" : "NOT met") << "\n";
  return met;
}
} // namespace

int main(int argc, char **argv) {
  const std::string self = llvm::sys::fs::getMainExecutable(
      argc > 0 ? argv[0] : "planner-bench", reinterpret_cast<void *>(&main));
  const std::string binDir = llvm::sys::path::parent_path(self).str();
  constexpr int kRuns = 3;
  llvm::outs() << "planner: exact search, no cap (median of " << kRuns
               << " runs)\n";
  llvm::outs() << llvm::formatv(
      "{0,-32} {1,10} {2,10} {3,10} {4,10} {5,10} {6,9} {7,9}  {8}\n",
      "model / cluster / devices", "considered", "mem-pruned", "time-pruned", "mem-checked",
      "simulated", "verified", "wall s", "recommended");
  struct Row {
    llvm::StringRef model, cluster;
    int64_t devices;
    double target;
  };
  bool met = true;
  for (Row row : {Row{"deepseek-v3", "h800-ib", 2048, 2},
                  Row{"deepseek-v3", "gb200-nvl72", 2048, 2},
                  Row{"deepseek-v3", "tpu-v5p", 2048, 2},
                  Row{"llama3-405b", "h100-ib", 131072, 10}}) {
    llvm::StringRef name = row.cluster;
    std::optional<ModelSpec> model = modelPreset(row.model);
    std::optional<ClusterSpec> cluster = clusterPreset(name);
    TrainingSpec training;
    training.devices = row.devices;
    training.seqLen = model->seqLen;
    training.globalBatchTokens = model->globalBatchTokens;
    training.precision =
        cluster->peakFp8 > 0 ? Precision::FP8 : Precision::BF16;
    std::vector<double> walls;
    std::optional<PlanResult> last;
    for (int run = 0; run < kRuns; ++run) {
      // Cold caches, as in a user's process.
      CostModel costs(*model, *cluster, training);
      const auto start = std::chrono::steady_clock::now();
      llvm::Expected<PlanResult> result = plan(costs, PlanOptions());
      walls.push_back(std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count());
      if (!result) {
        llvm::errs() << "planner-bench: " << llvm::toString(result.takeError())
                     << "\n";
        return 1;
      }
      last = std::move(*result);
    }
    std::string recommended = "none fits";
    if (last->recommended >= 0) {
      const Candidate &c = last->ranked[last->recommended];
      recommended = c.layout.str() + " " + c.scheduleName().str();
    }
    const double wall = median(walls);
    met = met && wall < row.target;
    llvm::outs() << llvm::formatv(
        "{0,-32} {1,10} {2,10} {3,10} {4,10} {5,10} {6,9} {7,9}  {8}\n",
        llvm::formatv("{0} {1} {2}", row.model, name, row.devices).str(),
        last->considered, last->prunedMemory, last->prunedBound,
        last->memoryChecked, last->lowered, last->verified,
        llvm::formatv("{0:f2}", wall).str(), recommended);
  }
  llvm::outs() << "Targets (DeepSeek-V3 on 2,048 under 2 s, Llama 3 405B on "
                  "131,072 under 10 s): "
               << (met ? "met" : "NOT met") << "\n";

  benchWholeProcess(binDir);
  benchLargestBatch(binDir);

  llvm::outs() << "\nplanner: growth in layers (Llama 3 8B's layer, "
                  "h100-ib, 64 devices; CPU s, one run)\n";
  std::optional<ModelSpec> llama = modelPreset("llama3-8b");
  std::optional<ClusterSpec> h100 = clusterPreset("h100-ib");
  double first = 0, last = 0;
  for (int64_t layers : {64, 128, 256, 512}) {
    ModelSpec model = *llama;
    model.layers = layers;
    TrainingSpec training;
    training.devices = 64;
    training.seqLen = model.seqLen;
    training.globalBatchTokens = model.globalBatchTokens;
    CostModel costs(model, *h100, training);
    const std::clock_t start = std::clock();
    llvm::Expected<PlanResult> result = plan(costs, PlanOptions());
    const double cpu =
        static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
    if (!result) {
      llvm::errs() << "planner-bench: " << llvm::toString(result.takeError())
                   << "\n";
      return 1;
    }
    if (layers == 64)
      first = cpu;
    last = cpu;
    llvm::outs() << llvm::formatv("  {0,4} layers {1,8:f2} s  {2} measured "
                                  "for memory\n",
                                  layers, cpu, result->memoryChecked);
  }
  llvm::outs() << llvm::formatv("  exponent in layers (64 -> 512): {0:f2}\n",
                                std::log(last / first) / std::log(8.0));
  return 0;
}
