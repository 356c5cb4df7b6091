//===- PlanReport.h - schedc plan's text report -----------------*- C++ -*-===//
//
// What `schedc plan` prints for one cluster and across clusters: the
// setting, the search, the candidate table (one unit per column, memory
// headroom per row, a warning for rows under 5% free), the best with and
// without pipeline parallelism, the recommendation with why and its band,
// and the comparison of clusters; prose wrapped to 120 columns
// (docs/planner.md, "Reading the table").
//
//===----------------------------------------------------------------------===//

#ifndef LIB_REPORT_PLANREPORT_H
#define LIB_REPORT_PLANREPORT_H

#include "lib/CostModel/CostModel.h"
#include "lib/Planner/FewerDevices.h"
#include "lib/Planner/Planner.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace sched {

/// Free memory under which a row is flagged: 5% of the usable memory.
inline constexpr double kLowMemoryHeadroom = 0.05;

/// `seconds` in the unit that suits it, with the unit: "16.37 s",
/// "572.2 ms", "85 us", "1,234 s".
std::string formatDuration(double seconds);

/// The fraction of the candidate's usable memory left at its peak; NaN
/// when no limit is known.
double memoryHeadroom(const Candidate &candidate);

/// "deepseek-v3 on 2,048 x H800 SXM (h800-ib: ...), 62,914,560
/// tokens/step (15,360 x 4,096), fp8", wrapped.
void printPlanSetting(llvm::raw_ostream &os, const CostModel &model);

/// How many candidates the search weighed, pruned, simulated and proved.
void printSearchSummary(llvm::raw_ostream &os, const PlanResult &result);

/// The candidates, best first, a row each, numbered from 1; then a legend
/// and a warning naming the rows with under 5% of their memory free.
void printCandidateTable(llvm::raw_ostream &os,
                         llvm::ArrayRef<Candidate> candidates);

/// The best with and without PP, the recommendation, why, and `band` (how
/// far to trust the step time; ErrorBands.h).
void printRecommendation(llvm::raw_ostream &os, const PlanResult &result,
                         llvm::StringRef band);

/// The best layout on fewer than `devices` devices, where it is faster.
void printFewerDevices(llvm::raw_ostream &os, const FewerDevices &fewer,
                       int64_t devices);

/// The recommendations for several clusters, a column each; a result
/// missing for a cluster prints "-".
void printPlanComparison(llvm::raw_ostream &os,
                         llvm::ArrayRef<ClusterSpec> clusters,
                         llvm::ArrayRef<std::optional<PlanResult>> results);

} // namespace sched

#endif // LIB_REPORT_PLANREPORT_H
