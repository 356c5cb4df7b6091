//===- StrategyTestSupport.h - shared checks of generated schedules -*- C++ -*-===//
//
// What the strategy grid tests share: shapes, completeness of a generated
// schedule, and generate-then-simulate with a robustness run under uneven
// costs.
//
//===----------------------------------------------------------------------===//

#ifndef TEST_UNIT_STRATEGYTESTSUPPORT_H
#define TEST_UNIT_STRATEGYTESTSUPPORT_H

#include "lib/Generate/Strategy.h"
#include "lib/Simulate/Simulate.h"

#include <string>
#include <vector>

namespace sched::test {

/// Which backward a schedule must use for every (stage, microbatch).
enum class BackwardForm { Full, Split, Either };

/// A pipeline shape.
PipelineShape makeShape(int32_t pp, int32_t vpp, int32_t m);

/// "pp=4 vpp=2 m=8", and with the strategy's name in front.
std::string describe(const PipelineShape &shape);
std::string describe(Strategy strategy, const PipelineShape &shape);

/// The error generateSchedule gives for `shape`, or "" when it accepts it.
std::string errorOf(Strategy strategy, const PipelineShape &shape);

/// The index of the first member of every overlap in `actions`, in order.
std::vector<size_t> overlapStarts(const std::vector<Action> &actions);

/// Every (stage, microbatch) runs one F and one backward of `form` (B, or I
/// and W), on the rank `placement` gives its stage; only compute runs; an
/// overlap is one F next to one B or I of another microbatch.
void expectComplete(const Schedule &schedule, const PipelineShape &shape,
                    StagePlacement placement, BackwardForm form);

/// Generates, checks completeness, checks that the order also runs to the
/// end under uneven costs (running depends on the order only), and returns
/// the unit-cost simulation (empty on failure, which is reported). The
/// schedule goes to `out` when given.
Timeline generateAndSimulate(Strategy strategy, const PipelineShape &shape,
                             StagePlacement placement, BackwardForm form,
                             Schedule *out = nullptr);

} // namespace sched::test

#endif // TEST_UNIT_STRATEGYTESTSUPPORT_H
