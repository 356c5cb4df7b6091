#!/bin/bash
# Prints one module holding a sched.pipeline per grid point of STRATEGY:
# P in {2, 3, 4, 8}, vpp in {2, 3} for the looped strategies (1 for the
# others), M in 1 .. 3P. Used by insert-p2p-grid.test.
set -eu
strategy=$1
case $strategy in
  interleaved-1f1b|looped-bfs) vpps="2 3" ;;
  *) vpps="1" ;;
esac
for p in 2 3 4 8; do
  for v in $vpps; do
    for m in $(seq 1 $((3 * p))); do
      echo "sched.pipeline @p${p}_v${v}_m${m} pp $p vpp $v microbatches $m {}"
    done
  done
done
