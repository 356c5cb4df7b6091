//===- Z3Prover.cpp - the Z3 encoding of a schedule -----------------------===//

#include "lib/Verify/Z3/Z3Prover.h"

#include "llvm/ADT/STLExtras.h"

#include <z3++.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

using namespace sched;

namespace {
/// Builds the constraints of a query. With `ground` set, node times and
/// memory values are the candidate's numerals instead of variables, so
/// that Z3 checks the candidate against every constraint.
class Encoder {
public:
  Encoder(z3::context &context, const Z3Query &query, bool ground)
      : context(context), query(query), ground(ground) {
    if (!ground)
      return;
    // Once ground, an edge's constraint is t_from < t_to over the
    // candidate's two numerals, and edges whose times are equal pairs
    // state the very same constraint: each distinct one is given to Z3
    // once (about one per twenty edges of a lowered 1F1B).
    groundEdges.reserve(query.edges.size());
    for (auto [from, to] : query.edges)
      groundEdges.emplace_back(query.witness[from], query.witness[to]);
    llvm::sort(groundEdges);
    groundEdges.erase(llvm::unique(groundEdges), groundEdges.end());
  }

  /// The number of edge constraints encode() takes a range of.
  size_t numEdgeConstraints() const {
    return ground ? groundEdges.size() : query.edges.size();
  }

  /// The constraints of edges [edgeBegin, edgeEnd) (of the distinct ground
  /// ones, for a ground encoding) and, if `withMemory`, of the facts and
  /// the memory chains.
  z3::expr_vector encode(size_t edgeBegin, size_t edgeEnd, bool withMemory) {
    z3::expr_vector constraints(context);
    // A ground encoding checks one value per node instead of solving for
    // it; both count as the encoding's unknowns.
    variableCount = query.numNodes;
    if (!ground && times.empty()) {
      times.reserve(query.numNodes);
      for (uint32_t n = 0; n < query.numNodes; ++n)
        times.push_back(fresh("t"));
    }
    for (size_t k = edgeBegin; k < edgeEnd; ++k) {
      if (ground) {
        constraints.push_back(numeral(groundEdges[k].first) <
                              numeral(groundEdges[k].second));
        continue;
      }
      auto [from, to] = query.edges[k];
      constraints.push_back(times[from] < times[to]);
    }
    // Structural facts: an uninterpreted constant equal to what the
    // schedule has, which a rule requires to be something else.
    if (withMemory)
      for (const StructuralFact &f : query.facts) {
        z3::expr fact = fresh("fact");
        constraints.push_back(fact == context.int_val(f.observed));
        constraints.push_back(fact == context.int_val(f.required));
        ++variableCount;
      }
    // Structural rules over the schedule's actions: each action's kind,
    // stage and microbatch as constants equal to what the schedule says,
    // and the rule over them.
    if (withMemory) {
      for (const CountRule &rule : query.counts)
        constraints.push_back(countRule(rule, constraints));
      for (const PairingRule &rule : query.pairings)
        constraints.push_back(pairingRule(rule, constraints));
      for (const PlacementRule &rule : query.placements)
        constraints.push_back(placementRule(rule, constraints));
      for (const TransferRule &rule : query.transfers)
        constraints.push_back(transferRule(rule, constraints));
      for (const SelectionRule &rule : query.selections)
        constraints.push_back(selectionRule(rule, constraints));
      for (const BackwardRule &rule : query.backwards)
        constraints.push_back(backwardRule(rule, constraints));
      for (const DividesRule &rule : query.divides)
        constraints.push_back(dividesRule(rule, constraints));
      for (const ShardingRule &rule : query.shardings)
        constraints.push_back(shardingRule(rule, constraints));
      for (const ReadingRule &rule : query.readings)
        constraints.push_back(readingRule(rule, constraints));
      for (const StreamRule &rule : query.streams)
        constraints.push_back(streamRule(rule, constraints));
      for (const RangeRule &rule : query.ranges) {
        z3::expr stage = attribute("stage", rule.stage, constraints);
        constraints.push_back(stage >= 0 &&
                              stage < context.int_val(rule.stages));
        if (rule.hasMicrobatch) {
          z3::expr mb = attribute("mb", rule.microbatch, constraints);
          constraints.push_back(mb >= 0 &&
                                mb < context.int_val(rule.microbatches));
          // The microbatch runs through the stage's pipeline replica.
          if (rule.stagesPerReplica > 0 && rule.microbatchesPerReplica > 0)
            constraints.push_back(
                stage / context.int_val(rule.stagesPerReplica) ==
                mb / context.int_val(rule.microbatchesPerReplica));
        }
      }
    }
    if (!withMemory || !query.limit)
      return constraints;
    // Differences against a zero variable keep every constraint in
    // difference logic.
    z3::expr zero = ground ? context.int_val(0) : fresh("zero");
    if (!ground)
      constraints.push_back(zero == 0);
    const z3::expr limit = amount(*query.limit);
    if (ground) {
      groundMemory(zero, limit, constraints);
      return constraints;
    }
    for (const MemoryChain &chain : query.chains) {
      z3::expr previous = zero;
      for (size_t k = 0; k < chain.steps.size(); ++k) {
        z3::expr value = fresh("m");
        constraints.push_back(value - previous == amount(chain.steps[k]));
        constraints.push_back(value - zero <= limit);
        previous = value;
        ++variableCount;
      }
    }
    return constraints;
  }

  /// The memory chains over the candidate's values: each step states
  /// value - previous == step and value <= limit over three numerals, and
  /// a step whose numerals are those of another states the very same
  /// constraint, so each distinct one is given to Z3 once (as the ground
  /// edges are). A rank's memory repeats a few levels through the steady
  /// state: Llama 3 405B's 2^40-token proof has 529,905 steps and 1.06
  /// million such constraints.
  void groundMemory(const z3::expr &zero, const z3::expr &limit,
                    z3::expr_vector &constraints) {
    using Step = std::array<MemoryAmount, 3>;
    std::vector<Step> steps;
    std::vector<MemoryAmount> values;
    for (const MemoryChain &chain : query.chains) {
      MemoryAmount previous = 0;
      for (size_t k = 0; k < chain.steps.size(); ++k) {
        steps.push_back({previous, chain.values[k], chain.steps[k]});
        values.push_back(chain.values[k]);
        previous = chain.values[k];
        ++variableCount;
      }
    }
    llvm::sort(steps);
    steps.erase(llvm::unique(steps), steps.end());
    llvm::sort(values);
    values.erase(llvm::unique(values), values.end());
    for (const auto &[previous, value, step] : steps)
      constraints.push_back(amount(value) - amount(previous) == amount(step));
    for (MemoryAmount value : values)
      constraints.push_back(amount(value) - zero <= limit);
  }

