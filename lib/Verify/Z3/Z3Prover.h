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

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sched {

/// A counting rule over actions: of `actions` (each (kind, stage,
/// microbatch), kinds as ActionKind codes), the number that have `kind`
/// (and `stage`, `microbatch` where >= 0) must be `required`.
struct CountRule {
  /// The rule in words, for the SMT-LIB file's comments.
  std::string description;
  std::vector<std::array<int64_t, 3>> actions;
  int64_t kind = 0, stage = -1, microbatch = -1;
  int64_t required = 0;
};

/// A range rule: an action's stage lies in [0, stages) and its microbatch,
/// when it has one (`hasMicrobatch`), in [0, microbatches).
struct RangeRule {
  std::string description;
  int64_t stage = 0, microbatch = 0;
  bool hasMicrobatch = false;
  int64_t stages = 0, microbatches = 0;
};

struct Z3Query {
  uint32_t numNodes = 0;
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  /// Candidate times (one per node): when given, Z3 checks the candidate
  /// (with the chain values of each MemoryChain) against every constraint
  /// instead of searching.
  std::vector<int64_t> witness;
  std::vector<MemoryChain> chains;
  std::optional<MemoryAmount> limit;
  /// Structural facts, (observed, required): each states that what the
  /// schedule has is what a rule requires (see Violation::observed).
  std::vector<std::pair<int64_t, int64_t>> facts;
  /// Structural rules stated over the schedule's actions (a count, a
  /// range): the encoding declares each action's attributes and the rule.
  std::vector<CountRule> counts;
  std::vector<RangeRule> ranges;
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

/// Asks Z3 whether `query` is satisfiable.
Z3Outcome solveWithZ3(const Z3Query &query, double timeoutSeconds);

/// The SMT-LIB 2 text of `query` without any candidate (Z3's own
/// printing), ending in (check-sat); `error` is set if Z3 failed.
std::string encodeSmtlib(const Z3Query &query, std::string &error);

} // namespace sched

#endif // LIB_VERIFY_Z3_Z3PROVER_H
