//===- Recommendation.cpp - the layout to run, and why --------------------===//

#include "lib/Planner/Recommendation.h"

#include "lib/Planner/ErrorBands.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <tuple>

using namespace sched;

/// Ties (the same time to the nanosecond) go to the simpler layout, then to
/// the schedule without overlap pairs (combined 1F1B with one microbatch is
/// no-pp), then to the one with less memory.
static bool faster(const Candidate &a, const Candidate &b) {
  const double ta = std::round(a.stepTime * 1e9);
  const double tb = std::round(b.stepTime * 1e9);
  return std::make_tuple(ta, a.dimensions(), a.layout.zero,
                         overlapsCommunication(a.strategy), a.memory.peak) <
         std::make_tuple(tb, b.dimensions(), b.layout.zero,
                         overlapsCommunication(b.strategy), b.memory.peak);
}

/// The recommendation's order among layouts within 3% of the best: no PP
/// before PP, fewer parallel dimensions before more, a lower ZeRO stage
/// before a higher.
static auto simplicity(const Candidate &c) {
  return std::make_tuple(c.hasPipeline(), c.dimensions(), c.layout.zero,
                         std::round(c.stepTime * 1e9), c.memory.peak);
}

void sched::recommend(const CostModel &model, CandidateEvaluator &evaluator,
                      const PlanOptions &options,
                      std::vector<Candidate> fitting, PlanResult &result) {
  llvm::stable_sort(fitting, faster);
  // Proves what the report shows; a candidate the verifier rejects is
  // dropped.
  auto verify = [&](Candidate &candidate) {
    evaluator.detail(candidate);
    if (!options.verify || !candidate.verdict.empty())
      return;
    evaluator.releaseOrders();
    if (proveCandidate(model, candidate, options.proofResourceLimit))
      ++result.verified;
  };

  int recommended = -1;
  if (!fitting.empty()) {
    std::vector<size_t> within;
    for (size_t i = 0; i < fitting.size(); ++i)
      if (fitting[i].stepTime <=
          (1 + kRecommendationTie) * fitting.front().stepTime)
        within.push_back(i);
    llvm::stable_sort(within, [&](size_t a, size_t b) {
      return simplicity(fitting[a]) < simplicity(fitting[b]);
    });
    for (size_t i : within) {
      verify(fitting[i]);
      if (fitting[i].fits) {
        recommended = static_cast<int>(i);
        break;
      }
    }
  }
  // The best of each class, proved.
  for (Candidate &candidate : fitting) {
    std::optional<Candidate> &slot = candidate.hasPipeline()
                                         ? result.bestWithPipeline
                                         : result.bestWithoutPipeline;
    if (slot)
      continue;
    verify(candidate);
    if (candidate.fits)
      slot = candidate;
  }
  // The report: the best `top` (each proved too with verifyAll), then the
  // recommendation when it is not among them.
  const size_t top = static_cast<size_t>(std::max(options.top, 1));
  std::vector<Candidate> report;
  for (size_t i = 0; i < fitting.size() && report.size() < top; ++i) {
    Candidate &candidate = fitting[i];
    if (options.verifyAll || static_cast<int>(i) == recommended)
      verify(candidate);
    else
      evaluator.detail(candidate);
    if (!candidate.fits)
      continue;
    if (static_cast<int>(i) == recommended)
      result.recommended = static_cast<int>(report.size());
    report.push_back(candidate);
  }
  if (recommended >= 0 && result.recommended < 0) {
    result.recommended = static_cast<int>(report.size());
    report.push_back(fitting[recommended]);
  }
  result.ranked = std::move(report);
}

/// Why no PP: the data-parallel traffic it exposes, and how the best PP
/// layout compares.
static std::string reasonWithoutPipeline(const ClusterSpec &cluster,
                                         const Candidate &rec,
                                         const PlanResult &result) {
  const double computeTime = rec.time.compute;
  const double dpTotal = rec.time.dataParallel + rec.time.optimizer;
  std::string rest;
  if (result.bestWithPipeline) {
    const double gain = rec.stepTime / result.bestWithPipeline->stepTime - 1;
    rest = gain > 0 ? llvm::formatv("; the best PP layout is only {0:f1}% "
                                    "faster",
                                    100 * gain)
                          .str()
                    : llvm::formatv("; the best PP layout is {0:f1}% slower",
                                    -100 * gain)
                          .str();
  }
  return llvm::formatv(
      "no PP: exposed data-parallel traffic is {0:f2}x of compute on a "
      "{1}-device {2} domain{3}",
      computeTime > 0 ? dpTotal / computeTime : 0, cluster.domainSize,
      cluster.topology == Topology::Torus3D ? "torus" : "switched", rest);
}

