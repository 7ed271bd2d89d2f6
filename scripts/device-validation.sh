#!/usr/bin/env bash
# Validation on a GPU host (the H200 of docs/validation.md): the static binary, doctor, ncu collection
# on the cuda-softmax example and a small PyTorch script, the evidence loop on the GPU Target, and the
# whole loop on the torch examples (torch-layernorm, torch-serving; torch-ddp where two GPUs are seen)
# with their GPU seconds per pair and to each verdict, and a torch.profiler trace of each.
# Usage: CKO=<binary> OUT=<dir> bash scripts/device-validation.sh   (build-static/cko by default;
# build-portable/cko from `make portable` reads the GPU through NVML instead of nvidia-smi)
#   SKIP_NCU=1 / SKIP_SOFTMAX=1 / SKIP_TORCH=1 leave those parts out; TORCH_WORKLOADS (default
#   "layernorm serving ddp") and TRACE_WORKLOADS (default "torch-layernorm torch-serving", the
#   standalone profile_trace.py runs) pick the torch parts; VALIDATION_COLLECT (default "ncu torch" for
#   layernorm, "torch" for serving; "" for none) what `cko profile collect` profiles in each loop;
#   VALIDATION_MAX_PAIRS (10) and VALIDATION_MIN_PAIRS (6) bound every torch comparison.
# What comes back in $OUT (at most 8 files, each under 16 MiB): validation.log, summary.json,
# outcomes.tgz (every outcome JSON, reports, stores) and profiles.tgz (ncu reports, torch traces).
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=${OUT:-/tmp/cko-device}
mkdir -p "$FINAL"
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/cko-validation.XXXXXX")
OUT=$STAGE/outcomes; PROFILES=$STAGE/profiles
mkdir -p "$OUT" "$PROFILES"
CKO=${CKO:-$PWD/build-static/cko}
export CKO_DATA_DIR=$PWD
export PATH=$PATH:/usr/local/cuda/bin
ncu_dir=$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -n1)
command -v ncu >/dev/null || export PATH=$PATH:${ncu_dir%/}
step() { printf '\n### %s\n' "$*"; }
log=$FINAL/validation.log
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

if [ "${SKIP_NCU:-0}" != 1 ]; then
step "cko profile collect ncu: cuda-softmax driver (smoke request)"
req=/tmp/softmax-req; rm -rf $req; mkdir -p $req/out
cat > $req/request.json <<JSON
{"format_version":"cko/driver-request-v1","mode":"smoke","case":{"id":"main","path":"$PWD/examples/cuda-softmax/cases/main.json"},
 "subjects":[{"role":"reference","label":"original","path":"$PWD/examples/cuda-softmax/original"}],"order":["reference"],
 "samples":2,"seed":1,"objective":{"primary":{"name":"latency_us","unit":"us"},"constraints":[]},
 "correctness":{"metrics":["max_rel_err"]},"output_dir":"$req/out","result_path":"$req/out/result.json","deadline_unix_s":4102444800}
JSON
timeout 300 "$CKO" profile collect ncu --timeout 240 --out "$PROFILES/ncu-softmax" -- \
  "$PWD/examples/cuda-softmax/build/driver" --request $req/request.json > "$OUT/ncu-softmax.txt"; echo "exit $?"
head -n 40 "$OUT/ncu-softmax.txt"

step "cko profile collect ncu: small PyTorch script"
timeout 300 "$CKO" profile collect ncu --timeout 240 --out "$PROFILES/ncu-torch" -- python3 tests/device/torch_small.py > "$OUT/ncu-torch.txt"; echo "exit $?"
head -n 30 "$OUT/ncu-torch.txt"

fi

if [ "${SKIP_SOFTMAX:-0}" != 1 ]; then
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

step "cko profile collect ncu on the experiment's two subjects (one call each, kept as evidence)"
for subject in reference candidate; do
  timeout 300 "$CKO" profile collect ncu --root $root --experiment "$exp" --subject $subject --json \
    > "$OUT/collect-ncu-softmax-$subject.json"; echo "collect $subject exit $?"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); c=d["stored"]["collection"]
print(d["stored"]["id"], c["invocation_id"], c["call"], c["case_id"], c["tool_version"], c["subject_label"], "correct" if c["subject_correct"] else "incorrect")
for l in d.get("launches", [])[:4]: print("  ", str(l.get("kernel", "?"))[:60], len(l.get("facts", [])), "facts")' \
    "$OUT/collect-ncu-softmax-$subject.json" 2>&1 | head -n 6
done
"$CKO" history --root $root | tail -n 12
"$CKO" fsck --root $root | tail -n 1

step "cko sass on the subjects' objects (nvcc -arch=sm_90 -c), sass diff, knowledge query with the H200 identity"
make -s -C examples/cuda-softmax check 2>&1 | tail -n 3
for s in original candidate; do
  "$CKO" sass examples/cuda-softmax/build/$s.o --json > "$OUT/sass-$s.json"; echo "sass $s exit $?"
  "$CKO" sass examples/cuda-softmax/build/$s.o | head -n 12