  /// Unknowns of the encoding (times and memory values; a ground
  /// encoding counts the memory values it checks).
  size_t variables() const { return variableCount; }

  /// Drops the numerals made so far (Z3 frees those no constraint holds):
  /// the candidate check calls it after each chunk, so Z3 holds one chunk's
  /// numerals rather than every distinct time of the schedule. A time met
  /// again in a later chunk is made again, the same numeral: the goals, and
  /// the resource units their simplification spends, are unchanged.
  void forgetNumerals() { numerals.clear(); }

private:
  /// A candidate time as a numeral, made once per value until
  /// forgetNumerals: Z3 shares equal numerals anyway, but making one costs
  /// about a microsecond, and the candidate's times take few distinct
  /// values (WaitGraph::shrink).
  const z3::expr &numeral(int64_t value) {
    auto it = numerals.find(value);
    if (it == numerals.end())
      it = numerals.emplace(value, context.int_val(value)).first;
    return it->second;
  }

  /// A memory amount as a numeral; amounts may exceed 64 bits, and only
  /// those go through their decimal text (the same numeral: Z3 makes one
  /// term per value however it is given; the text cost a plan's proof
  /// about a twentieth of its CPU time).
  z3::expr amount(MemoryAmount value) {
    if (value >= std::numeric_limits<int64_t>::min() &&
        value <= std::numeric_limits<int64_t>::max())
      return context.int_val(static_cast<int64_t>(value));
    return context.int_val(toDecimal(value).c_str());
  }

  /// The sum of `terms`, as one n-ary sum: Z3 frees a long chain of binary
  /// sums in time quadratic in its length (a 4,000-action count took 28 s
  /// to free its context).
  z3::expr total(const z3::expr_vector &terms) {
    return terms.empty() ? context.int_val(0) : z3::sum(terms);
  }
  /// How many computes (F, B, I or W: the first four kinds) of `stage`
  /// `program` holds, over each action's kind and stage as constants.
  z3::expr computesOf(const std::vector<RuleAction> &program,
                      const z3::expr &stage, z3::expr_vector &constraints) {
    z3::expr_vector terms(context);
    for (const RuleAction &a : program) {
      z3::expr kind = attribute("kind", a.kind, constraints);
      z3::expr at = attribute("stage", a.stage, constraints);
      terms.push_back(
          indicator(kind >= static_cast<int>(ActionKind::Forward) &&
                    kind <= static_cast<int>(ActionKind::BackwardWeight) &&
                    at == stage));
    }
    return total(terms);
  }
  /// 1 when `condition` holds, else 0.
  z3::expr indicator(const z3::expr &condition) {
    return z3::ite(condition, context.int_val(1), context.int_val(0));
  }

  /// A constant named `prefix` equal to `value` (an action's attribute);
  /// in a ground encoding the numeral itself, as for a node's time: the
  /// rules over the schedule's attributes are then closed terms that Z3's
  /// simplifier evaluates, without a constant and an equation per
  /// attribute.
  z3::expr attribute(const char *prefix, int64_t value,
                     z3::expr_vector &constraints) {
    if (ground)
      return numeral(value);
    z3::expr constant = fresh(prefix);
    constraints.push_back(constant == context.int_val(value));
    ++variableCount;
    return constant;
  }

  /// sum over the rule's actions of [the action matches] == required.
  z3::expr countRule(const CountRule &rule, z3::expr_vector &constraints) {
    z3::expr_vector terms(context);
    for (const std::array<int64_t, 4> &action : rule.actions) {
      z3::expr matches = attribute("kind", action[0], constraints) ==
                         context.int_val(rule.kind);
      if (rule.stage >= 0)
        matches = matches && attribute("stage", action[1], constraints) ==
                                 context.int_val(rule.stage);
      if (rule.microbatch >= 0)
        matches = matches && attribute("mb", action[2], constraints) ==
                                 context.int_val(rule.microbatch);
      if (rule.direction >= 0)
        matches = matches && attribute("dir", action[3], constraints) ==
                                 context.int_val(rule.direction);
      terms.push_back(indicator(matches));
    }
    const z3::expr sum = total(terms);
    return rule.atLeast ? sum >= context.int_val(rule.required)
                        : sum == context.int_val(rule.required);
  }

  /// Whether `rule` counts `a` on its left (or right) side, as the
  /// constraint over `kind` and the selector's constant; `selected` says
  /// whether it does for the schedule's values.
  z3::expr selects(const PairingRule &rule, const RuleAction &a, bool left,
                   const z3::expr &kind, z3::expr_vector &constraints,
                   bool &selected) {
    if (rule.form == PairingRule::Form::Collective) {
      selected = a.group == rule.group;
      return attribute("group", a.group, constraints) ==
             context.int_val(rule.group);
    }
    const int64_t wantKind =
        static_cast<int64_t>(left ? ActionKind::Send : ActionKind::Recv);
    const int64_t wantPeer = left ? rule.rightRank : rule.leftRank;
    selected = a.kind == wantKind && a.peer == wantPeer;
    return kind == context.int_val(wantKind) &&
           attribute("peer", a.peer, constraints) == context.int_val(wantPeer);
  }

  /// The model stage of a collective's stage: itself when negative (none).
  z3::expr modelStage(const z3::expr &stage, int64_t stagesPerReplica) {
    return z3::ite(stage < 0, stage,
                   z3::mod(stage, context.int_val(stagesPerReplica)));
  }

