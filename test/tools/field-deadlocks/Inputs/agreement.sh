#!/usr/bin/env bash
# For each MLIR plan given, under both point-to-point semantics and on the
# MLIR and the JSON path: the verdict (its exit status: 0 verified, 1
# violated; Z3 confirmed it, or the exit would be 3), the verdict with
# --proof=search (Z3 unaided), and stock z3's answer on the --emit-smtlib
# file, which must be sat for verified and unsat for violated. Prints one
# line per plan and semantics, ending in "agree" or "DISAGREE".
# Usage: agreement.sh PLAN.mlir...
# With SCHEDC_AGREEMENT_SMT_OVERRIDE=1 each encoding is replaced by an
# empty one (sat), so that the test can see a disagreement reported.
verdict() {
  case "$1" in
  0) echo verified ;;
  1) echo violated ;;
  3) echo unknown ;;
  *) echo "exit $1" ;;
  esac
}
for plan in "$@"; do
  base="${plan%.mlir}"
  sched-translate --export-json-plan --json-plan-allow-unverified "$plan" \
    -o "$base.json" 2> /dev/null || { echo "$plan: cannot export JSON"; continue; }
  for p2p in rendezvous eager; do
    line="$plan $p2p:"
    agree=1
    first=""
    for input in "$plan" "$base.json"; do
      smt="$input.$p2p.smt2"
      schedc verify --quiet --p2p "$p2p" "$input" --emit-smtlib "$smt" \
        > /dev/null 2>&1
      witness=$(verdict $?)
      schedc verify --quiet --p2p "$p2p" --proof=search "$input" \
        > /dev/null 2>&1
      search=$(verdict $?)
      [ "${SCHEDC_AGREEMENT_SMT_OVERRIDE:-0}" = 1 ] && echo '(check-sat)' > "$smt"
      answer=$(z3 "$smt" 2>&1 | grep -E '^(sat|unsat|unknown)$' | tr '\n' ' ')
      answer="${answer% }"
      want=sat
      [ "$witness" = violated ] && want=unsat
      if [ "$witness" = unknown ] || [ "$search" != "$witness" ] ||
        [ "$answer" != "$want" ]; then
        agree=0
      fi
      [ -z "$first" ] && first="$witness"
      [ "$witness" != "$first" ] && agree=0
      kind=mlir
      [ "$input" = "$base.json" ] && kind=json
      line="$line $kind $witness (search $search, z3 $answer);"
    done
    if [ $agree = 1 ]; then echo "$line agree"; else echo "$line DISAGREE"; fi
  done
done