done
"$CKO" sass diff examples/cuda-softmax/build/original.o examples/cuda-softmax/build/candidate.o | head -n 30
for f in collect-ncu-softmax-reference sass-original; do
  "$CKO" knowledge query --doctor "$OUT/doctor.json" --facts "$OUT/$f.json" --json > "$OUT/knowledge-$f.json"
  echo "knowledge query --facts $f exit $?"
  "$CKO" knowledge query --doctor "$OUT/doctor.json" --facts "$OUT/$f.json" | head -n 25
done
tar czf "$OUT/gpu-artifacts.tgz" -C /tmp cko-gpu-art 2>/dev/null
tar czf "$FINAL/outcomes.tgz" -C "$STAGE" outcomes  # kept as it goes: a later part may run out of time
echo done

fi

step "cko profile torch on a fresh torch 2.11 trace"
python3 tests/device/torch_trace.py /tmp/trace.json && gzip -k -f /tmp/trace.json
"$CKO" profile torch /tmp/trace.json | head -n 30
"$CKO" profile torch /tmp/trace.json.gz --json > "$OUT/torch-profile.json"; echo "exit $?"
cp /tmp/trace.json.gz "$PROFILES/torch-trace.json.gz"

if [ "${SKIP_TORCH:-0}" != 1 ]; then
  . scripts/validation-torch-loop.sh
  workloads=" ${TORCH_WORKLOADS:-layernorm serving ddp} "
  if [[ $workloads == *" layernorm "* ]]; then
  step "torch-layernorm: the whole loop (Triton fused, bfloat16 wrong result, A/A control)"
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, "cuda", torch.cuda.is_available())'
  VALIDATION_COLLECT=${VALIDATION_COLLECT-ncu torch} torch_loop torch-layernorm examples/torch-layernorm "$OUT" \
    triton_fused=candidates/triton_fused half_precision=candidates/half_precision aa_control=control
  tar czf "$FINAL/outcomes.tgz" -C "$STAGE" outcomes
  fi

  if [[ $workloads == *" serving "* ]]; then
  step "torch-serving: the whole loop (batched, torch.compile, A/A control)"
  python3 -c 'import transformers; print("transformers", transformers.__version__)'
  VALIDATION_COLLECT=${VALIDATION_COLLECT-torch} torch_loop torch-serving examples/torch-serving "$OUT" \
    batched=candidates/batched compiled=candidates/compiled aa_control=control
  tar czf "$FINAL/outcomes.tgz" -C "$STAGE" outcomes
  fi

  if [[ $workloads != *" ddp "* ]]; then
    :
  elif [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 2 ]; then
    step "torch-ddp: the whole loop on two GPUs (big buckets, A/A control)"
    torch_loop torch-ddp examples/torch-ddp "$OUT" big_buckets=candidates/big_buckets aa_control=control
  else
    step "torch-ddp: skipped, it needs two GPUs (this host shows $(nvidia-smi -L 2>/dev/null | grep -c '^GPU'))"
  fi

  step "torch.profiler traces of torch-layernorm and torch-serving, and cko profile torch on them"
  for w in ${TRACE_WORKLOADS-torch-layernorm torch-serving}; do
    timeout 300 python3 "examples/$w/profile_trace.py" "$PROFILES/$w-trace.json"; echo "$w trace exit $?"
    if [ -f "$PROFILES/$w-trace.json" ]; then
      "$CKO" profile torch "$PROFILES/$w-trace.json" | head -n 25
      "$CKO" profile torch "$PROFILES/$w-trace.json" --json > "$OUT/$w-profile.json"; echo "profile torch exit $?"
      gzip -f "$PROFILES/$w-trace.json"
    fi
  done

  step "summary: verdicts, effects, pairs, GPU seconds per pair and to each verdict"
  python3 scripts/validation_summary.py "$OUT" > "$FINAL/summary.json"; echo "summary exit $?"
  python3 - "$FINAL/summary.json" <<'PY'
import json, sys
for name, w in json.load(open(sys.argv[1])).items():
    print(f"{name}: baseline A/A {(w.get('baseline') or {}).get('aa_verdict')}, freeze error: {bool(w.get('freeze_error'))}")
    for label, c in w["candidates"].items():
        for kind in ("screen", "confirm"):
            x = c.get(kind)
            if x:
                print(f"  {label} {kind}: {x['verdict']} ({x['decision']}) {x['effect']} ci {x['ci']} "
                      f"pairs {x['pairs']} gpu_s {x['gpu_s']:.1f} per pair {x['gpu_s_per_pair']}")
        print(f"  {label}: GPU s to screen verdict {c.get('gpu_s_to_screen_verdict')}, "
              f"to confirm verdict {c.get('gpu_s_to_confirm_verdict')}")
PY
fi

step "pack \$OUT (at most 8 files, each under 16 MiB)"
tar czf "$FINAL/outcomes.tgz" -C "$STAGE" outcomes
tar czf "$FINAL/profiles.tgz" -C "$STAGE" profiles
for f in "$FINAL"/*; do
  size=$(stat -c %s "$f")
  [ "$size" -le $((16 * 1024 * 1024)) ] || echo "WARNING: $f is $size bytes, over the 16 MiB that comes back"
done
ls -la "$FINAL"
rm -rf "$STAGE"
