#!/usr/bin/env bash
# Driver calls through Slurm on a one-node localhost cluster started (and stopped) here: the
# cpu-saxpy loop with driver.launcher = "slurm" gives the local run's verdicts, job ids are recorded,
# a timeout scancels the job, a cancel leaves no job in squeue, the compute node's identity must
# match the Target's, and sbatch --wait gives the same verdicts as srun.
. "$(dirname "$0")/lib.sh"
ex="$(cd "$(dirname "$0")/../../examples/cpu-saxpy" && pwd)"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
export PATH="$PATH:/usr/sbin:/sbin"
for tool in munged slurmctld slurmd srun sbatch squeue scancel scontrol; do
  command -v "$tool" >/dev/null || fail "$tool is not installed: run \`make deps\` (it installs Debian's slurm-wlm and munge)"
done
[ "$(id -u)" = 0 ] || fail "this test starts slurmctld/slurmd with SlurmUser=root: run it as root (CI does)"

cluster="$tmp/cluster"
mkdir -p "$cluster"
trap 'rc=$?; [ "$rc" -eq 0 ] || { squeue 2>&1 | tail -5; tail -n 15 "$cluster"/slurmctld.log "$cluster"/slurmd.log 2>/dev/null; } >&2
      bash "$repo/scripts/slurm-cluster.sh" stop "$cluster"; rm -rf "$tmp"' EXIT
export "$(bash "$repo/scripts/slurm-cluster.sh" start "$cluster")"
node=$(hostname -s)
py() { python3 -c "$@"; }

# slurm_target DIR SRC [submit]: lib.sh's one-case saxpy Target, its calls sent through Slurm.
slurm_target() {
  saxpy_target "$1" "$2"
  sed -i 's/^capabilities = .*/&\nlauncher = "slurm"/' "$1/cko.toml"
  printf '[slurm]\npartition = "debug"\nsubmit = "%s"\n' "${3:-srun}" >>"$1/cko.toml"
}

# A bad spec names the field and the fix.
slurm_target "$tmp/bad" "$ex/original"
echo 'extra_args = ["--output=/tmp/x"]' >>"$tmp/bad/cko.toml"
expect_rc 2 "$CKO" target freeze --spec "$tmp/bad/cko.toml" --root "$tmp/bad/art"
contains "$err" "slurm.extra_args[0]"
contains "$err" "--nodelist"

# 1. The loop, locally and through srun: the same verdicts.
saxpy_target "$tmp/local" "$ex/original"
slurm_target "$tmp/srun" "$ex/original"
verdicts() {  # ROOT -> "screen-verdict decision confirm-verdict"
  local root=$1 exp s c
  expect_rc 0 "$CKO" target freeze --spec "$(dirname "$root")/cko.toml" --root "$root"
  expect_rc 0 "$CKO" experiment new --root "$root" --candidate "$ex/candidate" --hypothesis "rows are contiguous" \
    --mechanism loop-order --failure-closes mechanism --no-falsifier-reason "known" --json
  exp=$(printf '%s' "$out" | py 'import json,sys; print(json.load(sys.stdin)["id"])')
  expect_rc 0 "$CKO" screen "$exp" --root "$root" --json
  s=$(printf '%s' "$out" | py 'import json,sys; o=json.load(sys.stdin)["result"]["outputs"]; print(o["verdict"], o["decision"])')
  expect_rc 0 "$CKO" confirm "$exp" --root "$root" --json
  c=$(printf '%s' "$out" | py 'import json,sys; print(json.load(sys.stdin)["result"]["outputs"]["verdict"])')
  echo "$s $c"
}
local_v=$(verdicts "$tmp/local/art")
srun_v=$(verdicts "$tmp/srun/art")
[ "$local_v" = "improved pass_to_confirm improved" ] || fail "local loop: $local_v"
[ "$srun_v" = "$local_v" ] || fail "through srun: '$srun_v', locally: '$local_v'"

# Every call of the Slurm store was its own job on this node, its id recorded; the Target's
# identity is the node's (taken inside the smoke's job), the submit host's kept beside it.
py '
import json, sys, glob, os
root, node = sys.argv[1], sys.argv[2]
recs = [json.load(open(p)) for p in sorted(glob.glob(root + "/invocations/*/driver/*/slurm.json"))]
assert len(recs) >= 14, len(recs)
ids = [r["job_id"] for r in recs]
assert all(i and i.isdigit() for i in ids) and len(set(ids)) == len(ids), ids
assert all(r["node"] == node and r["job_state"] == "COMPLETED" and not r["scancelled"] for r in recs), recs[0]
assert all(r["node_identity"]["format_version"] == "cko/identity-v1" for r in recs)
assert all(r["gpu_uuids"] == [] for r in recs)  # a CPU cluster: Slurm gave no GPUs
t = json.load(open(root + "/target.json"))
assert t["environment"]["host"]["hostname"] == node and "submit_host_environment" in t, t.keys()
assert t["spec"]["driver"]["launcher"] == "slurm"
for inv in glob.glob(root + "/invocations/*/events.jsonl"):
    for line in open(inv):
        e = json.loads(line)
        if e["type"] == "call_finished":
            assert e["data"]["slurm"]["job_id"] in ids, e
