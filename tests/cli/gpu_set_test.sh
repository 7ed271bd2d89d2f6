#!/usr/bin/env bash
# A Target on a set of two GPUs (the fake NVML): both are its identity, doctor shows their link, a
# foreign process on the second GPU contaminates the measurement, and the set's locks are all or none.
. "$(dirname "$0")/lib.sh"
ex="$(cd "$(dirname "$0")/../../examples/cpu-saxpy" && pwd)"
fake=${FAKE_NVML_LIBRARY:-$(dirname "$CKO")/src/cko/env/libfake_nvml.so}
[ -f "$fake" ] || fail "fake NVML not found at $fake: build the fake_nvml target"
u0=GPU-00000000-1111-2222-3333-444444444444
u1=GPU-11111111-1111-2222-3333-444444444444
gpu_state() {  # gpu_state [EXTRA_LINES]: two idle H200s joined by NVLink under one switch
  {
    printf 'driver=580.159.04\ncuda=13000\ncount=2\ntopo.0.1=10\nnvlink.0.1=1\n'
    for i in 0 1; do
      u=$u0; [ "$i" = 1 ] && u=$u1
      printf 'gpu%s.uuid=%s\ngpu%s.name=NVIDIA H200\ngpu%s.cc=9.0\ngpu%s.sm_clock=1980\ngpu%s.sm_clock_max=1980\ngpu%s.util=0\ngpu%s.reasons=1\n' \
        "$i" "$u" "$i" "$i" "$i" "$i" "$i" "$i"
    done
    [ -z "${1:-}" ] || printf '%s\n' "$1"
  } > "$tmp/state"
}
export CKO_LOCK_DIR="$tmp/locks"
withgpu() { env CKO_NVML_LIBRARY="$fake" FAKE_NVML_STATE="$tmp/state" CKO_NVIDIA_SMI=/nonexistent/nvidia-smi "$@"; }
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

gpu_state
expect_rc 0 withgpu "$CKO" doctor --json
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
items = {i["name"]: i for i in d["items"]}
assert items["gpu_topology"]["detail"] == "0-1: NVLink, common ancestor single_switch", items["gpu_topology"]
t = d["identity"]["gpu_topology"]
assert t == [{"a": "'$u0'", "b": "'$u1'", "common_ancestor": "single_switch", "nvlink": True}], t'

# The set named in the spec in the opposite order of the host's: the Target holds both, sorted.
saxpy_target "$tmp/g" "$ex/original"
printf '[resources]\ngpus = ["%s", "%s"]\n' "$u1" "$u0" >> "$tmp/g/cko.toml"
sed -i 's/^resource_wait_timeout_s = .*//; s/^\[limits\]$/[limits]\nresource_wait_timeout_s = 1/' "$tmp/g/cko.toml"
expect_rc 0 withgpu "$CKO" target freeze --spec "$tmp/g/cko.toml" --root "$tmp/g/art"
python3 - "$tmp/g/art/target.json" "$u0" "$u1" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
assert sorted(t["gpus"]) == sorted(sys.argv[2:]), t["gpus"]
env = t["environment"]
assert [g["uuid"] for g in env["gpus"]] == sys.argv[2:], env["gpus"]
assert env["gpu_topology"][0]["nvlink"] is True, env["gpu_topology"]
PY

expect_rc 0 withgpu "$CKO" baseline --root "$tmp/g/art" --calls-per-case 1 --aa-pairs 6 --json
printf '%s' "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)["result"]
assert r["state"] == "succeeded" and "contamination" not in r["outputs"], r
assert r["cost"]["gpu_s"] > 0, r["cost"]'
inv=$(printf '%s' "$out" | field 'd["id"]')
python3 - "$tmp/g/art/invocations/$inv/events.jsonl" "$u0" "$u1" <<'PY'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
got = [e["data"]["gpu_uuid"] for e in events if e["type"] == "resource_acquired"]
assert got == sys.argv[2:], (got, events[:6])
PY
# One monitor line names both GPUs.
head -n1 "$tmp/g/art/invocations/$inv/monitor.jsonl" | python3 -c '
import json, sys
assert sorted(g["uuid"] for g in json.loads(sys.stdin.readline())["gpus"]) == sys.argv[1:]' "$u0" "$u1"

# A foreign process on the second GPU only: the measurement is contaminated, naming it.
gpu_state "gpu1.procs=31337:na"
expect_rc 1 withgpu "$CKO" baseline --root "$tmp/g/art" --calls-per-case 1 --aa-pairs 6 --json
printf '%s' "$out" | python3 -c '
import json, sys
o = json.load(sys.stdin)["result"]["outputs"]
assert o["verdict"] == "invalid", o
assert any("31337" in c and "'$u1'" in c for c in o["contamination"]), o["contamination"]'

# Another measurement holds the second GPU: none of the set is taken, the wait times out naming it,
# and the first GPU stays free for others the whole time.
gpu_state
lock1=$(python3 -c 'import hashlib,sys; print(hashlib.sha256((sys.argv[1] + "\0" + sys.argv[2]).encode()).hexdigest()[:32])' \
  "$(cat /etc/machine-id 2>/dev/null || cat /var/lib/dbus/machine-id 2>/dev/null || echo "host:$(hostname)")" "$u1")
lock0=$(python3 -c 'import hashlib,sys; print(hashlib.sha256((sys.argv[1] + "\0" + sys.argv[2]).encode()).hexdigest()[:32])' \
  "$(cat /etc/machine-id 2>/dev/null || cat /var/lib/dbus/machine-id 2>/dev/null || echo "host:$(hostname)")" "$u0")
mkdir -p "$CKO_LOCK_DIR"
flock "$CKO_LOCK_DIR/gpu-$lock1.lock" sleep 30 & holder=$!
for _ in $(seq 100); do flock -n "$CKO_LOCK_DIR/gpu-$lock1.lock" true 2>/dev/null || break; sleep 0.05; done
withgpu "$CKO" baseline --root "$tmp/g/art" --calls-per-case 1 --aa-pairs 6 --json > "$tmp/waiting.json" 2>&1 & waiting=$!
sleep 0.4
# The set is tried whole and released at the first busy GPU, so GPU 0 is held for an instant at each
# try: a probe waits up to 2 s for it (a set that kept GPU 0 while it waited would hold it for the
# holder's 30 s). A non-blocking probe failed here when it met such an instant on a loaded host.
flock -w 2 "$CKO_LOCK_DIR/gpu-$lock0.lock" true || fail "GPU 0 was held while its set waited for GPU 1"
rc=0; wait "$waiting" || rc=$?
kill "$holder" 2>/dev/null || true; wait "$holder" 2>/dev/null || true
[ "$rc" -ne 0 ] || fail "the baseline ran while GPU 1 was held"
contains "$(cat "$tmp/waiting.json")" "$u1"
contains "$(cat "$tmp/waiting.json")" "none of the set was taken"