  /// Both sides select as many actions, and the k-th of each agree.
  z3::expr pairingRule(const PairingRule &rule, z3::expr_vector &constraints) {
    struct Selected {
      const RuleAction *action;
      z3::expr kind;
    };
    auto side = [&](const std::vector<RuleAction> &program, bool left,
                    std::vector<Selected> &selected) {
      z3::expr_vector terms(context);
      for (const RuleAction &a : program) {
        z3::expr kind = attribute("kind", a.kind, constraints);
        bool chosen = false;
        z3::expr matches = selects(rule, a, left, kind, constraints, chosen);
        terms.push_back(indicator(matches));
        if (chosen)
          selected.push_back({&a, kind});
      }
      return total(terms);
    };
    std::vector<Selected> lefts, rights;
    // The left program's constants first, in the file's order.
    const z3::expr leftCount = side(rule.left, true, lefts);
    const z3::expr rightCount = side(rule.right, false, rights);
    z3::expr result = leftCount == rightCount;
    const bool message = rule.form == PairingRule::Form::Message;
    for (size_t k = 0; k < std::min(lefts.size(), rights.size()); ++k) {
      const RuleAction &l = *lefts[k].action, &r = *rights[k].action;
      z3::expr lStage = attribute("stage", l.stage, constraints);
      z3::expr rStage = attribute("stage", r.stage, constraints);
      z3::expr lBytes = attribute("bytes", l.bytes, constraints);
      z3::expr rBytes = attribute("bytes", r.bytes, constraints);
      // A message's size not stated is its pair's; a collective's is a size
      // of its own (-1), equal only to another not stated.
      z3::expr agree = message ? lBytes < 0 || rBytes < 0 || lBytes == rBytes
                               : lBytes == rBytes;
      if (message) {
        z3::expr lDir = attribute("dir", l.direction, constraints);
        z3::expr rDir = attribute("dir", r.direction, constraints);
        z3::expr lMb = attribute("mb", l.microbatch, constraints);
        z3::expr rMb = attribute("mb", r.microbatch, constraints);
        agree = rDir == lDir && rStage == lStage + 1 - 2 * lDir && rMb == lMb &&
                agree;
        // A shape exchange pairs only with a shape exchange; the constants
        // are stated only where either side is one.
        if (l.payload != 0 || r.payload != 0)
          agree = agree && attribute("payload", l.payload, constraints) ==
                               attribute("payload", r.payload, constraints);
      } else {
        z3::expr lKey = attribute("key", l.stageKey, constraints);
        z3::expr rKey = attribute("key", r.stageKey, constraints);
        agree = lefts[k].kind == rights[k].kind &&
                z3::implies(lKey == 1 || rKey == 1,
                            modelStage(lStage, rule.stagesPerReplica) ==
                                modelStage(rStage, rule.stagesPerReplica)) &&
                agree;
      }
      result = result && agree;
    }
    return result;
  }

  /// Holds: some program computes the subject's stage. OneHolder: exactly
  /// one program computes the stage.
  z3::expr placementRule(const PlacementRule &rule,
                         z3::expr_vector &constraints) {
    const bool holds = rule.form == PlacementRule::Form::Holds;
    // The stage the rule is about: the subject action's, as a constant of
    // that action, or the rule's own.
    std::optional<z3::expr> subject;
    if (!holds)
      subject = context.int_val(rule.stage);
    else if (rule.subjectProgram < rule.programs.size() &&
             rule.subjectAction < rule.programs[rule.subjectProgram].size())
      subject = attribute(
          "stage", rule.programs[rule.subjectProgram][rule.subjectAction].stage,
          constraints);
    else
      return context.bool_val(false);
    z3::expr_vector programs(context);
    for (const std::vector<RuleAction> &program : rule.programs) {
      const z3::expr computes = computesOf(program, *subject, constraints);
      programs.push_back(holds ? computes : indicator(computes >= 1));
    }
    const z3::expr all = total(programs);
    return holds ? all >= 1 : all == 1;
  }

  /// The subject transfer's far stage is in its replica, computed on the
  /// rank its peer names, and that rank is not its own.
  z3::expr transferRule(const TransferRule &rule,
                        z3::expr_vector &constraints) {
    if (rule.subjectProgram >= rule.programs.size() ||
        rule.subjectAction >= rule.programs[rule.subjectProgram].size())
      return context.bool_val(false);
    const RuleAction &t =
        rule.programs[rule.subjectProgram][rule.subjectAction];
    z3::expr kind = attribute("kind", t.kind, constraints);
    z3::expr dir = attribute("dir", t.direction, constraints);
    z3::expr stage = attribute("stage", t.stage, constraints);
    z3::expr peer = attribute("peer", t.peer, constraints);
    // Downstream: a forward send or a backward receive.
    const z3::expr send =
        kind == context.int_val(static_cast<int>(ActionKind::Send));
    const z3::expr downstream = z3::ite(send, dir == 0, dir == 1);
    const z3::expr far = z3::ite(downstream, stage + 1, stage - 1);
    const z3::expr perReplica = context.int_val(rule.stagesPerReplica);
    // Integer division (SMT-LIB div) of Int terms.
    z3::expr result = far >= 0 && far / perReplica == stage / perReplica;
    result = result &&
             peer != context.int_val(static_cast<int64_t>(rule.subjectProgram));
    // The computes of the far stage on the rank the peer names.
    z3::expr_vector ranks(context);
    for (size_t q = 0; q < rule.programs.size(); ++q)
      ranks.push_back(z3::ite(peer == context.int_val(static_cast<int64_t>(q)),
                              computesOf(rule.programs[q], far, constraints),
                              context.int_val(0)));
    return result && total(ranks) >= 1;
  }

  /// Whether a pattern's member set holds every rank it needs, over the
  /// members and the needed ranks as constants (true when it needs none).
  z3::expr joins(const ActionPattern &pattern, z3::expr_vector &constraints) {
    z3::expr_vector members(context);
    for (int32_t m : pattern.members)
      members.push_back(attribute("member", m, constraints));
    z3::expr_vector all(context);
    for (int32_t h : pattern.holds) {
      z3::expr needed = attribute("holds", h, constraints);
      z3::expr_vector in(context);
      for (unsigned k = 0; k < members.size(); ++k)
        in.push_back(members[k] == needed);
      all.push_back(z3::mk_or(in));
    }
    return z3::mk_and(all);
  }

