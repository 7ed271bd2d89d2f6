#!/usr/bin/env bash
# Real records against the JSON Schemas in schemas/, with the real jsonschema validator: a small
# evidence loop, standalone driver calls (success, rejection, timeout, missing result, lost),
# `self-check`, `fsck` and error documents; then corrupted copies must be refused, naming the file.
. "$(dirname "$0")/lib.sh"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
validate="$repo/tests/schemas/validate_store.py"
ex="$repo/examples/cpu-saxpy"
fake="$repo/tests/cli/fake_driver.py"
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

# The python that has jsonschema (Debian's python3-jsonschema is under /usr/bin, not pyenv's).
py=""
for p in ${CKO_SCHEMA_PYTHON:-} /usr/bin/python3 python3; do
  if "$p" -c 'import jsonschema' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || fail "no python3 with jsonschema (install python3-jsonschema: scripts/deps.sh)"
make -s -C "$ex" build/driver_cpp >/dev/null || fail "cannot build the cpu-saxpy C++ driver"

# ---- Root A: one Target through the loop.
t="$tmp/t"; A="$t/art"
saxpy_target "$t" "$ex/original"
echo 'deadline = "2099-01-01T00:00:00Z"' >> "$t/cko.toml"
expect_rc 0 "$CKO" target freeze --spec "$t/cko.toml" --root "$A"
expect_rc 0 "$CKO" baseline --root "$A" --calls-per-case 1 --aa-pairs 6 --json
expect_rc 0 "$CKO" experiment new --root "$A" --candidate "$ex/candidate" --hypothesis "rows are contiguous" \
  --mechanism loop-order --failure-closes mechanism --no-falsifier-reason "known" --json
exp=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 0 "$CKO" screen "$exp" --root "$A" --json
expect_rc 0 "$CKO" confirm "$exp" --root "$A" --json
conf=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 0 "$CKO" champion select --root "$A" --experiment "$exp" --confirm "$conf"
expect_rc 0 "$CKO" audit --root "$A" --json
# profiles/<id>.json against profile-record-v1: an H200 trace and export on this CPU-only Target are
# foreign evidence (bound with --foreign; kept without an experiment, foreign by themselves).
expect_rc 0 "$CKO" map "$repo/tests/fixtures/torch/torch_trace.json" --root "$A" --experiment "$exp" --subject candidate \
  --tool-version 2.11 --foreign
expect_rc 0 "$CKO" profile nsys "$repo/tests/fixtures/nsys/vec.sqlite" --root "$A"
contains "$out" "kept as foreign evidence"
expect_rc 0 "$CKO" champion restore --root "$A" --reason "schema test"
expect_rc 0 "$CKO" stop --root "$A" --reason "schema test"  # stop.json against stop-v1

# ---- Root B: standalone driver calls, each outcome once.
B="$tmp/b"
mkdir -p "$tmp/src" "$tmp/cand" && echo 'kernel' > "$tmp/src/k.cu" && echo 'kernel 2' > "$tmp/cand/k.cu"
echo '{"n": 4}' > "$tmp/case.json"
drive() {  # drive BEHAVIOUR [cko flags...]
  local b=$1; shift
  "$CKO" driver run --root "$B" --case-file "$tmp/case.json" --reference "$tmp/src" \
    --correctness-metric max_rel_err --env-allow FAKE_PIDS "$@" --json -- python3 "$fake" "$b"
}
expect_rc 0 drive ok --mode single --samples 3
expect_rc 0 drive ok --mode paired --candidate "$tmp/cand" --capability single_subject \
  --capability paired_in_process --samples 2 --constraint peak_mem_bytes:byte
expect_rc 3 drive no_result
contains "$out" missing_result
expect_rc 3 drive nan  # a rejected result (a bare NaN): not checked against driver-result-v1/v2
expect_rc 4 drive hang --command-timeout 1 --cleanup-timeout 1
contains "$out" timed_out

