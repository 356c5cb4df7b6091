//===- PlanReport.cpp - schedc plan's text report -------------------------===//

#include "lib/Report/PlanReport.h"
#include "lib/Render/PictureLabels.h"
#include "lib/Report/TextTable.h"
#include "lib/Report/WrappedText.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

using namespace sched;

namespace {
/// The unit a column of times is written in, chosen by its largest value.
struct TimeUnit {
  const char *name;
  double scale;
  int decimals;
};
} // namespace

static TimeUnit timeUnitFor(double largest) {
  if (largest >= 1)
    return {"s", 1, 2};
  if (largest >= 1e-3)
    return {"ms", 1e3, largest >= 0.1 ? 1 : 2};
  return {"us", 1e6, 1};
}

std::string sched::formatDuration(double seconds) {
  if (seconds == 0)
    return "0 s";
  const double magnitude = std::fabs(seconds);
  if (magnitude >= 1000)
    return groupThousands(std::llround(seconds)) + " s";
  if (magnitude >= 100)
    return fmt::format("{:.0f} s", seconds);
  if (magnitude >= 1)
    return fmt::format("{:.2f} s", seconds);
  if (magnitude >= 1e-3)
    return fmt::format("{:.1f} ms", seconds * 1e3);
  return fmt::format("{:.0f} us", seconds * 1e6);
}

static std::string formatPercent(double ratio) {
  return fmt::format("{:.1f}%", 100 * ratio);
}

double sched::memoryHeadroom(const Candidate &candidate) {
  if (!(candidate.memory.limit > 0))
    return NAN;
  return 1 - candidate.memory.peak / candidate.memory.limit;
}

void sched::printPlanSetting(llvm::raw_ostream &os, const CostModel &model) {
  const ClusterSpec &c = model.getCluster();
  const TrainingSpec &t = model.getTraining();
  os << wrapText(fmt::format(
      "{} on {} x {} ({}: {}-device {} domains at {:.0f} GB/s, {:.1f} GB/s "
      "scale-out, {:.0f} GB HBM), {} tokens/step ({} x {}), {}{}",
      model.getModel().name, groupThousands(t.devices), c.deviceName, c.name,
      c.domainSize, c.topology == Topology::Torus3D ? "torus" : "switched",
      c.domainBandwidth / 1e9, c.scaleOutBandwidth / 1e9, c.hbmBytes / 1e9,
      groupThousands(t.globalBatchTokens),
      groupThousands(t.globalBatchSequences()), groupThousands(t.seqLen),
      precisionName(t.precision).str(),
      t.stack.empty() ? std::string() : ", stack " + t.stack));
}

void sched::printSearchSummary(llvm::raw_ostream &os,
                               const PlanResult &result) {
  std::string text = fmt::format(
      "searched {} candidates: {} pruned by their memory bound, {} by their "
      "time bound; {} scheduled and measured for memory, {} of them fitting "
      "and simulated, {} lowered and verified; {:.2f} s",
      groupThousands(result.considered), groupThousands(result.prunedMemory),
      groupThousands(result.prunedBound), groupThousands(result.memoryChecked),
      groupThousands(result.lowered), groupThousands(result.verified),
      result.seconds);
  if (result.truncated)
    text += fmt::format(" (stopped at --max-lowered with {} candidates not "
                        "searched: unproved)",
                        groupThousands(result.leftByCap));
  if (result.prunedSize)
    text += fmt::format(" ({} more left out: schedules over 2^21 actions)",
                        groupThousands(result.prunedSize));
  os << wrapText(text);
}

/// The proof column: "yes" when the verifier proved the lowered schedule,
/// blank when it was not asked, else the verdict ("unknown", "violated").
static std::string proofCell(llvm::StringRef verdict) {
  if (verdict == "verified")
    return "yes";
  return verdict.split(':').first.str();
}

