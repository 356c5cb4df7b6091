//===- Z3Prover.h - the Z3 encoding of a schedule ---------------*- C++ -*-===//
//
// Internal to lib/Verify. Encodes "there is an execution of the schedule"
// as integer difference constraints: a time per class of actions, t_u < t_v
// for every wait edge, and per rank a memory value at each local maximum,
// m_k = m_{k-1} + step_k, m_k <= limit. Satisfiable iff the schedule runs
// to the end within its memory. Built with exceptions: z3::exception is
// caught here and becomes an unknown answer.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_VERIFY_Z3_Z3PROVER_H
#define LIB_VERIFY_Z3_Z3PROVER_H

#include "lib/Verify/MemoryCheck.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sched {

struct Z3Query {
  uint32_t numNodes = 0;
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  /// Candidate times (one per node): when given, Z3 checks the candidate
  /// (with the chain values of each MemoryChain) against every constraint
  /// instead of searching.
  std::vector<int64_t> witness;
  std::vector<MemoryChain> chains;
  std::optional<int64_t> limit;
};

enum class Z3Answer : uint8_t { Sat, Unsat, Unknown };

struct Z3Outcome {
  Z3Answer answer = Z3Answer::Unknown;
  /// The solver's reason when unknown (timeout, resource limit, error).
  std::string reason;
  double seconds = 0;
  size_t variables = 0;
  size_t constraints = 0;
};

/// Asks Z3 whether `query` is satisfiable. When `smtlibPath` is non-empty
/// the query without any candidate is written there as SMT-LIB 2.
Z3Outcome solveWithZ3(const Z3Query &query, double timeoutSeconds,
                      const std::string &smtlibPath = "");

} // namespace sched

#endif // LIB_VERIFY_Z3_Z3PROVER_H