  /// The actions of the program matching any pattern number what the rule
  /// requires, when its premise holds.
  z3::expr selectionRule(const SelectionRule &rule,
                         z3::expr_vector &constraints) {
    std::optional<z3::expr> premise;
    if (!rule.premiseName.empty())
      premise =
          attribute(rule.premiseName.c_str(), rule.premiseValue, constraints);
    z3::expr_vector joined(context);
    bool anyStage = false, anyGroup = false, anyBytes = false, anyNamed = false;
    for (const ActionPattern &pattern : rule.patterns) {
      joined.push_back(joins(pattern, constraints));
      anyStage |= pattern.stage >= 0;
      anyGroup |= pattern.group >= 0;
      anyBytes |= pattern.ofBytes;
      anyNamed |= !pattern.declarations.empty();
    }
    z3::expr_vector terms(context);
    for (const RuleAction &a : rule.program) {
      z3::expr kind = attribute("kind", a.kind, constraints);
      std::optional<z3::expr> stage, group, bytes, named;
      if (anyStage)
        stage = attribute("stage", a.stage, constraints);
      if (anyGroup)
        group = attribute("group", a.group, constraints);
      if (anyBytes)
        bytes = attribute("bytes", a.bytes, constraints);
      if (anyNamed)
        named = attribute("named", a.declaration, constraints);
      z3::expr_vector any(context);
      for (size_t p = 0; p < rule.patterns.size(); ++p) {
        const ActionPattern &pattern = rule.patterns[p];
        z3::expr match =
            kind == context.int_val(static_cast<int64_t>(pattern.kind));
        if (pattern.stage >= 0)
          match = match && *stage == context.int_val(pattern.stage);
        if (pattern.group >= 0)
          match = match && *group == context.int_val(pattern.group);
        if (pattern.ofBytes)
          match =
              match && (*bytes < 0 || *bytes == context.int_val(pattern.bytes));
        if (!pattern.holds.empty())
          match = match && joined[p];
        if (!pattern.declarations.empty()) {
          z3::expr_vector names(context);
          names.push_back(*named == -1);
          for (int32_t d : pattern.declarations)
            names.push_back(*named == d);
          match = match && z3::mk_or(names);
        }
        any.push_back(match);
      }
      terms.push_back(indicator(z3::mk_or(any)));
    }
    const z3::expr count = total(terms);
    const z3::expr required = context.int_val(rule.required);
    z3::expr bound = count == required;
    if (rule.bound == SelectionRule::Bound::AtLeast)
      bound = count >= required;
    else if (rule.bound == SelectionRule::Bound::AtMost)
      bound = count <= required;
    for (int64_t alternative : rule.orCounts)
      bound = bound || count == context.int_val(alternative);
    return premise ? z3::implies(*premise > 1, bound) : bound;
  }

  /// One B and no I or W, or one I and one W and no B.
  z3::expr backwardRule(const BackwardRule &rule,
                        z3::expr_vector &constraints) {
    z3::expr_vector fulls(context), inputs(context), weights(context);
    auto add = [&](z3::expr_vector &terms, const z3::expr &kind, ActionKind k,
                   const z3::expr &here) {
      terms.push_back(indicator(here && kind == static_cast<int>(k)));
    };
    for (const std::array<int64_t, 4> &action : rule.actions) {
      z3::expr kind = attribute("kind", action[0], constraints);
      z3::expr here = attribute("stage", action[1], constraints) ==
                          context.int_val(rule.stage) &&
                      attribute("mb", action[2], constraints) ==
                          context.int_val(rule.microbatch);
      add(fulls, kind, ActionKind::Backward, here);
      add(inputs, kind, ActionKind::BackwardInput, here);
      add(weights, kind, ActionKind::BackwardWeight, here);
    }
    const z3::expr full = total(fulls), input = total(inputs),
                   weight = total(weights);
    return (full == 1 && input == 0 && weight == 0) ||
           (full == 0 && input == 1 && weight == 1);
  }

  /// Alternation: after each action, the stage's UNSHARDs so far less its
  /// RESHARDs are 0 or 1, a constant `open` per action, the previous one
  /// plus the action's step (a chain of constants, not of nested sums).
  /// Use: every RESHARD of the stage that closes an UNSHARD comes after a
  /// compute of the stage since it, a constant `used` per action, 0 after
  /// an UNSHARD of the stage, 1 after a compute or a RESHARD of it (and
  /// before the first action), else the previous one.
  z3::expr shardingRule(const ShardingRule &rule,
                        z3::expr_vector &constraints) {
    const bool alternation = rule.form == ShardingRule::Form::Alternation;
    z3::expr_vector bounds(context);
    z3::expr previous = context.int_val(alternation ? 0 : 1);
    const z3::expr stage = context.int_val(rule.stage);
    const z3::expr zero = context.int_val(0), one = context.int_val(1);
    for (const RuleAction &a : rule.program) {
      z3::expr kind = attribute("kind", a.kind, constraints);
      z3::expr here = attribute("stage", a.stage, constraints) == stage;
      const z3::expr unshard =
          here && kind == static_cast<int>(ActionKind::Unshard);
      const z3::expr reshard =
          here && kind == static_cast<int>(ActionKind::Reshard);
      if (alternation) {
        const z3::expr next = chained(
            "open",
            previous + z3::ite(unshard, one, z3::ite(reshard, -one, zero)),
            constraints);
        bounds.push_back(next >= 0 && next <= 1);
        previous = next;
      } else {
        const z3::expr compute =
            here && kind >= static_cast<int>(ActionKind::Forward) &&
            kind <= static_cast<int>(ActionKind::BackwardWeight);
        bounds.push_back(z3::implies(reshard, previous == 1));
        previous = chained(
            "used",
            z3::ite(unshard, zero, z3::ite(compute || reshard, one, previous)),
            constraints);
      }
    }
    return z3::mk_and(bounds);
  }

  /// A constant named `prefix`, `previous` plus 1 where `condition` holds
  /// (one link of a chain that counts along a program).
  z3::expr counted(const char *prefix, const z3::expr &previous,
                   const z3::expr &condition, z3::expr_vector &constraints) {
    return chained(prefix, previous + indicator(condition), constraints);
  }

  /// A constant named `prefix` equal to `value`, one link of a chain; in a
  /// ground encoding the numeral `value` evaluates to, where it evaluates
  /// to one (a link that depends on a free choice, such as a reading rule's
  /// `reads`, stays a constant).
  z3::expr chained(const char *prefix, const z3::expr &value,
                   z3::expr_vector &constraints) {
    if (ground) {
      z3::expr evaluated = value.simplify();
      if (evaluated.is_numeral())
        return evaluated;
    }
    z3::expr next = fresh(prefix);
    ++variableCount;
    constraints.push_back(next == value);
    return next;
  }

