//===- Strategy.h - pipeline strategies and their generators ----*- C++ -*-===//
//
// The pipeline strategies schedc knows, and the generators that turn a
// pipeline shape into a compute-only schedule (no transfers yet).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_GENERATE_STRATEGY_H
#define LIB_GENERATE_STRATEGY_H

#include "lib/Schedule/Schedule.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace sched {

/// A pipeline schedule family.
enum class Strategy : uint8_t { GPipe, OneFOneB };

/// What a pipeline looks like to a generator.
struct PipelineShape {
  int32_t pp = 1;
  int32_t vpp = 1;
  int32_t microbatches = 1;
  StagePlacement placement = StagePlacement::Loop;
  /// Per-stage costs, pp * vpp of them, or empty for unit costs.
  std::vector<StageCost> stageCosts;

  int32_t numStages() const { return pp * vpp; }
};

/// The name a strategy goes by on the command line and in pass names.
llvm::StringRef strategyName(Strategy strategy);

/// The strategy called `name`, if any.
std::optional<Strategy> parseStrategy(llvm::StringRef name);

/// All strategy names, comma-separated, for error messages and help.
std::string strategyNames();

/// Generates the compute order of `strategy` for `shape`, or explains why
/// the strategy does not apply to that shape.
llvm::Expected<Schedule> generateSchedule(Strategy strategy,
                                          const PipelineShape &shape);

/// One empty program per rank of `shape`, with its costs attached.
Schedule emptySchedule(const PipelineShape &shape);

/// GPipe: every forward, then every backward (Huang et al. 2019).
Schedule generateGPipe(const PipelineShape &shape);

/// 1F1B / PipeDream-Flush: warm-up forwards, then one forward one backward,
/// then the remaining backwards (Narayanan et al. 2021).
Schedule generateOneFOneB(const PipelineShape &shape);

} // namespace sched

#endif // LIB_GENERATE_STRATEGY_H
