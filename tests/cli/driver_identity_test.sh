#!/usr/bin/env bash
# The driver's identity (issue [19]): a Python driver that is a package in a folder writes bytecode
# into that folder when it runs, and that must not make its own Target refuse to measure; a real edit
# of a driver file names the file, and so does a file that appeared or vanished.
. "$(dirname "$0")/lib.sh"
here="$(cd "$(dirname "$0")" && pwd)"
export PYTHONPATH="$here/../../sdk/python"

# The package: bench/driver.py imports its sibling bench/workload.py (the three-case workload of the
# loop tests), run as `python3 -m bench.driver` from the spec's directory.
T="$tmp/t"; A="$T/art"
mkdir -p "$T/bench" "$T/original" "$T/cases"
echo '{"factor": {}}' > "$T/original/model.json"
echo '{"case": "a"}' > "$T/cases/a.json"
touch "$T/bench/__init__.py"
cp "$here/cases_driver.py" "$T/bench/workload.py"
cat > "$T/bench/driver.py" <<'PY'
import sys

from cko_driver import Workload, run_driver

from bench import workload

if __name__ == "__main__":
    sys.exit(run_driver(Workload.from_functions(workload.prepare, workload.run, workload.check,
                                                primary_value=workload.latency), warmup_s=0.0))
PY
cat > "$T/cko.toml" <<'TOML'
[target]
name = "package-driver"
claim_layer = "kernel"
original = "original"
change_scope = ["original/model.json"]
[cases]
dir = "cases"
ids = ["a"]
[driver]
argv = ["python3", "-m", "bench.driver"]
capabilities = ["single_subject", "paired_in_process"]
identity_paths = ["bench"]
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

# 1. The freeze's smoke ran the package in place (Python left its bytecode there), and the Target
# still measures: a baseline succeeds.
expect_rc 0 "$CKO" target freeze --spec "$T/cko.toml" --root "$A"
[ -d "$T/bench/__pycache__" ] || fail "the smoke wrote no bytecode: the test no longer shows the case"
expect_rc 0 "$CKO" baseline --root "$A"

# files_changed JSON WANT: the driver_changed error of a baseline's (or a refused screen's) --json
# document names exactly the files of WANT ("path:change" words).
files_changed() {
  python3 - "$1" "$2" <<'PY' || fail "driver_changed does not name exactly $2: $1"
import json, sys
d = json.loads(sys.argv[1])
e = d["error"] if "error" in d else d["result"]["error"]
assert e["code"] == "driver_changed", e
got = [f'{f["path"]}:{f["change"]}' for f in e["details"]["files"]]
assert got == sys.argv[2].split(), got
for f in got:
    path, change = f.split(":")
    assert f"{path} {change}" in e["message"], e["message"]
PY
}

# 2. An edited file is named, and only it: by a baseline, and by a screen (refused before it runs).
cp "$T/bench/workload.py" "$tmp/workload.py"
echo "# edited" >> "$T/bench/workload.py"
expect_rc 3 "$CKO" baseline --root "$A" --json
files_changed "$out" "bench/workload.py:changed"
# The summary of the failed baseline says why, once, like any error (it printed only "failed").
expect_rc 3 "$CKO" baseline --root "$A"
contains "$out" ": failed"
contains "$err" "cko: error[driver_changed]: driver files changed since the Target was frozen: bench/workload.py changed"
[ "$(printf '%s\n' "$err" | grep -c 'error\[')" = 1 ] || fail "the failure was printed more than once: $err"
# Over MCP (`cko mcp --root A`, a call naming no root) it is a tool error with the reason.
(cd "$tmp" && printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"baseline","arguments":{}}}' \
  | "$CKO" mcp --root "$A" > "$tmp/mcp.out")
python3 - "$tmp/mcp.out" <<'PY' || fail "the failed baseline over MCP: $(cat "$tmp/mcp.out")"
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])][-1]["result"]
assert r["isError"] is True, r
assert r["structuredContent"]["state"] == "failed", r["structuredContent"]
assert r["structuredContent"]["error"]["code"] == "driver_changed", r["structuredContent"]["error"]
assert "bench/workload.py changed" in r["content"][0]["text"], r["content"]
PY
expect_rc 0 "$CKO" experiment new --root "$A" --control --json
aa=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
n_before=$(ls "$A/invocations" | wc -l)
expect_rc 3 "$CKO" screen "$aa" --root "$A" --json
files_changed "$out" "bench/workload.py:changed"
contains "$err" "error[driver_changed]"
[ "$(ls "$A/invocations" | wc -l)" = "$n_before" ] || fail "the screen of an edited driver made an invocation"

# 3. Restored, it measures again; a file that appears is named as appeared, one that vanishes as
# vanished, and a whole identity path that vanishes names each of its files.
cp "$tmp/workload.py" "$T/bench/workload.py"
expect_rc 1 "$CKO" screen "$aa" --root "$A"
echo "x = 1" > "$T/bench/extra.py"
expect_rc 3 "$CKO" baseline --root "$A" --json
files_changed "$out" "bench/extra.py:appeared"
rm "$T/bench/__init__.py"
expect_rc 3 "$CKO" baseline --root "$A" --json
files_changed "$out" "bench/__init__.py:vanished bench/extra.py:appeared"
mv "$T/bench" "$tmp/bench-moved"
expect_rc 3 "$CKO" screen "$aa" --root "$A" --json
files_changed "$out" "bench/__init__.py:vanished bench/driver.py:vanished bench/workload.py:vanished"
# An identity path that can no longer be read (a link now) changed, and says why.
ln -s "$tmp/bench-moved" "$T/bench"
expect_rc 3 "$CKO" screen "$aa" --root "$A" --json
files_changed "$out" "bench:changed"
contains "$out" "symbolic link"
echo "ok"
