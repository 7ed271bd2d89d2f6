#!/usr/bin/env bash
# Validation on a GPU host (the H200 of docs/validation.md): the static binary, doctor, ncu collection
# on the cuda-softmax example and a small PyTorch script, and the evidence loop on the GPU Target.
# Usage: CKO=<binary> OUT=<dir> bash scripts/device-validation.sh   (build-static/cko by default;
# build-portable/cko from `make portable` reads the GPU through NVML instead of nvidia-smi)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/cko-device}
mkdir -p "$OUT"
CKO=${CKO:-$PWD/build-static/cko}
export CKO_DATA_DIR=$PWD
export PATH=$PATH:/usr/local/cuda/bin
ncu_dir=$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -n1)
command -v ncu >/dev/null || export PATH=$PATH:${ncu_dir%/}
step() { printf '\n### %s\n' "$*"; }
log=$OUT/validation.log
exec > >(tee "$log") 2>&1

step "cko --version; self-check"
"$CKO" --version; file "$CKO" | cut -d, -f1-2
"$CKO" self-check

step "cko doctor --json"
"$CKO" doctor --json > "$OUT/doctor.json"; echo "exit $?"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); i=d["identity"]; print(json.dumps({"gpu_source": i.get("gpu_source"), "gpus": [{k: g.get(k) for k in ("uuid","name","compute_capability","driver_version","sm_clock_mhz","sm_clock_max_mhz","mem_clock_max_mhz","power_limit_w")} for g in i.get("gpus", [])], "tools": [[t.get("name"), t.get("version")] for t in i.get("tools", [])], "ncu_counters_permitted": i.get("ncu_counters_permitted")}, indent=1))' "$OUT/doctor.json"
"$CKO" doctor | tail -n 20

step "build the cuda-softmax driver"
make -s -C examples/cuda-softmax 2>&1 | tail -n 5; ls -la examples/cuda-softmax/build/driver

step "cko profile collect ncu: cuda-softmax driver (smoke request)"
req=/tmp/softmax-req; rm -rf $req; mkdir -p $req/out
cat > $req/request.json <<JSON
{"format_version":"cko/driver-request-v1","mode":"smoke","case":{"id":"main","path":"$PWD/examples/cuda-softmax/cases/main.json"},
 "subjects":[{"role":"reference","label":"original","path":"$PWD/examples/cuda-softmax/original"}],"order":["reference"],
 "samples":2,"seed":1,"objective":{"primary":{"name":"latency_us","unit":"us"},"constraints":[]},
 "correctness":{"metrics":["max_rel_err"]},"output_dir":"$req/out","result_path":"$req/out/result.json","deadline_unix_s":4102444800}
JSON
timeout 300 "$CKO" profile collect ncu --timeout 240 --out "$OUT/ncu-softmax" -- \
  "$PWD/examples/cuda-softmax/build/driver" --request $req/request.json > "$OUT/ncu-softmax.txt"; echo "exit $?"
head -n 40 "$OUT/ncu-softmax.txt"

step "cko profile collect ncu: small PyTorch script"
timeout 300 "$CKO" profile collect ncu --timeout 240 --out "$OUT/ncu-torch" -- python3 tests/device/torch_small.py > "$OUT/ncu-torch.txt"; echo "exit $?"
head -n 30 "$OUT/ncu-torch.txt"

step "evidence loop on the GPU Target (freeze, baseline, experiment, confirm, champion, audit)"
root=/tmp/cko-gpu-art; rm -rf $root
"$CKO" target freeze --spec examples/cuda-softmax/cko.toml --root $root; echo "freeze exit $?"
"$CKO" baseline --root $root --calls-per-case 2 --aa-pairs 8; echo "baseline exit $?"
exp=$("$CKO" experiment new --root $root --candidate examples/cuda-softmax/candidate --hypothesis "block per row, coalesced float4, one pass" \
  --mechanism coalesced-rows --failure-closes mechanism --no-falsifier-reason "validation run" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
"$CKO" screen "$exp" --root $root; echo "screen exit $?"
conf=$("$CKO" confirm "$exp" --root $root --json | tee "$OUT/confirm.json" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["id"], d["result"]["outputs"].get("verdict"))')
echo "confirm: $conf"
"$CKO" champion select --root $root --experiment "$exp" --confirm "${conf%% *}"
"$CKO" audit --root $root; echo "audit exit $?"
"$CKO" ls --root $root
"$CKO" fsck --root $root | tail -n 2
head -c 600 $(ls $root/invocations/*/monitor.jsonl | head -n1); echo
tar czf "$OUT/gpu-artifacts.tgz" -C /tmp cko-gpu-art 2>/dev/null
echo done

step "cko profile torch on a fresh torch 2.11 trace"
python3 tests/device/torch_trace.py /tmp/trace.json && gzip -k -f /tmp/trace.json
"$CKO" profile torch /tmp/trace.json | head -n 30
"$CKO" profile torch /tmp/trace.json.gz --json > "$OUT/torch-profile.json"; echo "exit $?"
cp /tmp/trace.json.gz "$OUT/torch-trace.json.gz"
