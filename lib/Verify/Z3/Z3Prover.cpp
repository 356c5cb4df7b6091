//===- Z3Prover.cpp - the Z3 encoding of a schedule -----------------------===//

#include "lib/Verify/Z3/Z3Prover.h"

#include <z3++.h>

#include <algorithm>
#include <chrono>
#include <fstream>

using namespace sched;

namespace {
/// Builds the constraints of a query into a Z3 solver.
class Encoder {
public:
  Encoder(z3::context &context, z3::solver &solver)
      : context(context), solver(solver) {}

  void encode(const Z3Query &query) {
    times.reserve(query.numNodes);
    for (uint32_t n = 0; n < query.numNodes; ++n)
      times.push_back(fresh("t"));
    for (auto [from, to] : query.edges)
      add(times[from] < times[to]);
    if (!query.limit)
      return;
    // Differences against a zero variable keep every constraint in
    // difference logic.
    z3::expr zero = fresh("zero");
    add(zero == 0);
    for (const MemoryChain &chain : query.chains) {
      z3::expr previous = zero;
      int64_t offset = chain.start;
      for (size_t k = 0; k < chain.steps.size(); ++k) {
        z3::expr value = fresh("m");
        add(value - previous == context.int_val(offset + chain.steps[k]));
        add(value - zero <= context.int_val(*query.limit));
        memory.push_back(value);
        previous = value;
        offset = 0;
      }
    }
  }

  /// Asserts the candidate: times and memory values.
  void assertWitness(const Z3Query &query) {
    for (size_t n = 0; n < query.witness.size(); ++n)
      solver.add(times[n] == context.int_val(query.witness[n]));
    if (!query.memoryWitness || !query.limit)
      return;
    size_t k = 0;
    for (const MemoryChain &chain : query.chains)
      for (int64_t value : chain.values)
        solver.add(memory[k++] == context.int_val(value));
  }

  size_t variables() const { return times.size() + memory.size(); }
  size_t constraints = 0;

private:
  z3::expr fresh(const char *prefix) {
    return z3::expr(context,
                    Z3_mk_fresh_const(context, prefix, context.int_sort()));
  }
  void add(const z3::expr &constraint) {
    solver.add(constraint);
    ++constraints;
  }

  z3::context &context;
  z3::solver &solver;
  std::vector<z3::expr> times;
  std::vector<z3::expr> memory;
};
} // namespace

Z3Outcome sched::solveWithZ3(const Z3Query &query, double timeoutSeconds,
                             const std::string &smtlibPath) {
  Z3Outcome outcome;
  const auto begin = std::chrono::steady_clock::now();
  try {
    z3::config config;
    config.set("auto_config", false);
    z3::context context(config);
    z3::solver solver(context);
    z3::params params(context);
    // Every constraint is a difference constraint; the Bellman-Ford based
    // difference-logic solver is the fastest Z3 has for them.
    params.set("arith.solver", 1u);
    if (timeoutSeconds > 0)
      params.set("timeout", std::max(1u, static_cast<unsigned>(timeoutSeconds * 1000)));
    solver.set(params);
    Encoder encoder(context, solver);
    encoder.encode(query);
    outcome.variables = encoder.variables();
    outcome.constraints = encoder.constraints;
    if (!smtlibPath.empty()) {
      std::ofstream file(smtlibPath);
      file << "; schedc: a schedule runs to the end within its memory iff "
              "this is sat\n"
           << solver.to_smt2();
      if (!file) {
        outcome.reason = "cannot write " + smtlibPath;
        return outcome;
      }
    }
    encoder.assertWitness(query);
    switch (solver.check()) {
    case z3::sat:
      outcome.answer = Z3Answer::Sat;
      break;
    case z3::unsat:
      outcome.answer = Z3Answer::Unsat;
      break;
    case z3::unknown:
      outcome.answer = Z3Answer::Unknown;
      outcome.reason = solver.reason_unknown();
      break;
    }
  } catch (const z3::exception &error) {
    outcome.answer = Z3Answer::Unknown;
    outcome.reason = std::string("z3: ") + error.msg();
  }
  outcome.seconds = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - begin)
                        .count();
  return outcome;
}
