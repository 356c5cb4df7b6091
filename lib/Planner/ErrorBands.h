//===- ErrorBands.h - how far to trust a prediction -------------*- C++ -*-===//
//
// Every answer of the planner carries an error band: the spread of the
// signed errors (predicted / published throughput - 1) of the held-out
// published runs of its class in bench/fidelity (software stack, dense or
// MoE, device generation, context length). The bands are data, written by
// `bench/fidelity/fidelity.py --write-bands` from held-out runs only and
// compiled in from lib/Planner/error-bands.json; nothing in the cost model
// is set from them. A class with fewer than kMinBandRuns held-out runs is
// "unvalidated" and borrows the band of the nearest coarser class.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_PLANNER_ERRORBANDS_H
#define LIB_PLANNER_ERRORBANDS_H

#include "lib/CostModel/CostModel.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace sched {

/// Fewer held-out runs than this leave a class unvalidated.
inline constexpr int kMinBandRuns = 5;

/// The class of a prediction, as bench/fidelity groups its errors.
struct ErrorClass {
  /// The --stack name, or "none".
  std::string stack;
  /// "dense" or "moe".
  std::string kind;
  /// deviceGeneration(): "ampere", "hopper", "blackwell", "tpu", "other".
  std::string generation;
  /// The sequence length's band: "8k" (<= 8,192), "32k" (<= 32,768) or
  /// "long".
  std::string context;

  /// "stack/kind/generation/context"; coarser keys put "*" for the fields
  /// they drop, from the stack on (level 0: exact .. 4: every run).
  std::string key(int level = 0) const;
  llvm::json::Object toJson() const;
};

ErrorClass errorClassOf(const CostModel &model);

/// The band a prediction rests on.
struct ErrorBand {
  /// The class key the band's figures come from.
  std::string basis;
  /// Held-out runs behind `basis`, and in the exact class.
  int runs = 0;
  int exactRuns = 0;
  /// The range of the throughput error (predicted / published - 1) the
  /// runs' errors fall in (fidelity.py: the ratio within exp(+-a), a the
  /// 90th percentile of |ln ratio|); the published value of a prediction T is expected in
  /// [T / (1 + high), T / (1 + low)].
  double low = 0;
  double high = 0;
  /// False when no band table is present (then nothing is claimed).
  bool known = false;

  bool validated() const { return exactRuns >= kMinBandRuns; }
  /// The published step time's range for a predicted one.
  double stepLow(double step) const { return step * (1 + low); }
  double stepHigh(double step) const { return step * (1 + high); }
  llvm::json::Object toJson(double stepTime, double tflops) const;
};

/// How far apart two predictions must be for their order to be trusted:
/// the 80th percentile of the ratio errors of held-out published pairs
/// (two runs of one table, model and sequence length) of the class, as a
/// fraction; 0 pairs when unknown.
struct ComparisonBand {
  int pairs = 0;
  double spread = 0;
  /// The class key the pairs come from.
  std::string basis;
};

/// The compiled-in band table (lib/Planner/error-bands.json).
ErrorBand errorBandFor(const ErrorClass &errorClass);
ComparisonBand comparisonBandFor(const ErrorClass &errorClass);
/// The table's provenance line ("bench/fidelity held-out split, ...").
std::string errorBandSource();

/// Parses a band table (the format fidelity.py writes): used for the
/// compiled-in one and by tests.
struct ErrorBandTable {
  std::string source;
  llvm::json::Object classes;
  /// Per class key: {"pairs": N, "spread": S}.
  llvm::json::Object comparison;

  ErrorBand bandFor(const ErrorClass &errorClass) const;
  /// The most specific class with kMinBandRuns pairs or more (the coarsest
  /// one whatever its count).
  ComparisonBand comparisonFor(const ErrorClass &errorClass) const;
};
llvm::Expected<ErrorBandTable> parseErrorBandTable(llvm::StringRef text);

} // namespace sched

#endif // LIB_PLANNER_ERRORBANDS_H
