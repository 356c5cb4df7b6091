//===- ActionTime.h - the smallest time an action may take ------*- C++ -*-===//
//
// Stage costs (sched.stage, --cost) are 0 or at least this: a picture's
// scale, its width over the makespan, overflows past it (f=1e-320 drew an
// SVG at x="inf"). Header only: the dialect's verifier uses it too.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_LIMITS_ACTIONTIME_H
#define LIB_LIMITS_ACTIONTIME_H

namespace sched {

/// The smallest nonzero time of an action, in any unit.
inline constexpr double kMinActionTime = 1e-300;

} // namespace sched

#endif // LIB_LIMITS_ACTIONTIME_H
