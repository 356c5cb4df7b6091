#!/bin/bash
# Prints one module holding a sched.pipeline per grid point of STRATEGY:
# P in {2, 3, 4, 8}, vpp in {2, 3} for the looped strategies (1 for the
# others), M in 1 .. 3P; for dualpipe (P even, M even and >= 2P) P in
# {2, 4, 8} and the even M in 2P .. 3P. Used by insert-p2p-grid.test.
set -eu
strategy=$1
ps="2 3 4 8"
case $strategy in
  interleaved-1f1b|looped-bfs|interleaved-zb) vpps="2 3" ;;
  *) vpps="1" ;;
esac
for p in $ps; do
  for v in $vpps; do
    if [ "$strategy" = dualpipe ]; then
      [ $((p % 2)) -eq 0 ] || continue
      ms=$(seq $((2 * p)) 2 $((3 * p)))
    else
      ms=$(seq 1 $((3 * p)))
    fi
    for m in $ms; do
      echo "sched.pipeline @p${p}_v${v}_m${m} pp $p vpp $v microbatches $m {}"
    done
  done
done
