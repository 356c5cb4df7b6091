#!/usr/bin/env bash
# `cpu-limit.sh FACTOR SECONDS CMD...` runs CMD under `ulimit -t`, a cap of
# FACTOR * SECONDS seconds of CPU time, so a test that guards a path against
# super-linear work fails on the work, not on the clock: CPU time is what
# the command spends, however many other processes share the machine, where
# a wall-clock `timeout` fails under load (issue 31). lit.cfg.py picks
# FACTOR: 1, or 10 for tools built with sanitizers. Speed targets belong in
# `make bench`; these caps sit an order of magnitude above the measured time.
seconds=$(( $1 * $2 ))
shift 2
# SIGXCPU at the soft cap, SIGKILL a second later for a command that
# catches it.
ulimit -S -t "$seconds" && ulimit -H -t "$((seconds + 1))" || exit 2
"$@"
status=$?
if [ "$status" = 152 ] || [ "$status" = 137 ]; then
  echo "cpu-limit.sh: $1 used more than $seconds s of CPU time" >&2
fi
exit "$status"