/// The legend under the table and the warning for rows short of memory.
static void printTableNotes(llvm::raw_ostream &os,
                            llvm::ArrayRef<Candidate> candidates) {
  const double limit = candidates.front().memory.limit;
  const bool oneLimit =
      limit > 0 && llvm::all_of(candidates, [&](const Candidate &c) {
        return c.memory.limit == limit;
      });
  os << wrapText(fmt::format(
      "mem: the fullest device's peak; free: usable memory{} left at the "
      "peak, ! under {:.0f}%; comm: tp, cp, ep, pp and dp communication not "
      "hidden by compute; proved: by the verifier (blank: not run; "
      "--verify-all runs it on each row)",
      oneLimit ? fmt::format(" ({:.1f} GB)", limit / 1e9) : std::string(),
      100 * kLowMemoryHeadroom));

  std::vector<std::string> short_;
  std::optional<size_t> firstRoomy;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const double headroom = memoryHeadroom(candidates[i]);
    if (std::isnan(headroom))
      continue;
    if (headroom >= kLowMemoryHeadroom) {
      if (!firstRoomy)
        firstRoomy = i;
      continue;
    }
    short_.push_back(fmt::format(
        "#{} ({} free, {:.1f} of {:.1f} GB)", i + 1, formatPercent(headroom),
        (candidates[i].memory.limit - candidates[i].memory.peak) / 1e9,
        candidates[i].memory.limit / 1e9));
  }
  if (short_.empty())
    return;
  std::string alternative =
      firstRoomy
          ? fmt::format("the fastest listed with {:.0f}% free is #{} ({}, {} "
                        "free)",
                        100 * kLowMemoryHeadroom, *firstRoomy + 1,
                        formatDuration(candidates[*firstRoomy].stepTime),
                        formatPercent(memoryHeadroom(candidates[*firstRoomy])))
          : fmt::format("none listed has {:.0f}% free",
                        100 * kLowMemoryHeadroom);
  os << wrapText(fmt::format(
      "warning: under {:.0f}% of usable memory free in {}: the memory "
      "estimate's error or allocator fragmentation can run {} out of "
      "memory; {}",
      100 * kLowMemoryHeadroom, fmt::join(short_, ", "),
      short_.size() == 1 ? "it" : "them", alternative));
}

void sched::printCandidateTable(llvm::raw_ostream &os,
                                llvm::ArrayRef<Candidate> candidates) {
  if (candidates.empty()) {
    os << "    (no candidate fits in memory)\n";
    return;
  }
  double longest = 0;
  for (const Candidate &c : candidates)
    longest = std::max(longest, c.stepTime);
  const TimeUnit unit = timeUnitFor(longest);
  auto time = [&](double seconds) {
    return fmt::format("{:.{}f}", seconds * unit.scale, unit.decimals);
  };

  using Align = TextTable::Align;
  TextTable table;
  table.addColumn("#");
  for (const char *axis : {"dp", "tp", "pp", "vpp", "ep", "cp"})
    table.addColumn(axis);
  table.addColumn("zero");
  table.addColumn("recompute", "", Align::Left);
  table.addColumn("mb x M");
  table.addColumn("schedule", "", Align::Left);
  table.addColumn("step", unit.name);
  table.addColumn("MFU", "%");
  table.addColumn("mem", "GB");
  table.addColumn("free", "%");
  table.addColumn("", "", Align::Left);
  table.addColumn("bubble", "%");
  table.addColumn("comm", unit.name);
  table.addColumn("proved", "", Align::Left);
  table.addColumn("also", "", Align::Left);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate &c = candidates[i];
    const Layout &l = c.layout;
    const StepBreakdown &t = c.time;
    const double headroom = memoryHeadroom(c);
    const double comm = t.tensorParallel + t.contextParallel +
                        t.expertParallel + t.pipelineParallel + t.dataParallel;
    table.addRow({
        std::to_string(i + 1),
        std::to_string(l.dp),
        std::to_string(l.tp),
        std::to_string(l.pp),
        std::to_string(l.vpp),
        std::to_string(l.ep),
        std::to_string(l.cp),
        std::to_string(l.zero),
        recomputeName(l.recompute),
        fmt::format("{}x{}", l.microbatchSize, l.microbatches),
        c.scheduleName().str(),
        time(c.stepTime),
        fmt::format("{:.1f}", 100 * c.mfu),
        fmt::format("{:.1f}", c.memory.peak / 1e9),
        std::isnan(headroom) ? std::string()
                             : fmt::format("{:.1f}", 100 * headroom),
        headroom < kLowMemoryHeadroom ? "!" : "",
        fmt::format("{:.1f}", 100 * c.bubbleRatio),
        time(comm),
        proofCell(c.verdict),
        l.extras(),
    });
  }
  table.print(os, " ");
  printTableNotes(os, candidates);
}