  /// Whether action `a` (its constants) is an instance `pattern` allows.
  z3::expr matches(const ActionPattern &pattern, const z3::expr &kind,
                   const z3::expr &stage, const z3::expr &group,
                   const z3::expr &bytes, const z3::expr &named) {
    z3::expr match = kind == context.int_val(static_cast<int>(pattern.kind)) &&
                     stage == context.int_val(pattern.stage) &&
                     group == context.int_val(pattern.group);
    if (pattern.ofBytes)
      match = match && (bytes < 0 || bytes == context.int_val(pattern.bytes));
    z3::expr_vector names(context);
    names.push_back(named == -1);
    for (int32_t d : pattern.declarations)
      names.push_back(named == d);
    return match && z3::mk_or(names);
  }

  /// Each action some declaration explains is read as one of them (a free
  /// constant `reads`), each declaration gets its instances, and each
  /// instance is on time, counted along the program by chains of
  /// constants: `inst` per declaration, `fw` (forwards), `bs` (backward
  /// starts, B or I) and `grad` (gradients, B or W) of the stage.
  z3::expr readingRule(const ReadingRule &rule, z3::expr_vector &constraints) {
    using When = CollectiveTiming;
    const size_t n = rule.declarations.size();
    auto uses = [&](When when) {
      return llvm::any_of(rule.declarations, [&](const DeclarationPattern &d) {
        return d.when == when;
      });
    };
    const bool countForwards =
        uses(When::BeforeForward) || uses(When::AfterForward);
    const bool countStarts = uses(When::BeforeBackward);
    const bool countGradients = uses(When::AfterBackward);
    auto is = [&](const z3::expr &kind, ActionKind k) {
      return kind == static_cast<int>(k);
    };
    const z3::expr stage = context.int_val(rule.stage);
    z3::expr_vector holds(context);
    std::vector<z3::expr> inst(n, context.int_val(0));
    z3::expr fw = context.int_val(0), bs = context.int_val(0),
             grad = context.int_val(0);
    // (instance of an after_backward declaration, gradients up to it):
    // stated once the chain's total is known.
    std::vector<std::pair<z3::expr, z3::expr>> afterGradients;
    for (const RuleAction &a : rule.program) {
      z3::expr kind = attribute("kind", a.kind, constraints);
      z3::expr at = attribute("stage", a.stage, constraints);
      z3::expr group = attribute("group", a.group, constraints);
      z3::expr bytes = attribute("bytes", a.bytes, constraints);
      z3::expr named = attribute("named", a.declaration, constraints);
      const z3::expr here = at == stage;
      if (countForwards)
        fw = counted("fw", fw, here && is(kind, ActionKind::Forward),
                     constraints);
      if (countStarts)
        bs = counted("bs", bs,
                     here && (is(kind, ActionKind::Backward) ||
                              is(kind, ActionKind::BackwardInput)),
                     constraints);
      if (countGradients)
        grad = counted("grad", grad,
                       here && (is(kind, ActionKind::Backward) ||
                                is(kind, ActionKind::BackwardWeight)),
                       constraints);
      z3::expr reads = fresh("reads");
      ++variableCount;
      z3::expr_vector explained(context), read(context);
      for (size_t c = 0; c < n; ++c) {
        const DeclarationPattern &d = rule.declarations[c];
        const z3::expr match =
            matches(d.pattern, kind, at, group, bytes, named);
        const z3::expr instance =
            reads == static_cast<int>(c) && match;
        explained.push_back(match);
        read.push_back(instance);
        const z3::expr before = inst[c];
        inst[c] = counted("inst", before, instance, constraints);
        switch (d.when) {
        case When::BeforeForward:
          holds.push_back(z3::implies(here && is(kind, ActionKind::Forward),
                                      before >= fw));
          break;
        case When::BeforeBackward:
          holds.push_back(
              z3::implies(here && (is(kind, ActionKind::Backward) ||
                                   is(kind, ActionKind::BackwardInput)),
                          before >= bs));
          break;
        case When::AfterForward:
          holds.push_back(inst[c] <= fw);
          break;
        case When::AfterBackward:
          afterGradients.emplace_back(instance, grad);
          break;
        case When::Step:
          break;
        }
      }
      holds.push_back(z3::implies(z3::mk_or(explained), z3::mk_or(read)));
    }
    for (auto &[instance, gradients] : afterGradients)
      holds.push_back(z3::implies(instance, gradients == grad));
    for (size_t c = 0; c < n; ++c) {
      z3::expr full =
          inst[c] == context.int_val(rule.declarations[c].instances);
      holds.push_back(rule.orNone ? full || inst[c] == 0 : full);
    }
    return z3::mk_and(holds);
  }

  /// Adds `condition` to `holds`, evaluated in a ground encoding.
  void hold(z3::expr_vector &holds, const z3::expr &condition) {
    holds.push_back(ground ? condition.simplify() : condition);
  }

  /// `values[x]` for `x` a constant in [0, values.size()), else `otherwise`
  /// (an ite over the positions).
  z3::expr pick(const std::vector<z3::expr> &values, const z3::expr &x,
                const z3::expr &otherwise) {
    // A numeral selects its value (what Z3 simplifies the ite to).
    int64_t at = 0;
    if (ground && x.is_numeral_i64(at))
      return at >= 0 && static_cast<size_t>(at) < values.size()
                 ? values[static_cast<size_t>(at)]
                 : otherwise;
    z3::expr result = otherwise;
    for (size_t k = values.size(); k-- > 0;)
      result = z3::ite(x == static_cast<int>(k), values[k], result);
    return result;
  }

