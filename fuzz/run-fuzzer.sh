#!/usr/bin/env bash
# Runs one fuzz target for a set time (docs/fuzzing.md) and fails on any
# crash, sanitizer report, timeout or over-limit allocation; the input that
# did it lands in fuzz/findings/NAME/.
# usage: fuzz/run-fuzzer.sh BUILD_DIR NAME SECONDS
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 BUILD_DIR torch-csv|parse|verify|description|json-plan|pass-options|calibration SECONDS" >&2
  exit 2
fi
build=$1 name=$2 seconds=$3
fuzz=$(cd "$(dirname "$0")" && pwd)
case $name in
  torch-csv) kind=csv max_len=2048 ;;
  parse | verify) kind=mlir max_len=4096 ;;
  description | json-plan) kind=json max_len=4096 ;;
  pass-options) kind=options max_len=1024 dict=options ;;
  calibration) kind=efficiency max_len=4096 dict=json ;;
  *) echo "run-fuzzer.sh: error: unknown fuzz target '$name'" >&2; exit 2 ;;
esac

# libFuzzer adds what it finds to the first folder; the seeds come from the
# test suite each time, and reproducers of past findings run first.
corpus=$build/fuzz/corpus/$name
seeds=$build/fuzz/seeds/$kind
mkdir -p "$corpus" "$fuzz/findings/$name"
python3 "$fuzz/seed-corpus.py" "$kind" "$fuzz/../test" "$seeds"
folders=("$corpus" "$seeds")
if [ -d "$fuzz/regressions/$name" ]; then
  folders+=("$fuzz/regressions/$name")
fi

# Debian's LLVM is not instrumented: see ASAN_OPTIONS in test/lit.cfg.py.
export ASAN_OPTIONS="allow_user_poisoning=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
log=$build/fuzz/$name.log
echo "fuzzing $name for ${seconds}s (log: $log)"
status=0
"$build/bin/sched-$name-fuzzer" -max_total_time="$seconds" \
  -max_len="$max_len" -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=512 \
  -dict="$fuzz/${dict:-$kind}.dict" -artifact_prefix="$fuzz/findings/$name/" \
  -print_final_stats=1 "${folders[@]}" >"$log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  tail -n 80 "$log"
  echo "FAIL: sched-$name-fuzzer (exit $status); reproducer in fuzz/findings/$name/"
  exit 1
fi
grep -E '^(#[0-9]+ *DONE|Done|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)' "$log"
