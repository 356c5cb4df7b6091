//===- Recommendation.h - the layout to run, and why ------------*- C++ -*-===//
//
// From the candidates the search simulated: the ranking (ties to the
// simpler layout), the recommendation (the simplest layout within 3% of the
// best: no PP before PP, fewer parallel dimensions before more, a lower
// ZeRO stage before a higher), the best with and without PP, each proved by
// the verifier, and one sentence that says why from the numbers
// (docs/planner.md, "Output").
//
//===----------------------------------------------------------------------===//

#ifndef LIB_PLANNER_RECOMMENDATION_H
#define LIB_PLANNER_RECOMMENDATION_H

#include "lib/Planner/Evaluation.h"
#include "lib/Planner/Planner.h"

#include <string>
#include <vector>

namespace sched {

/// The recommendation window: a layout within this share of the best step
/// time is a tie, and the simplest of the ties is recommended.
constexpr double kRecommendationTie = 0.03;

/// Ranks the fitting candidates `fitting`, proves what the report shows
/// and fills `result`'s ranked table, recommendation, best with and without
/// PP, and verifier count. A candidate the verifier rejects is dropped.
void recommend(const CostModel &model, CandidateEvaluator &evaluator,
               const PlanOptions &options, std::vector<Candidate> fitting,
               PlanResult &result);

/// Why `result`'s recommendation, from its numbers: the exposed
/// data-parallel traffic for a layout without PP, the term that differs
/// most from the best layout without PP for one with it; a search stopped
/// by `options.maxEvaluations` says its answer is unproved. Empty without a
/// recommendation.
struct ComparisonBand;

/// What the reason adds about confidence: "undecided within the model's
/// error" when the best layouts with and without PP are closer than the
/// spread of held-out published pairs, and why the pick is not row 1.
std::string confidenceNote(const PlanResult &result,
                           const ComparisonBand &band);

std::string recommendationReason(const CostModel &model,
                                 const PlanOptions &options,
                                 const PlanResult &result);

} // namespace sched

#endif // LIB_PLANNER_RECOMMENDATION_H