  /// Vector clocks of the rank's streams and events along its program,
  /// each dependency ordered by them, and each communicator's operations
  /// ordered one after the other.
  z3::expr streamRule(const StreamRule &rule, z3::expr_vector &constraints) {
    const size_t width =
        static_cast<size_t>(std::max<int64_t>(rule.streams, 1));
    // Ground, or sparse: an event's and a communicator's chains are linked
    // only at the actions the schedule names them at (the ites elsewhere
    // keep the previous value at the schedule's attributes).
    const bool named = ground || rule.sparse;
    const z3::expr none = context.int_val(-1), zero = context.int_val(0);
    // State before the current action: per stream (or event) the clock of
    // its last action (latest record), one column per stream.
    std::vector<std::vector<z3::expr>> cur(width,
                                           std::vector<z3::expr>(width, none));
    std::vector<std::vector<z3::expr>> ev(static_cast<size_t>(rule.events),
                                          std::vector<z3::expr>(width, none));
    std::vector<z3::expr> op(static_cast<size_t>(rule.communicators), none),
        opStream(op), opBundle(op.size(), zero);
    std::vector<std::vector<z3::expr>> clocks;
    std::vector<z3::expr> streams, bundles;
    z3::expr_vector holds(context);
    for (size_t i = 0; i < rule.program.size(); ++i) {
      const StreamStep &a = rule.program[i];
      const z3::expr at = context.int_val(static_cast<int64_t>(i));
      z3::expr stream = attribute("stream", a.stream, constraints);
      z3::expr wait = attribute("wait", a.wait, constraints);
      z3::expr record = attribute("record", a.record, constraints);
      z3::expr bundle = attribute("bundle", a.bundle, constraints);
      std::optional<z3::expr> comm;
      if (rule.communicators > 0)
        comm = attribute("comm", a.communicator, constraints);
      std::vector<z3::expr> clock;
      for (size_t k = 0; k < width; ++k) {
        std::vector<z3::expr> column;
        for (size_t s = 0; s < width; ++s)
          column.push_back(cur[s][k]);
        const z3::expr before = pick(column, stream, none);
        // Ground and sparse rules read the chain of the event the schedule
        // names (a sparse one none for another value of `wait`).
        std::optional<z3::expr> waited;
        const bool waits =
            a.wait >= 0 && static_cast<size_t>(a.wait) < ev.size();
        if (!named) {
          std::vector<z3::expr> seen;
          for (size_t e = 0; e < ev.size(); ++e)
            seen.push_back(ev[e][k]);
          waited = pick(seen, wait, none);
        } else if (waits) {
          const z3::expr chain = ev[static_cast<size_t>(a.wait)][k];
          waited = ground ? chain
                          : z3::ite(wait == static_cast<int>(a.wait), chain,
                                    none);
        }
        // Every clock is at least -1, so without a wait (sparse: none
        // named) the clock is its stream's.
        const z3::expr reached =
            waited ? z3::ite(before >= *waited, before, *waited) : before;
        clock.push_back(
            chained("clk", z3::ite(stream == static_cast<int>(k), at, reached),
                    constraints));
      }
      // The communicator's previous operation happens before this one.
      if (comm)
        for (size_t c = 0; c < op.size(); ++c)
          if (!named || a.communicator == static_cast<int64_t>(c))
            hold(holds,
                 z3::implies(*comm == static_cast<int>(c) && op[c] >= 0,
                             (opBundle[c] != 0 && opBundle[c] == bundle) ||
                                 pick(clock, opStream[c], none) >= op[c]));
      // A ground encoding links only the chains the action changes (the
      // others' ites simplify to their previous values).
      for (size_t s = 0; s < width; ++s)
        for (size_t k = 0; k < width && !(ground && a.stream != int64_t(s));
             ++k)
          cur[s][k] = chained(
              "cur",
              z3::ite(stream == static_cast<int>(s), clock[k], cur[s][k]),
              constraints);
      // Named: only the chain the action's record (communicator) names.
      auto linked = [&](int64_t value, size_t count) {
        return named ? std::make_pair(
                           static_cast<size_t>(std::max<int64_t>(value, 0)),
                           static_cast<size_t>(std::clamp<int64_t>(
                               value + 1, 0, static_cast<int64_t>(count))))
                     : std::make_pair(size_t(0), count);
      };
      for (auto [e, end] = linked(a.record, ev.size()); e < end; ++e)
        for (size_t k = 0; k < width; ++k)
          ev[e][k] = chained(
              "ev", z3::ite(record == static_cast<int>(e), clock[k], ev[e][k]),
              constraints);
      if (comm)
        for (auto [c, end] = linked(a.communicator, op.size()); c < end;
             ++c) {
          const z3::expr here = *comm == static_cast<int>(c);
          op[c] = chained("op", z3::ite(here, at, op[c]), constraints);
          opStream[c] =
              chained("opst", z3::ite(here, stream, opStream[c]), constraints);
          opBundle[c] =
              chained("opbd", z3::ite(here, bundle, opBundle[c]), constraints);
        }
      clocks.push_back(std::move(clock));
      streams.push_back(stream);
      bundles.push_back(bundle);
    }
    // Each dependency: the later action's clock at the earlier one's
    // stream reaches it, or both are in one bundle.
    for (auto [from, to] : rule.ordered) {
      if (from < 0 || to < 0 || static_cast<size_t>(from) >= clocks.size() ||
          static_cast<size_t>(to) >= clocks.size())
        return context.bool_val(false);
      hold(holds,
           (bundles[from] != 0 && bundles[from] == bundles[to]) ||
               pick(clocks[to], streams[from], none) >= context.int_val(from));
    }
    return z3::mk_and(holds);
  }

  /// replicas >= 1, and it divides the stages and the microbatches.
  z3::expr dividesRule(const DividesRule &rule, z3::expr_vector &constraints) {
    z3::expr stages = attribute("stages", rule.stages, constraints);
    z3::expr microbatches =
        attribute("microbatches", rule.microbatches, constraints);
    z3::expr replicas = attribute("replicas", rule.replicas, constraints);
    return replicas >= 1 && z3::mod(stages, replicas) == 0 &&
           z3::mod(microbatches, replicas) == 0;
  }

  /// A constant named `prefix!N`, N counted by this encoding: the same
  /// query prints the same SMT-LIB whatever the thread's reused context
  /// made before (Z3's own fresh constants count per context). Solvers do
  /// not share assertions, so a name met again in a later query is a new
  /// unknown there.
  z3::expr fresh(const char *prefix) {
    return context.int_const(
        (std::string(prefix) + "!" + std::to_string(freshCount++)).c_str());
  }

