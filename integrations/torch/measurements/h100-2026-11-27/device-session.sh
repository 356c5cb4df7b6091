#!/bin/bash
# One device session: memory probe and calibrate.py at four layouts.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
cd "$(dirname "$0")/../../../.."
{ nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv; python3 -c "import sys,torch;print(sys.version.split()[0],torch.__version__,torch.version.cuda,torch.cuda.get_device_name(),torch.cuda.get_device_properties(0).multi_processor_count)"; } > $O/calibrate.log 2>&1
cat > $O/h100.json <<'J'
{"name": "h100-ib", "device": {"name": "H100 SXM", "peak_flops": {"bf16": 989e12, "fp8": 1979e12}, "hbm_bytes": 80e9, "hbm_bandwidth": 3.35e12}, "domain_size": 8, "domain_bandwidth": 450e9, "scale_out_bandwidth": 50e9}
J
L='"vocab": 128256, "kv_heads": 8, "seq_len": 8192, "global_batch_tokens": 16777216'
echo "{\"name\": \"llama3-8b\", \"layers\": 32, \"hidden\": 4096, \"ffn_hidden\": 14336, \"heads\": 32, $L}" > $O/llama3-8b.json
echo "{\"name\": \"llama3-70b\", \"layers\": 80, \"hidden\": 8192, \"ffn_hidden\": 28672, \"heads\": 64, $L}" > $O/llama3-70b.json
echo "{\"name\": \"llama3-405b\", \"layers\": 126, \"hidden\": 16384, \"ffn_hidden\": 53248, \"heads\": 128, $L}" > $O/llama3-405b.json
cat > $O/deepseek-v3.json <<'J'
{"name": "deepseek-v3", "layers": 61, "hidden": 7168, "ffn_hidden": 18432, "heads": 128, "head_dim": 128, "vocab": 129280, "seq_len": 4096, "moe": {"experts": 256, "top_k": 8, "shared_experts": 1, "expert_ffn_hidden": 2048, "dense_layers": 3}}
J
echo "== memory" >> $O/calibrate.log
timeout 90 python3 integrations/torch/measure_memory.py > $O/memory.json 2>> $O/calibrate.log; echo "exit $?" >> $O/calibrate.log
run() { tag=$1; shift; echo "== $tag" >> $O/calibrate.log
  timeout 100 python3 integrations/torch/calibrate.py --cluster $O/h100.json --repeats 20 -o $O/h100-$tag.json "$@" >> $O/calibrate.log 2>&1; echo "exit $?" >> $O/calibrate.log; }
run llama3-70b-tp8 --model $O/llama3-70b.json --tp 8 --seq-len 8192
run llama3-405b-tp8 --model $O/llama3-405b.json --tp 8 --seq-len 8192
run llama3-8b-tp1 --model $O/llama3-8b.json --tp 1 --seq-len 8192
run dsv3-ep64 --model $O/deepseek-v3.json --ep 64 --seq-len 4096
cat $O/calibrate.log; cat $O/memory.json
# Second call: the usable-memory measurement at two more layer shapes.
cd "$(dirname "$0")/../../../.."
O=${OUT:-/tmp/out}
timeout 100 python3 integrations/torch/measure_memory.py --layers 2 --hidden 8192 --ffn 28672 --heads 64 --seq-len 8192 --batch 1 > $O/m2.json 2>&1; echo "exit $?"
timeout 100 python3 integrations/torch/measure_memory.py --layers 16 --hidden 2048 --ffn 8192 --heads 16 --seq-len 4096 --batch 4 > $O/m3.json 2>&1; echo "exit $?"
python3 -c "
import json
for f in ['m2','m3']:
  d=json.load(open('$O/'+f+'.json')); print(f, d['workload'], d['reserve_bytes'], d['fragmentation_default'], d['fragmentation_expandable'])
"
# Third call (measure_memory.py now empties the cache before its second process): two larger workloads.
O=${OUT:-/tmp/out}
timeout 150 python3 integrations/torch/measure_memory.py --layers 12 --hidden 4096 --ffn 14336 --heads 32 --seq-len 8192 --batch 2 > $O/m4.json 2>&1; echo "exit $?"
timeout 150 python3 integrations/torch/measure_memory.py --layers 8 --hidden 4096 --ffn 14336 --heads 32 --seq-len 8192 --batch 3 > $O/m5.json 2>&1; echo "exit $?"
python3 -c "
import json
for f in ['m4','m5']:
  d=json.load(open('$O/'+f+'.json')); print(f, d['workload'], d['fragmentation_default'], d['fragmentation_expandable'])
"
