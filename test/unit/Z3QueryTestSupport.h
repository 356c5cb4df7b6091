//===- Z3QueryTestSupport.h - small Z3 queries the Z3 tests share -*- C++
//-*-===//
//
// Chains of wait edges, closed into a cycle or given their candidate times:
// the queries the Z3 context, resource-limit and witness-check tests build
// on.
//
//===----------------------------------------------------------------------===//

#ifndef TEST_UNIT_Z3QUERYTESTSUPPORT_H
#define TEST_UNIT_Z3QUERYTESTSUPPORT_H

#include "lib/Verify/Z3/Z3Prover.h"

#include <cstdint>

namespace sched::test {

/// Nodes 0 -> 1 -> ... -> n-1, each after the one before: satisfiable.
inline Z3Query chain(uint32_t n) {
  Z3Query query;
  query.numNodes = n;
  for (uint32_t i = 0; i + 1 < n; ++i)
    query.edges.emplace_back(i, i + 1);
  return query;
}

/// The chain closed into a cycle, n-1 -> 0: unsatisfiable, which only Z3's
/// search (not its simplifier) finds.
inline Z3Query cycle(uint32_t n) {
  Z3Query query = chain(n);
  query.edges.emplace_back(n - 1, 0);
  return query;
}

/// The chain with its candidate times 0, 1, ..., n-1: the witness path,
/// which Z3's simplifier decides.
inline Z3Query chainWithWitness(uint32_t n) {
  Z3Query query = chain(n);
  for (uint32_t i = 0; i < n; ++i)
    query.witness.push_back(i);
  return query;
}

} // namespace sched::test

#endif // TEST_UNIT_Z3QUERYTESTSUPPORT_H