/// Why PP: how much slower the best layout without it is, and the term
/// that differs most between the two.
static std::string reasonWithPipeline(const Candidate &rec,
                                      const Candidate &flat) {
  const std::pair<const char *, double> terms[] = {
      {"compute", flat.time.compute - rec.time.compute},
      {"tensor-parallel communication",
       flat.time.tensorParallel - rec.time.tensorParallel},
      {"context-parallel communication",
       flat.time.contextParallel - rec.time.contextParallel},
      {"expert all-to-all", flat.time.expertParallel - rec.time.expertParallel},
      {"data-parallel communication",
       flat.time.dataParallel - rec.time.dataParallel},
  };
  const auto *largest = std::max_element(
      std::begin(terms), std::end(terms),
      [](const auto &a, const auto &b) { return a.second < b.second; });
  std::string detail;
  if (largest->second > 0)
    detail =
        llvm::formatv("; most of the gap is {0} ({1:f2} s more{2})",
                      largest->first, largest->second,
                      largest == std::begin(terms) &&
                              flat.layout.recompute != Recompute::None
                          ? llvm::formatv(", with {0} recomputation "
                                          "to fit in memory",
                                          recomputeName(flat.layout.recompute))
                                .str()
                          : std::string())
            .str();
  return llvm::formatv(
      "PP: the best layout without it ({0}, {1}) is {2:f1}% slower{3}",
      flat.layout.str(), flat.scheduleName(),
      100 * (flat.stepTime / rec.stepTime - 1), detail);
}

std::string sched::confidenceNote(const PlanResult &result,
                                  const ComparisonBand &band) {
  if (result.recommended < 0 || result.ranked.empty())
    return "";
  const Candidate &rec = result.ranked[result.recommended];
  std::string note;
  // PP or not: decided only when the two best differ by more than
  // published pairs' orders are held to.
  if (band.pairs > 0 && result.bestWithPipeline &&
      result.bestWithoutPipeline) {
    const double margin = std::fabs(result.bestWithoutPipeline->stepTime /
                                        result.bestWithPipeline->stepTime -
                                    1);
    if (margin < band.spread)
      note += llvm::formatv("; undecided within the model's error: with "
                            "and without PP are {0:f1}% apart, inside the "
                            "{1:f1}% that {2} held-out published pairs of "
                            "{3} keep their order to",
                            100 * margin, 100 * band.spread, band.pairs,
                            band.basis)
                  .str();
  }
  // Why not the fastest row.
  if (result.recommended > 0) {
    const Candidate &fastest = result.ranked.front();
    const double gain = rec.stepTime / fastest.stepTime - 1;
    note += llvm::formatv("; picked over #1 ({0}, {1:f1}% faster) as the "
                          "simpler layout within {2:f0}% (no PP before PP, "
                          "fewer parallel dimensions, a lower ZeRO stage){3}",
                          fastest.layout.str(), 100 * gain,
                          100 * kRecommendationTie,
                          band.pairs > 0 && gain < band.spread
                              ? ", a difference inside the model's error"
                              : "")
                .str();
  }
  return note;
}

std::string sched::recommendationReason(const CostModel &model,
                                        const PlanOptions &options,
                                        const PlanResult &result) {
  if (result.recommended < 0)
    return "";
  if (result.truncated)
    // What was not searched could hold a better layout of either kind: no
    // reason that compares them stands.
    return llvm::formatv(
        "unproved: the search stopped at --max-lowered {0} with candidates "
        "left whose bounds could beat it; run without the cap for an exact "
        "answer",
        options.maxEvaluations);
  const Candidate &rec = result.ranked[result.recommended];
  std::string reason;
  if (!rec.hasPipeline())
    reason = reasonWithoutPipeline(model.getCluster(), rec, result);
  else if (!result.bestWithoutPipeline)
    return "PP: no layout without pipeline parallelism fits in memory";
  else
    reason = reasonWithPipeline(rec, *result.bestWithoutPipeline);
  return reason +
         confidenceNote(result, comparisonBandFor(errorClassOf(model)));
}