' "$tmp/srun/art" "$node"
[ -z "$(squeue -h)" ] || fail "jobs left after the loop: $(squeue -h)"
# The local Target's frozen form is unchanged by the launcher field (no launcher key).
py 'import json,sys; d=json.load(open(sys.argv[1]))["spec"]["driver"]; assert "launcher" not in d, d' "$tmp/local/art/target.json"

# 2. A driver that hangs (after its smoke): the call times out, its job is scancelled, none is left.
cat >"$tmp/hang.py" <<'PY'
import json, os, sys, time
req = json.load(open(sys.argv[sys.argv.index("--request") + 1]))
if req["mode"] == "smoke":
    os.execv(sys.argv[1], sys.argv[1:])
time.sleep(600)
PY
slurm_target "$tmp/hang" "$ex/original"
sed -i "s|^argv = \[\"\(.*\)\"\]|argv = [\"python3\", \"$tmp/hang.py\", \"\1\"]|; s/^command_timeout_s = 60/command_timeout_s = 2\nresource_wait_timeout_s = 3\ncleanup_timeout_s = 2/" "$tmp/hang/cko.toml"
expect_rc 0 "$CKO" target freeze --spec "$tmp/hang/cko.toml" --root "$tmp/hang/art"
started=$(date +%s)
expect_rc 4 "$CKO" baseline --root "$tmp/hang/art" --calls-per-case 1 --aa-pairs 6 --json
contains "$out" '"state": "timed_out"'
[ $(( $(date +%s) - started )) -lt 90 ] || fail "the timeout took $(( $(date +%s) - started )) s"
py '
import json, sys, glob
recs = [json.load(open(p)) for p in glob.glob(sys.argv[1] + "/invocations/*/driver/*/slurm.json")]
hung = [r for r in recs if r["scancelled"]]
assert len(hung) == 1, recs
r = hung[0]
assert r["scancel_reason"] == "timeout" and r["job_state"] == "CANCELLED" and not r["left_in_queue"], r
assert r["job_id"].isdigit() and r["node"] == sys.argv[2], r
' "$tmp/hang/art" "$node"
[ -z "$(squeue -h)" ] || fail "the timed-out job is still queued: $(squeue -h)"

# 3. cancel: while the hanging call's job runs, `cko cancel` ends it; squeue lists no job.
sed -i 's/^command_timeout_s = 2/command_timeout_s = 300/' "$tmp/hang/cko.toml"
expect_rc 0 "$CKO" target freeze --spec "$tmp/hang/cko.toml" --root "$tmp/hang/art2"
expect_rc 0 "$CKO" baseline --root "$tmp/hang/art2" --calls-per-case 1 --aa-pairs 6 --detach
id=$(printf '%s' "$out" | head -1)
for _ in $(seq 1 300); do
  [ -n "$(squeue -h -t RUNNING --name "cko-$id-0001" -o %i)" ] && break
  sleep 0.2
done
[ -n "$(squeue -h -t RUNNING --name "cko-$id-0001" -o %i)" ] || fail "the baseline's job never ran: $(squeue -h)"
expect_rc 0 "$CKO" cancel "$id" --root "$tmp/hang/art2" --json
contains "$out" '"state": "cancelled"'
[ -z "$(squeue -h)" ] || fail "cancel left a job in squeue: $(squeue -h)"
py '
import json, sys
r = json.load(open(sys.argv[1] + "/invocations/" + sys.argv[2] + "/driver/0001/slurm.json"))
assert r["scancelled"] and r["scancel_reason"] == "cancel" and r["job_state"] == "CANCELLED", r
' "$tmp/hang/art2" "$id"

# A SIGKILLed owner: `status` declares the invocation lost and scancels the job it left running.
expect_rc 0 "$CKO" baseline --root "$tmp/hang/art2" --calls-per-case 1 --aa-pairs 6 --detach
id=$(printf '%s' "$out" | head -1)
for _ in $(seq 1 300); do
  [ -n "$(squeue -h -t RUNNING --name "cko-$id-0001" -o %i)" ] && break
  sleep 0.2
