#!/usr/bin/env bash
# Issue [20]: the loop's closed words (direction, claim layer, base, failure closes, screen design,
# relationship, lifecycle) are refused outside their set wherever they enter — a spec through
# `target freeze`, `experiment new` through --request and through `cko mcp` — naming the field and
# listing the allowed words; a spec's problems are reported all at once.
. "$(dirname "$0")/lib.sh"
here="$(cd "$(dirname "$0")" && pwd)"

T="$tmp/t"; A="$T/art"
mkdir -p "$T/original" "$T/cases" "$T/cand"
echo 'kernel v0' > "$T/original/k.cu"; echo '{"latency_us": 1.5}' > "$T/original/values.json"
echo 'kernel v1' > "$T/cand/k.cu"; echo '{"latency_us": 1.0}' > "$T/cand/values.json"
echo '{}' > "$T/cases/c.json"
spec() {  # spec CLAIM DIRECTION > cko.toml
  cat <<TOML
[target]
name = "words"
claim_layer = "$1"
original = "original"
change_scope = ["original/k.cu", "original/values.json"]
[cases]
dir = "cases"
ids = ["c"]
[driver]
argv = ["python3", "$here/fake_driver.py", "from_files"]
capabilities = ["single_subject"]
env_allow = ["PATH"]
[objective]
primary = { name = "latency_us", unit = "us", direction = "$2", aggregation = "median" }
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
TOML
}

# A spec with two wrong words: one refusal naming both fields, each with its allowed words.
spec system down > "$T/bad.toml"
printf '{"spec": "%s", "root": "%s"}' "$T/bad.toml" "$A" > "$tmp/freeze.json"
expect_rc 2 "$CKO" target freeze --request "$tmp/freeze.json" --json
python3 - "$out" <<'PY'
import json, sys
e = json.loads(sys.argv[1])["error"]
assert e["code"] == "invalid_spec", e
assert e["details"]["field"] == "target.claim_layer", e
fields = {p["field"]: p["message"] for p in e["details"]["problems"]}
assert "use one of: kernel, workload, serving" in fields["target.claim_layer"], fields
assert "use one of: lower, higher" in fields["objective.primary.direction"], fields
assert e["message"].startswith("2 problems: "), e["message"]
PY
[ ! -e "$A" ] || fail "a refused spec created the root"

spec kernel lower > "$T/cko.toml"
expect_rc 0 "$CKO" target freeze --spec "$T/cko.toml" --root "$A"

# Each word of `experiment new`, wrong in a request that is otherwise fine: refused naming the field
# and listing the words, through --request and through an MCP tools/call.
words='{"base": "original, champion", "claim_layer": "kernel, workload, serving",
 "failure_closes": "implementation, integration, mechanism",
 "screen_design": "conservative_bound, diagnostic_proxy",
 "relationship": "implementation_equivalence, artifact_fidelity, deployment_effect",
 "lifecycle": "isolated_process, same_process"}'
request() {  # request FIELD VALUE: an experiment-new request with FIELD set to VALUE
  python3 -c 'import json,sys
r = {"root": sys.argv[1], "candidate": sys.argv[2], "hypothesis": "h", "mechanism": "m",
     "failure_closes": "mechanism", "no_falsifier_reason": "r"}
r[sys.argv[3]] = sys.argv[4]
print(json.dumps(r))' "$A" "$T/cand" "$1" "$2"
}
for field in base claim_layer failure_closes screen_design relationship lifecycle; do
  request "$field" bogus > "$tmp/exp.json"
  expect_rc 2 "$CKO" experiment new --request "$tmp/exp.json" --json
  python3 - "$out" "$field" "$words" <<'PY'
import json, sys
e, field, words = json.loads(sys.argv[1])["error"], sys.argv[2], json.loads(sys.argv[3])
assert e["code"] == "invalid_argument", e
assert e["details"]["field"] == field, e
assert f'{field}: "bogus" is not allowed; use one of: {words[field]}' == e["message"], e["message"]
PY
done
[ ! -d "$A/experiments" ] || [ -z "$(ls "$A/experiments")" ] || fail "a refused experiment was written"

python3 - "$CKO" "$A" "$T/cand" "$words" <<'PY'
import json, subprocess, sys
cko, root, cand, words = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
proc = subprocess.Popen([cko, "mcp", "--root", root], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                        text=True)
def call(i, method, params):
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
    proc.stdin.flush()
    while True:
        reply = json.loads(proc.stdout.readline())
        if reply.get("id") == i:
            return reply
call(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "closed-words-test", "version": "1"}})
proc.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
for i, field in enumerate(words, start=1):
    args = {"root": root, "candidate": cand, "hypothesis": "h", "mechanism": "m",
            "failure_closes": "mechanism", "no_falsifier_reason": "r", field: "bogus"}
    result = call(i, "tools/call", {"name": "experiment_new", "arguments": args})["result"]
    assert result["isError"] is True, result
    e = result["structuredContent"]["error"]
    assert e["code"] == "invalid_argument" and e["details"]["field"] == field, e
    assert f"use one of: {words[field]}" in e["message"], e["message"]
proc.stdin.close()
assert proc.wait(timeout=30) == 0
PY

# The right words freeze it; the record holds them as written.
request claim_layer kernel > "$tmp/exp.json"
expect_rc 0 "$CKO" experiment new --request "$tmp/exp.json" --json
python3 - "$out" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
assert (d["claim_layer"], d["base"]["kind"], d["failure_closes"], d["screen_design"],
        d["relationship"], d["lifecycle"]) == ("kernel", "original", "mechanism",
        "conservative_bound", "implementation_equivalence", "isolated_process"), d
PY