# A lost invocation: its owner is killed mid-call; `status` kills the leftovers and writes `lost`.
export FAKE_PIDS="$tmp/lost.pids"
"$CKO" driver run --root "$B" --case-file "$tmp/case.json" --reference "$tmp/src" --correctness-metric max_rel_err \
  --env-allow FAKE_PIDS --command-timeout 60 -- python3 "$fake" hang >/dev/null 2>&1 &
owner=$!  # cko itself, not a subshell: it must die without writing a result
for _ in $(seq 100); do [ -s "$FAKE_PIDS" ] && break; sleep 0.1; done
[ -s "$FAKE_PIDS" ] || { kill -KILL "$owner"; fail "the hanging driver never started"; }
kill -KILL "$owner"; wait "$owner" 2>/dev/null || true  # 137: killed, as intended
unset FAKE_PIDS
lost=$(grep -l '"hang"' "$B"/invocations/*/request.json | while read -r f; do
         d=$(dirname "$f"); [ -e "$d/result.json" ] || basename "$d"; done)
[ -n "$lost" ] || fail "no unfinished invocation after killing its owner"
expect_rc 3 "$CKO" status "$lost" --root "$B" --json  # lost: an environment outcome, exit 3
read -r p1 p2 < "$tmp/lost.pids"
for p in $p1 $p2; do  # the driver and its child must be gone; never leave them behind
  if [ -r "/proc/$p/stat" ] && ! grep -q ') Z ' "/proc/$p/stat"; then kill -KILL "$p"; fail "status left pid $p alive"; fi
done
[ "$(field 'd["state"]' < "$B/invocations/$lost/result.json")" = lost ] || fail "status did not record lost"

# ---- Root C: a diagnostic Target (no workload).
mkdir -p "$tmp/diag"
printf '[target]\nname = "diag"\nmode = "diagnostic"\n' > "$tmp/diag/cko.toml"
expect_rc 0 "$CKO" target freeze --spec "$tmp/diag/cko.toml" --root "$tmp/diag/art"

# ---- Every record of the three roots.
expect_rc 0 "$py" "$validate" "$A" "$B" "$tmp/diag/art"
echo "$out" | sed 's/^/  /'
for kind in store-v1 target-v1 snapshot-manifest-v1 experiment-v1 invocation-request-v1 invocation-result-v1 \
            invocation-event-v1 process-v1 driver-request-v1 driver-result-v1 driver-result-v2 selection-v1 champion-v1 stop-v1; do
  printf '%s\n' "$out" | grep -Eq "^  $kind +[1-9][0-9]* checked" || fail "no $kind record was checked: $out"
done
# Exactly the results cko accepted were checked: one per ok call_validated event.
accepted=$(cat "$A"/invocations/*/events.jsonl "$B"/invocations/*/events.jsonl | grep '"type":"call_validated"' | grep -c '"ok":true')
# The SDK drivers write v2 (with loaded_digest), the hand-written fake driver v1.
v1=$(printf '%s\n' "$out" | sed -nE 's/^  driver-result-v1 +([0-9]+) checked.*/\1/p')
v2=$(printf '%s\n' "$out" | sed -nE 's/^  driver-result-v2 +([0-9]+) checked.*/\1/p')
[ "$((${v1:-0} + ${v2:-0}))" -eq "$accepted" ] || fail "expected $accepted driver results (v1 + v2): $out"

# ---- The documents verbs print.
"$CKO" self-check --json > "$tmp/self-check.json"
expect_rc 0 "$py" "$validate" --document "$tmp/self-check.json"
"$CKO" fsck --root "$A" --json > "$tmp/fsck.json"
expect_rc 0 "$py" "$validate" --document "$tmp/fsck.json"
# A bundle of root A: its manifest against bundle-v1, fsck --bundle's document against fsck-v1.
"$CKO" bundle --root "$A" --out "$tmp/case.tar.zst" --json > "$tmp/bundle-out.json"
field 'json.dumps(d["manifest"])' < "$tmp/bundle-out.json" > "$tmp/bundle.json"
expect_rc 0 "$py" "$validate" --document "$tmp/bundle.json"
"$CKO" fsck --bundle "$tmp/case.tar.zst" --json > "$tmp/fsck-bundle.json"
expect_rc 0 "$py" "$validate" --document "$tmp/fsck-bundle.json"
grep -q '"bundle"' "$tmp/fsck-bundle.json" || fail "fsck --bundle printed no bundle member"
expect_rc 2 "$CKO" confirm exp-0000000000000000 --root "$A" --json
printf '%s' "$out" > "$tmp/error.json"
expect_rc 0 "$py" "$validate" --document "$tmp/error.json" --schema error-v1
expect_rc 2 "$CKO" baseline --root "$tmp/nowhere" --json
printf '%s' "$out" > "$tmp/error2.json"
expect_rc 0 "$py" "$validate" --document "$tmp/error2.json" --schema error-v1

# ---- The documents of doctor, help and the profile verbs, on the fixtures.
fx="$repo/tests/fixtures"
docs="$tmp/docs"; mkdir -p "$docs"
"$CKO" doctor --json > "$docs/doctor.json"
env CKO_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 CKO_NVIDIA_SMI=/nonexistent/nvidia-smi \
  "$CKO" doctor --json --require-gpu > "$docs/doctor-blocked.json" || [ $? -eq 3 ]
"$CKO" help --json > "$docs/help.json"
"$CKO" profile ncu "$fx/ncu/ncu_raw.csv" --json > "$docs/ncu-raw.json"
"$CKO" profile ncu "$fx/ncu/ncu_details.csv" --json --device h200-sxm > "$docs/ncu-details.json"
"$CKO" profile ncu "$fx/ncu/ncu_counters_not_permitted.txt" --json > "$docs/ncu-refused.json" || [ $? -eq 3 ]
"$CKO" profile diff "$fx/ncu/ncu_flops_raw.csv" "$fx/ncu/ncu_flops_raw_b.csv" --json > "$docs/ncu-diff.json"
"$CKO" profile nsys "$fx/nsys/vec.sqlite" --json > "$docs/nsys.json"
"$CKO" profile torch "$fx/torch/torch_trace.json" --json --tool-version 2.11 > "$docs/torch.json"
"$CKO" profile torch "$fx/torch/h200_matmul_trace.json.gz" --json > "$docs/torch-gz.json"
"$CKO" map "$fx/torch/torch_trace.json" --window layer --speedup 2 --json > "$docs/map.json"
"$CKO" map "$fx/nsys/vec.sqlite" --json > "$docs/map-nsys.json"
mkdir "$tmp/bin"  # profile collect ncu, with a fake ncu on PATH that prints the raw fixture
printf '#!/bin/sh\nif [ "$1" = --version ]; then echo "Version 2025.3.1.0 (build 1)"; exit 0; fi\ncat "%s"\n' \
  "$fx/ncu/ncu_raw.csv" > "$tmp/bin/ncu"
chmod +x "$tmp/bin/ncu"
env PATH="$tmp/bin:$PATH" "$CKO" profile collect ncu --out "$tmp/collect" --json -- ./vec 1 > "$docs/ncu-collect.json"
grep -q '"collection"' "$docs/ncu-collect.json"
for f in "$docs"/*.json; do expect_rc 0 "$py" "$validate" --document "$f"; done
# A broken copy of each kind is refused, naming the JSON path.
edit_doc() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); exec(sys.argv[2]); json.dump(d, open(sys.argv[3], "w"))' "$@"; }
edit_doc "$docs/doctor.json" 'd["items"][0]["status"] = "fine"' "$tmp/bad-doctor.json"
edit_doc "$docs/ncu-details.json" 'd["launches"][1]["unmodeled"] = "3"' "$tmp/bad-ncu.json"
edit_doc "$docs/ncu-diff.json" 'd["unmatched"][0]["side"] = "C"' "$tmp/bad-diff.json"
edit_doc "$docs/nsys.json" 'd["reports"]["cuda_gpu_kern_sum"]["rows"][0]["count"] = -1' "$tmp/bad-nsys.json"
edit_doc "$docs/torch.json" 'd["traces"][0]["summary"]["flows"]["p99"] = 1' "$tmp/bad-torch.json"
expect_rc 1 "$py" "$validate" --document "$tmp/bad-doctor.json"
contains "$out" "\$.items[0].status: [doctor-v1] 'fine' is not one of"
expect_rc 1 "$py" "$validate" --document "$tmp/bad-ncu.json"
contains "$out" "\$.launches[1].unmodeled: [ncu-report-v3] '3' is not of type 'integer'"
expect_rc 1 "$py" "$validate" --document "$tmp/bad-diff.json"
contains "$out" "\$.unmatched[0].side: [ncu-diff-v1] 'C' is not one of"
expect_rc 1 "$py" "$validate" --document "$tmp/bad-nsys.json"
contains "$out" "\$.reports.cuda_gpu_kern_sum.rows[0].count: [profile-nsys-v1] -1 is less than the minimum of 0"
expect_rc 1 "$py" "$validate" --document "$tmp/bad-torch.json"
contains "$out" "\$.traces[0].summary.flows: [profile-torch-v1] Additional properties are not allowed ('p99' was unexpected)"

# ---- Corrupted copies are refused, naming the file and the JSON path.
N="$tmp/neg"
cp -r "$A" "$N" && chmod -R u+w "$N"
edit() {  # edit FILE PYTHON-STATEMENT-ON-d
  python3 - "$1" "$2" <<'PY'
import json, sys
path, stmt = sys.argv[1], sys.argv[2]
d = json.load(open(path))
exec(stmt)
open(path, "w").write(json.dumps(d, sort_keys=True, separators=(",", ":")))
PY
}
e_file=$(ls "$N"/experiments/*.json)
edit "$e_file" 'd["surprise"] = 1'
conf_file="$N/invocations/$conf/result.json"
edit "$conf_file" 'd["cost"]["driver_calls"] = "8"; d["outputs"]["estimate"]["extra"] = 0'
t_file="$N/target.json"
edit "$t_file" 'd["environment"]["gpus"] = [{"index": 0, "uuid": "GPU-x", "power_w": "high"}]'
edit "$N/store.json" 'd["format_version"] = "cko/store-v9"'
first_event=$(ls "$N"/invocations/*/events.jsonl | head -n1)
sed -i '1s/"seq":0/"seq":"0"/' "$first_event"
expect_rc 1 "$py" "$validate" "$N"
contains "$out" "INVALID $e_file: \$: [experiment-v1] Additional properties are not allowed ('surprise' was unexpected)"
contains "$out" "INVALID $conf_file: \$.cost.driver_calls: [invocation-result-v1] '8' is not of type"
contains "$out" "INVALID $conf_file: \$.outputs.estimate: [invocation-result-v1] Unevaluated properties are not allowed ('extra' was unexpected)"
contains "$out" "INVALID $t_file: \$.environment.gpus[0].power_w: [target-v1] 'high' is not of type"
contains "$out" "INVALID $N/store.json: \$.format_version: cko/store-v9 where a cko/store-v1 belongs"
contains "$out" "INVALID $first_event:1: \$.seq: [invocation-event-v1] '0' is not of type 'integer'"
contains "$out" "FAILED: "
# An unknown kind of record, wherever it is, is a failure too.
N2="$tmp/neg2"
cp -r "$A" "$N2" && chmod -R u+w "$N2"
echo '{"format_version":"cko/mystery-v1","id":"x"}' > "$N2/mystery.json"
expect_rc 1 "$py" "$validate" "$N2"
contains "$out" "INVALID $N2/mystery.json: \$.format_version: unknown format_version cko/mystery-v1"
