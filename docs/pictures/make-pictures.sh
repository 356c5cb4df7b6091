#!/usr/bin/env bash
# Draws one timeline per strategy into docs/pictures/ (run by `make docs`):
# schedc generate --emit svg at P = 4 (V strategies: P = 4, two stages per
# rank; combined-1f1b: P = 1), M = 8, F = 1, I = 1, W = 1.
#   make-pictures.sh SCHEDC_BIN_DIR OUT_DIR
set -euo pipefail
bin=$1
out=$2
mkdir -p "$out"
for strategy in gpipe 1f1b interleaved-1f1b looped-bfs zb-h1 zb-h2 \
                interleaved-zb zb-v v-half v-min dualpipe-v dualpipe \
                combined-1f1b interleaved-combined-1f1b; do
  vpp=()
  pp=4
  case $strategy in
    interleaved-1f1b|looped-bfs|interleaved-zb|interleaved-combined-1f1b)
      vpp=(--vpp 2) ;;
    combined-1f1b) pp=1 ;;
  esac
  "$bin/schedc" generate --strategy "$strategy" --pp "$pp" "${vpp[@]}" \
    --microbatches 8 --cost f=1,i=1,w=1 --emit svg -o "$out/$strategy.svg"
done
echo "wrote $(ls "$out"/*.svg | wc -l) pictures to $out"