  z3::context &context;
  const Z3Query &query;
  const bool ground;
  std::vector<z3::expr> times;
  /// Ground: the distinct (t_from, t_to) pairs of the candidate's edges.
  std::vector<std::pair<int64_t, int64_t>> groundEdges;
  std::unordered_map<int64_t, z3::expr> numerals;
  size_t variableCount = 0;
  size_t freshCount = 0;
};

Z3Answer toAnswer(z3::check_result result) {
  switch (result) {
  case z3::sat:
    return Z3Answer::Sat;
  case z3::unsat:
    return Z3Answer::Unsat;
  case z3::unknown:
    break;
  }
  return Z3Answer::Unknown;
}

/// Interrupts a context's work once a budget of seconds has passed, from
/// a watchdog thread (Z3_interrupt is thread-safe). Z3's own `timeout`
/// parameter is not used: the timer behind it in Debian's Z3 4.8.12 now
/// and then leaves the solving thread asleep for good (2 hangs in 160
/// runs of a 1 ms budget on a loaded 2-core machine).
class Deadline {
public:
  Deadline(z3::context &context, double seconds) {
    // No budget, or one beyond any run (and beyond what the clock can add
    // without overflowing): no deadline.
    if (!(seconds > 0 && seconds <= kLongestBudget))
      return;
    watchdog = std::thread([this, &context, seconds] {
      std::unique_lock<std::mutex> lock(mutex);
      const auto until = std::chrono::steady_clock::now() +
                         std::chrono::duration<double>(seconds);
      if (wakeup.wait_until(lock, until, [this] { return done; }))
        return;
      fired = true;
      // Interrupt again until the work is over, in case one lands between
      // two of its phases.
      do
        context.interrupt();
      while (!wakeup.wait_for(lock, std::chrono::milliseconds(5),
                              [this] { return done; }));
    });
  }
  ~Deadline() { finish(); }

  /// Stops the watchdog; returns whether it interrupted the context. Once
  /// it has returned, no interruption can follow.
  bool finish() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      done = true;
    }
    wakeup.notify_all();
    if (watchdog.joinable())
      watchdog.join();
    return fired;
  }

  /// A year, in seconds.
  static constexpr double kLongestBudget = 365.0 * 24 * 3600;

private:
  std::mutex mutex;
  std::condition_variable wakeup;
  bool done = false;
  std::atomic<bool> fired{false};
  std::thread watchdog;
};

/// Runs `solve` under a budget of `seconds` (none when <= 0): running out
/// is Unknown with the reason "timeout", whatever Z3 made of the
/// interruption. Sets `interrupted` when the deadline interrupted the
/// context.
template <typename Solve>
Z3Answer within(z3::context &context, double seconds, std::string &reason,
                bool &interrupted, Solve solve) {
  Deadline deadline(context, seconds);
  Z3Answer answer = Z3Answer::Unknown;
  try {
    answer = solve();
  } catch (const z3::exception &) {
    if (!deadline.finish())
      throw;
  }
  interrupted = deadline.finish();
  if (interrupted && answer == Z3Answer::Unknown)
    reason = "timeout";
  return answer;
}

/// A Z3 context for one solve, reused by the next solve on the same thread.
/// Making one costs about 17 MB of tables that Z3 fills before the first
/// term (a sixth of verifying a 192,512-action lowered 1F1B, most of
/// verifying a small schedule), and nothing of a solve outlives it: Z3
/// counts references, so the solver, goals and terms are freed when the
/// solve returns and the next one starts from the same empty tables. A
/// context goes back for reuse only when the solve ended without an
/// exception or an interruption (Z3 may keep an interrupted context
/// cancelled); otherwise it is destroyed.
class ReusedContext {
public:
  ReusedContext() : context(std::move(cached())) {
    if (!context) {
      z3::config config;
      config.set("auto_config", false);
      context = std::make_unique<z3::context>(config);
    }
  }
  ~ReusedContext() {
    if (reusable)
      cached() = std::move(context);
  }
  ReusedContext(const ReusedContext &) = delete;
  ReusedContext &operator=(const ReusedContext &) = delete;

  z3::context &get() { return *context; }
  /// The solve ended cleanly: the context may serve the next one.
  void release() { reusable = true; }

private:
  static std::unique_ptr<z3::context> &cached() {
    thread_local std::unique_ptr<z3::context> context;
    return context;
  }

  std::unique_ptr<z3::context> context;
  bool reusable = false;
};

/// Z3's resource units spent in `context` so far: the `rlimit` count that
/// the work of every solver and tactic of the context adds to. Z3 4.8.12
/// gives it only in a solver's statistics, the context's count in any
/// solver's.
uint64_t resourceCount(z3::context &context) {
  z3::solver solver(context);
  const z3::stats stats = solver.statistics();
  for (unsigned k = 0; k < stats.size(); ++k)
    if (stats.key(k) == "rlimit count")
      return stats.is_uint(k) ? stats.uint_value(k)
                              : static_cast<uint64_t>(stats.double_value(k));
  return 0;
}

/// The resource units one solve may spend, counted from its start (the
/// context is reused, and its count runs on). Z3's `rlimit` parameter
/// bounds one solver call; the solve gives each call what is left.
class ResourceBudget {
public:
  ResourceBudget(z3::context &context, uint64_t limit)
      : context(context), limit(limit), start(resourceCount(context)) {}

  uint64_t spent() const { return resourceCount(context) - start; }
  /// Whether the solve may spend no more (never, without a limit).
  bool exhausted() const { return limit != 0 && spent() >= limit; }
  /// Whether the solve spent more than its limit.
  bool exceeded() const { return limit != 0 && spent() > limit; }
  /// Sets the next solver call's `rlimit` to the units left; false when
  /// none are.
  bool limitCall(z3::params &params) const {
    if (limit == 0)
      return true;
    const uint64_t used = spent();
    if (used >= limit)
      return false;
    // The parameter is unsigned; a larger remainder is checked after the
    // call.
    params.set("rlimit", static_cast<unsigned>(
                             std::min<uint64_t>(limit - used, UINT32_MAX)));
    return true;
  }
  std::string reason() const {
    return "resource limit of " + std::to_string(limit) + " units reached";
  }

private:
  z3::context &context;
  const uint64_t limit;
  const uint64_t start;
};