done
owner=$(py 'import json,sys; print(json.load(open(sys.argv[1]))["owner"]["pid"])' "$tmp/hang/art2/invocations/$id/request.json")
kill -KILL "$owner"
for _ in $(seq 1 50); do kill -0 "$owner" 2>/dev/null || break; sleep 0.1; done
expect_rc 3 "$CKO" status "$id" --root "$tmp/hang/art2" --json
contains "$out" '"state": "lost"'
[ -z "$(squeue -h -t PENDING,RUNNING --name "cko-$id-0001")" ] || fail "the lost owner's job still runs: $(squeue -h)"

# 4. The node's identity must match the Target's: a cko on the node whose doctor reports another
# machine-id (once $tmp/flip exists) makes the comparison invalid, naming the field.
cat >"$tmp/cko-node" <<SH
#!/bin/sh
if [ -e "$tmp/flip" ]; then
  "$CKO" "\$@" | python3 -c 'import json,sys; d=json.load(sys.stdin); d["identity"]["host"]["machine_id"]="0000other"; print(json.dumps(d))'
else
  exec "$CKO" "\$@"
fi
SH
chmod +x "$tmp/cko-node"
slurm_target "$tmp/ident" "$ex/original"
echo "cko = \"$tmp/cko-node\"" >>"$tmp/ident/cko.toml"
expect_rc 0 "$CKO" target freeze --spec "$tmp/ident/cko.toml" --root "$tmp/ident/art"
expect_rc 0 "$CKO" experiment new --root "$tmp/ident/art" --candidate "$ex/candidate" --hypothesis "rows" \
  --mechanism loop-order --failure-closes mechanism --no-falsifier-reason "known" --json
exp=$(printf '%s' "$out" | py 'import json,sys; print(json.load(sys.stdin)["id"])')
touch "$tmp/flip"
expect_rc 1 "$CKO" screen "$exp" --root "$tmp/ident/art" --json
printf '%s' "$out" | py '
import json, sys
o = json.load(sys.stdin)["result"]
assert o["outputs"]["verdict"] == "invalid", o["outputs"]["verdict"]
assert "machine_id" in o["reason"] and "Slurm job" in o["reason"], o["reason"]'

# 5. sbatch --wait (for detached runs): the screen gives the local verdict too.
slurm_target "$tmp/sbatch" "$ex/original" sbatch
expect_rc 0 "$CKO" target freeze --spec "$tmp/sbatch/cko.toml" --root "$tmp/sbatch/art"
expect_rc 0 "$CKO" experiment new --root "$tmp/sbatch/art" --candidate "$ex/candidate" --hypothesis "rows" \
  --mechanism loop-order --failure-closes mechanism --no-falsifier-reason "known" --json
exp=$(printf '%s' "$out" | py 'import json,sys; print(json.load(sys.stdin)["id"])')
expect_rc 0 "$CKO" screen "$exp" --root "$tmp/sbatch/art" --json
sbatch_v=$(printf '%s' "$out" | py 'import json,sys; o=json.load(sys.stdin)["result"]["outputs"]; print(o["verdict"], o["decision"])')
[ "$sbatch_v improved" = "$local_v" ] || fail "through sbatch: '$sbatch_v', locally: '$local_v'"
py '
import json, sys, glob
recs = [json.load(open(p)) for p in glob.glob(sys.argv[1] + "/invocations/*/driver/*/slurm.json")]
assert recs and all(r["submit"] == "sbatch" and r["job_id"].isdigit() and r["job_state"] == "COMPLETED" for r in recs), recs[0]
' "$tmp/sbatch/art"
[ -z "$(squeue -h)" ] || fail "jobs left after sbatch: $(squeue -h)"

# Every record of the Slurm stores against the JSON Schemas (slurm.json: slurm-call-v1).
schema_py=""
for p in ${CKO_SCHEMA_PYTHON:-} /usr/bin/python3 python3; do
  if "$p" -c 'import jsonschema' 2>/dev/null; then schema_py=$p; break; fi
done
[ -n "$schema_py" ] || fail "no python3 with jsonschema (install python3-jsonschema: make deps)"
expect_rc 0 "$schema_py" "$repo/tests/schemas/validate_store.py" "$tmp/srun/art" "$tmp/sbatch/art" "$tmp/hang/art" \
  "$tmp/hang/art2" "$tmp/ident/art"
contains "$out" "slurm-call-v1"
echo "slurm: ok (local = srun = sbatch: $local_v)"
