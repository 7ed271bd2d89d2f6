# Shared helpers for the CLI tests: sourced, never run.
# Any command that fails outside a condition (`if`, `||`, `&&`) fails the script at once, naming its
# line: a python assert block, a pipeline (pipefail) or a $(...) assignment needs no `|| fail` to
# count. A command expected to fail goes through expect_rc, or is written `cmd || true`.
# expect_rc RC CMD...  runs CMD, fails the test unless it exits with RC; output in $out/$err.
set -Eeuo pipefail
trap 'rc=$?; echo "  FAIL: ${BASH_SOURCE[0]##*/}:$LINENO: \`$BASH_COMMAND\` exited $rc" >&2; exit "$rc"' ERR
fail() { echo "  FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
expect_rc() {
  local want=$1 got=0; shift
  "$@" >"$tmp/out" 2>"$tmp/err" || got=$?
  out=$(cat "$tmp/out"); err=$(cat "$tmp/err")
  [ "$got" -eq "$want" ] || fail "'$*' exited $got, expected $want; stderr: $err"
}
contains() { case "$1" in *"$2"*) ;; *) fail "expected to find '$2' in: $1";; esac; }

# saxpy_target DIR ORIGINAL_SRC_DIR: a one-case cpu-saxpy Target folder (spec + original + case) driven
# by the example's C++ driver; extra spec lines may be appended to DIR/cko.toml afterwards.
saxpy_target() {
  local dir=$1 src=$2 ex
  ex="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../examples/cpu-saxpy" && pwd)"
  make -s -C "$ex" build/driver_cpp >/dev/null || fail "cannot build the cpu-saxpy C++ driver"
  mkdir -p "$dir/original" "$dir/cases"
  cp "$src/saxpy.cpp" "$dir/original/"
  cp "$ex/cases/small.json" "$dir/cases/"
  cat > "$dir/cko.toml" <<TOML
[target]
name = "saxpy-small"
claim_layer = "kernel"
original = "original"
change_scope = ["original/saxpy.cpp"]
[cases]
dir = "cases"
ids = ["small"]
[driver]
argv = ["$ex/build/driver_cpp"]
capabilities = ["single_subject", "paired_in_process"]
env_allow = ["PATH", "TMPDIR"]
[objective]
primary = { name = "latency_us", unit = "us", direction = "lower", aggregation = "median" }
minimum_effect_pct = 5.0
[observation]
# cko's own tests run on a shared, loaded CI host: their verdicts check cko's rules, not a claim
# about this host, so host load is not let decide them (tests/cli/observation_test.sh checks the rule)
max_host_load_per_cpu = 1000
max_host_steal_pct = 100
[correctness]
metric = "max_rel_err"
operator = "<="
threshold = 1e-6
[statistics]
min_pairs = 6
max_pairs = 12
samples_per_call = 3
[limits]
command_timeout_s = 60
operation_timeout_s = 600
TOML
}

# use_fake_h200: every later cko call of the script sees one idle H200 through the fake NVML (the
# fake_nvml target), the GPU the real exports of tests/fixtures were made on; a Target frozen with
# `[resources] gpus = "auto"` then measures on it.
use_fake_h200() {
  local fake=${FAKE_NVML_LIBRARY:-$(dirname "$CKO")/src/cko/env/libfake_nvml.so}
  [ -f "$fake" ] || fail "fake NVML not found at $fake: build the fake_nvml target"
  cat > "$tmp/fake-h200-state" <<STATE
driver=570.86.15
cuda=12080
count=1
gpu0.uuid=GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9
gpu0.name=NVIDIA H200
gpu0.cc=9.0
gpu0.mem_total=150754820096
gpu0.sm_clock=1980
gpu0.sm_clock_max=1980
gpu0.util=0
gpu0.reasons=1
STATE
  export CKO_NVML_LIBRARY="$fake" FAKE_NVML_STATE="$tmp/fake-h200-state" CKO_NVIDIA_SMI=/nonexistent/nvidia-smi
}

# reledger ROOT REL: after a test edited the ledgered file ROOT/REL on purpose (a copy of a root
# "moved" to another machine), rewrites the ledger to agree: REL's line gets the new digest and size
# and every later line is chained again. Every read checks a record against the ledger, so an edit
# alone is refused (tampered_record); a store rewritten as a whole is what only a noted ledger_head
# detects (docs/reliability.md).
reledger() {
  python3 - "$1" "$2" <<'PY'
import hashlib, json, os, sys
root, rel = sys.argv[1], sys.argv[2]
data = open(os.path.join(root, rel), "rb").read()
path = os.path.join(root, "ledger.jsonl")
lines, prev, out = open(path, "rb").read().decode().splitlines(), "", []
for line in lines:
    d = json.loads(line)
    if d["path"] == rel:
        d["sha256"], d["size"] = hashlib.sha256(data).hexdigest(), len(data)
    d["prev"] = prev
    text = json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    prev = hashlib.sha256(text.encode()).hexdigest()
    out.append(text)
os.chmod(path, 0o644)
open(path, "w").write("".join(l + "\n" for l in out))
PY
}

# cases_target DIR NAME LAYER [ORIGINAL_MODEL [DRIVER]]: a two-case (a, b) Target folder on the
# synthetic workload (tests/cli/cases_driver.py unless DRIVER; ORIGINAL_MODEL is the original's
# model.json, '{"factor": {}}' unless given). Extra spec sections may be appended to DIR/cko.toml.
# CASES_CAPS=', "session"' adds the session capability (an operation's requests in one process).
cases_target() {
  local dir=$1 name=$2 layer=$3 original=${4:-'{"factor": {}}'}
  local driver=${5:-"$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/cases_driver.py"}
  mkdir -p "$dir/original" "$dir/cases"
  printf '%s\n' "$original" > "$dir/original/model.json"
  for c in a b; do echo "{\"case\": \"$c\"}" > "$dir/cases/$c.json"; done
  cat > "$dir/cko.toml" <<TOML
[target]
name = "$name"
claim_layer = "$layer"
original = "original"
change_scope = ["original/model.json"]
[cases]
dir = "cases"
ids = ["a", "b"]
[driver]
argv = ["python3", "$driver"]
capabilities = ["single_subject", "paired_in_process"${CASES_CAPS:-}]
env_allow = ["PATH", "PYTHONPATH"]
[objective]
primary = { name = "latency_us", unit = "us", direction = "lower", aggregation = "median" }
minimum_effect_pct = 5.0
[observation]
# cko's own tests run on a shared, loaded CI host: their verdicts check cko's rules, not a claim
# about this host, so host load is not let decide them (tests/cli/observation_test.sh checks the rule)
max_host_load_per_cpu = 1000
max_host_steal_pct = 100
[correctness]
metric = "max_rel_err"
operator = "<="
threshold = 1e-6
[statistics]
min_pairs = 6
max_pairs = 12
samples_per_call = 3
TOML
}