/// Solves `constraints`, with the difference-logic solver when every one
/// is a difference constraint, within what is left of `budget`.
Z3Answer search(z3::context &context, const z3::expr_vector &constraints,
                std::string &reason, bool differenceLogic,
                const ResourceBudget &budget) {
  z3::solver solver(context);
  z3::params params(context);
  // The Bellman-Ford based difference-logic solver is the fastest Z3 has
  // for difference constraints; structural rules (sums of indicators) need
  // the general one.
  if (differenceLogic)
    params.set("arith.solver", 1u);
  if (!budget.limitCall(params)) {
    reason = budget.reason();
    return Z3Answer::Unknown;
  }
  solver.set(params);
  for (unsigned k = 0; k < constraints.size(); ++k)
    solver.add(constraints[k]);
  Z3Answer answer = toAnswer(solver.check());
  if (answer == Z3Answer::Unknown)
    reason = budget.exhausted() ? budget.reason() : solver.reason_unknown();
  return answer;
}

/// Checks ground constraints: Z3's simplifier decides each one; whatever
/// it leaves undecided goes to the solver.
Z3Answer check(z3::context &context, const z3::expr_vector &constraints,
               std::string &reason, bool differenceLogic,
               const ResourceBudget &budget) {
  z3::goal goal(context);
  for (unsigned k = 0; k < constraints.size(); ++k)
    goal.add(constraints[k]);
  z3::apply_result result = z3::tactic(context, "simplify")(goal);
  // The simplifier takes no resource limit: its work counts once it ran.
  if (budget.exceeded()) {
    reason = budget.reason();
    return Z3Answer::Unknown;
  }
  if (result.size() == 1 && result[0].is_decided_sat())
    return Z3Answer::Sat;
  if (result.size() == 1 && result[0].is_decided_unsat())
    return Z3Answer::Unsat;
  z3::expr_vector rest(context);
  for (unsigned g = 0; g < result.size(); ++g)
    rest.push_back(result[g].as_expr());
  return search(context, rest, reason, differenceLogic, budget);
}

std::string toSmtlib(z3::context &context, const Z3Query &query) {
  Z3Query open = query;
  open.witness.clear();
  Encoder encoder(context, open, /*ground=*/false);
  z3::solver solver(context);
  const z3::expr_vector constraints =
      encoder.encode(0, open.edges.size(), /*withMemory=*/true);
  for (unsigned k = 0; k < constraints.size(); ++k)
    solver.add(constraints[k]);
  return solver.to_smt2();
}
} // namespace

/// Ground constraints per goal of the candidate check.
constexpr size_t kCheckChunk = 16384;

/// Checks the candidate of `query` in `context`, a chunk of edges at a
/// time: ground constraints are independent, and a chunk's terms are freed
/// before the next is built, so Z3 holds one chunk's goal at a time rather
/// than the whole encoding's (the simplifier's goal took 7.5 MB for
/// 131,000 constraints in one piece). One context serves the whole check: each
/// Z3 context holds about 17 MB of its own tables before the first term
/// (measured), more than all the ground terms of a 200,000-action schedule
/// take.
static void checkCandidate(z3::context &context, const Z3Query &query,
                           double timeoutSeconds, const ResourceBudget &budget,
                           Z3Outcome &outcome, bool &interrupted) {
  outcome.answer =
      within(context, timeoutSeconds, outcome.reason, interrupted, [&] {
        Encoder encoder(context, query, /*ground=*/true);
        const size_t numEdges = encoder.numEdgeConstraints();
        for (size_t begin = 0;; begin += kCheckChunk) {
          const size_t end = std::min(numEdges, begin + kCheckChunk);
          const bool last = end == numEdges;
          const z3::expr_vector constraints =
              encoder.encode(begin, end, /*withMemory=*/last);
          outcome.variables = encoder.variables();
          outcome.constraints += constraints.size();
          // The stream rules (the last chunk's) are not difference
          // constraints.
          const Z3Answer answer =
              check(context, constraints, outcome.reason,
                    /*differenceLogic=*/!last || query.streams.empty(), budget);
          if (answer != Z3Answer::Sat || last)
            return answer;
          // Every distinct time kept alive held 2.6 GB of Z3's terms and
          // tables in DeepSeek-V3's 2^40-token proof (a third of the plan's
          // CPU zeroing the pages): 730 MB with a chunk's at a time.
          encoder.forgetNumerals();
        }
      });
}

std::string sched::encodeSmtlib(const Z3Query &query, std::string &error) {
  try {
    ReusedContext context;
    std::string text = toSmtlib(context.get(), query);
    context.release();
    return text;
  } catch (const z3::exception &exception) {
    error = std::string("z3: ") + exception.msg();
  }
  return "";
}

Z3Outcome sched::solveWithZ3(const Z3Query &query, double timeoutSeconds,
                             uint64_t resourceLimit) {
  Z3Outcome outcome;
  const auto begin = std::chrono::steady_clock::now();
  try {
    ReusedContext reused;
    z3::context &context = reused.get();
    const ResourceBudget budget(context, resourceLimit);
    bool interrupted = false;
    if (!query.witness.empty()) {
      checkCandidate(context, query, timeoutSeconds, budget, outcome,
                     interrupted);
    } else {
      Encoder encoder(context, query, /*ground=*/false);
      const z3::expr_vector constraints =
          encoder.encode(0, query.edges.size(), /*withMemory=*/true);
      outcome.variables = encoder.variables();
      outcome.constraints = constraints.size();
      outcome.answer =
          within(context, timeoutSeconds, outcome.reason, interrupted, [&] {
            return search(
                context, constraints, outcome.reason,
                query.counts.empty() && query.ranges.empty() &&
                    query.pairings.empty() && query.placements.empty() &&
                    query.transfers.empty() && query.selections.empty() &&
                    query.backwards.empty() && query.divides.empty() &&
                    query.shardings.empty() && query.readings.empty() &&
                    query.streams.empty(),
                budget);
          });
    }
    outcome.resources = budget.spent();
    // Work past the limit decides nothing, whichever call passed it.
    if (outcome.answer != Z3Answer::Unknown && budget.exceeded()) {
      outcome.answer = Z3Answer::Unknown;
      outcome.reason = budget.reason();
    }
    if (!interrupted)
      reused.release();
  } catch (const z3::exception &error) {
    outcome.answer = Z3Answer::Unknown;
    outcome.reason = std::string("z3: ") + error.msg();
  }
  outcome.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  return outcome;
}
