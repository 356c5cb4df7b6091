#!/bin/bash
# The device checks the cost model waits on, as one call on a lent GPU
# (docs/cost-model.md, "Host time of MoE layers" and "Usable memory"):
#   1. measure_moe_layer.py at Qwen3-30B-A3B's shape (EP 8: 16 local
#      experts) for 4,096, 16,384 and 32,768 tokens, per-expert GEMMs and
#      one grouped GEMM: the host's time per layer against the kernels';
#   2. measure_memory.py on workloads that fill most of the device, for the
#      caching allocator's share at full scale (the five measured points
#      stop at 54 GB of 80).
# Usage: OUT=dir integrations/torch/device-checks.sh   (about 6 minutes on
# an H100; each step has its own timeout and its exit status is logged).
set -u
cd "$(dirname "$0")/../.."
O=${OUT:-/tmp/device-checks}
mkdir -p "$O"
log=$O/device-checks.log
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import sys,torch;print(sys.version.split()[0],torch.__version__,torch.version.cuda,torch.cuda.get_device_name())"
  lscpu | grep -E "Model name|^CPU\(s\)"; } > "$log" 2>&1
step() {
  name=$1; limit=$2; shift 2
  echo "== $name" >> "$log"
  timeout "$limit" python3 "$@" > "$O/$name.json" 2>> "$log"
  echo "exit $?" >> "$log"
}
moe=integrations/torch/measure_moe_layer.py
shape="--hidden 2048 --expert-ffn 768 --experts 128 --ep 8 --top-k 8"
for tokens in 4096 16384 32768; do
  step moe-loop-$tokens 60 $moe $shape --tokens $tokens
  step moe-grouped-$tokens 60 $moe $shape --tokens $tokens --experts-as grouped
done
# Qwen3-235B-A22B's shape at EP 32 (4 local experts): the host's share
# should fall with fewer, larger expert GEMMs.
step moe-235b-loop-4096 60 $moe --hidden 4096 --expert-ffn 1536 \
  --experts 128 --ep 32 --top-k 8 --tokens 4096
# Usable memory at scale: layers of Llama 3 8B's and 70B's shapes sized to
# about three quarters of the device (the gap reserved - allocated against
# the allocated bytes).
total=$(python3 -c "import torch;print(torch.cuda.mem_get_info()[1])" 2>/dev/null || echo 0)
mem=integrations/torch/measure_memory.py
if [ "$total" -gt 120000000000 ]; then
  step memory-70b-6x2 200 $mem --layers 6 --hidden 8192 --ffn 28672 \
    --heads 64 --seq-len 8192 --batch 2
  step memory-8b-24x2 200 $mem --layers 24 --hidden 4096 --ffn 14336 \
    --heads 32 --seq-len 8192 --batch 2
else
  step memory-70b-3x2 200 $mem --layers 3 --hidden 8192 --ffn 28672 \
    --heads 64 --seq-len 8192 --batch 2
  step memory-8b-16x2 200 $mem --layers 16 --hidden 4096 --ffn 14336 \
    --heads 32 --seq-len 8192 --batch 2
fi
cat "$log"