void sched::printRecommendation(llvm::raw_ostream &os, const PlanResult &result,
                                llvm::StringRef band) {
  auto printBest = [&](llvm::StringRef label,
                       const std::optional<Candidate> &best) {
    if (!best)
      os << wrapText(fmt::format("best {}: none fits", label.str()));
    else
      os << wrapText(fmt::format("best {}: {} {}, {}, MFU {}", label.str(),
                                 best->layout.str(), best->scheduleName().str(),
                                 formatDuration(best->stepTime),
                                 formatPercent(best->mfu)));
  };
  printBest("without PP", result.bestWithoutPipeline);
  printBest("with PP", result.bestWithPipeline);
  if (result.recommended < 0)
    return;
  const Candidate &rec = result.ranked[result.recommended];
  os << wrapText(fmt::format(
      "recommended: #{} {} zero={} recompute={} microbatch {} x {}, {} ({})",
      result.recommended + 1, rec.layout.str(), rec.layout.zero,
      recomputeName(rec.layout.recompute), rec.layout.microbatchSize,
      rec.layout.microbatches, rec.scheduleName().str(),
      rec.verdict.empty() ? "not verified" : rec.verdict));
  os << wrapText("why: " + result.reason);
  os << wrapText("band: " + band.str());
}

void sched::printFewerDevices(llvm::raw_ostream &os, const FewerDevices &fewer,
                              int64_t devices) {
  const std::string gain =
      std::isfinite(fewer.allDevicesStepTime)
          ? fmt::format("a step {} shorter than the best on all {}",
                        formatPercent(1 - fewer.best.stepTime /
                                              fewer.allDevicesStepTime),
                        groupThousands(devices))
          : fmt::format("where no layout fits on all {}",
                        groupThousands(devices));
  os << wrapText(fmt::format(
      "fewer devices: {} of the {} ({} idle) run {} {} in {}, MFU {}: {}",
      groupThousands(fewer.devices), groupThousands(devices),
      groupThousands(devices - fewer.devices), fewer.best.layout.str(),
      fewer.best.scheduleName().str(), formatDuration(fewer.best.stepTime),
      formatPercent(fewer.best.mfu), gain));
}

void sched::printPlanComparison(
    llvm::raw_ostream &os, llvm::ArrayRef<ClusterSpec> clusters,
    llvm::ArrayRef<std::optional<PlanResult>> results) {
  os << "\ncomparison\n";
  TextTable table;
  table.addColumn("", "", TextTable::Align::Left);
  for (const ClusterSpec &c : clusters)
    table.addColumn(c.name, "", TextTable::Align::Left);
  auto describe = [](const std::optional<Candidate> &c) {
    return c ? fmt::format("{}, MFU {} ({})", formatDuration(c->stepTime),
                           formatPercent(c->mfu), c->scheduleName().str())
             : std::string("none fits");
  };
  auto recommended = [](const PlanResult &r) -> const Candidate * {
    return r.recommended < 0 ? nullptr : &r.ranked[r.recommended];
  };
  auto row = [&](llvm::StringRef label, auto cell) {
    std::vector<std::string> cells{label.str()};
    for (const std::optional<PlanResult> &r : results)
      cells.push_back(r ? cell(*r) : std::string("-"));
    table.addRow(std::move(cells));
  };
  row("best without PP",
      [&](const PlanResult &r) { return describe(r.bestWithoutPipeline); });
  row("best with PP",
      [&](const PlanResult &r) { return describe(r.bestWithPipeline); });
  row("recommended", [&](const PlanResult &r) {
    const Candidate *c = recommended(r);
    return c ? c->layout.str() : std::string("none fits");
  });
  row("  schedule", [&](const PlanResult &r) {
    const Candidate *c = recommended(r);
    return c ? fmt::format("{}, zero {}, recompute {}", c->scheduleName().str(),
                           c->layout.zero, recomputeName(c->layout.recompute))
             : std::string("-");
  });
  row("  step, MFU", [&](const PlanResult &r) {
    const Candidate *c = recommended(r);
    return c ? fmt::format("{}, {}", formatDuration(c->stepTime),
                           formatPercent(c->mfu))
             : std::string("-");
  });
  row("  memory, free", [&](const PlanResult &r) {
    const Candidate *c = recommended(r);
    if (!c)
      return std::string("-");
    const double headroom = memoryHeadroom(*c);
    const std::string peak = fmt::format("{:.1f} GB", c->memory.peak / 1e9);
    return std::isnan(headroom)
               ? peak
               : fmt::format("{}, {}{}", peak, formatPercent(headroom),
                             headroom < kLowMemoryHeadroom ? " !" : "");
  });
  table.print(os, " ");
}
