#!/usr/bin/env bash
# A GPU Target on the fake NVML: no gpu_seconds_budget means unlimited, a foreign GPU process during
# the baseline makes it invalid (like a confirm), and a spent GPU budget refuses the next operation.
. "$(dirname "$0")/lib.sh"
ex="$(cd "$(dirname "$0")/../../examples/cpu-saxpy" && pwd)"
fake=${FAKE_NVML_LIBRARY:-$(dirname "$CKO")/src/cko/env/libfake_nvml.so}
[ -f "$fake" ] || fail "fake NVML not found at $fake: build the fake_nvml target"
uuid=GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9
gpu_state() {  # gpu_state [PROCS]: one idle H200, with the given compute processes
  cat > "$tmp/state" <<STATE
driver=570.86.15
cuda=12080
count=1
gpu0.uuid=$uuid
gpu0.name=NVIDIA H200
gpu0.cc=9.0
gpu0.mem_total=150754820096
gpu0.sm_clock=1980
gpu0.sm_clock_max=1980
gpu0.util=0
gpu0.reasons=1
STATE
  [ -z "${1:-}" ] || echo "gpu0.procs=$1" >> "$tmp/state"
}
withgpu() { env CKO_NVML_LIBRARY="$fake" FAKE_NVML_STATE="$tmp/state" CKO_NVIDIA_SMI=/nonexistent/nvidia-smi "$@"; }
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

gpu_state
saxpy_target "$tmp/g" "$ex/original"
printf '[resources]\ngpus = "auto"\n' >> "$tmp/g/cko.toml"   # no gpu_seconds_budget in [limits]
expect_rc 0 withgpu "$CKO" target freeze --spec "$tmp/g/cko.toml" --root "$tmp/g/art"
[ "$(field 'd["gpus"]' < "$tmp/g/art/target.json")" = "['$uuid']" ] || fail "the Target did not take the fake GPU"

# Unset budget: unlimited, the baseline runs (it used to say "0 of 0 GPU seconds").
expect_rc 0 withgpu "$CKO" baseline --root "$tmp/g/art" --calls-per-case 1 --aa-pairs 6 --json
printf '%s' "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)["result"]
assert r["state"] == "succeeded" and "contamination" not in r["outputs"], r
assert len(r["outputs"]["aa"]["d"]) == 6 and r["cost"]["gpu_s"] > 0, r["cost"]'

# A foreign process on the GPU during the baseline: the result says so, exit 1, no resolution.
gpu_state 31337:2147483648
expect_rc 1 withgpu "$CKO" baseline --root "$tmp/g/art" --calls-per-case 1 --aa-pairs 6 --json
printf '%s' "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)["result"]
o = r["outputs"]
assert r["state"] == "succeeded" and o["verdict"] == "invalid", o
assert any("31337" in c for c in o["contamination"]), o["contamination"]
assert "contaminated" in o["reason"] and "resolution" not in o and "aa" not in o, o
assert r["cost"]["driver_calls"] == 1, r["cost"]  # stopped at the first contaminated call'
expect_rc 1 withgpu "$CKO" baseline --root "$tmp/g/art" --calls-per-case 1 --aa-pairs 6
contains "$out" "verdict invalid"
contains "$out" "contaminated"

# A GPU budget that the invocations so far have spent: the next operation is refused, naming it.
gpu_state
saxpy_target "$tmp/h" "$ex/original"
printf 'gpu_seconds_budget = 0.001\n[resources]\ngpus = "auto"\n' >> "$tmp/h/cko.toml"
expect_rc 0 withgpu "$CKO" target freeze --spec "$tmp/h/cko.toml" --root "$tmp/h/art"
expect_rc 0 withgpu "$CKO" baseline --root "$tmp/h/art" --calls-per-case 1 --aa-pairs 6
expect_rc 2 withgpu "$CKO" baseline --root "$tmp/h/art" --calls-per-case 1 --aa-pairs 6
contains "$err" "error[budget_exhausted]"
contains "$err" "GPU budget is spent"

# The contaminated baseline's record (and the rest of both roots) against the JSON Schemas.
py=""
for p in ${CKO_SCHEMA_PYTHON:-} /usr/bin/python3 python3; do
  if "$p" -c 'import jsonschema' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || fail "no python3 with jsonschema (install python3-jsonschema: scripts/deps.sh)"
expect_rc 0 "$py" "$(dirname "$0")/../schemas/validate_store.py" "$tmp/g/art" "$tmp/h/art"
