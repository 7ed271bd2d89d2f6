#!/usr/bin/env bash
# The correctness gate at its edges, on a two-case workload (cases_driver.py): the driver's own
# status counts beside the metric, and a reference that fails is the comparison's failure, not the
# candidate's (issue [22]: both survived every test before).
. "$(dirname "$0")/lib.sh"
set -o pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export PYTHONPATH="$here/../../sdk/python"
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
check() { python3 -c "$1" "$out" || fail "$2"; }
model() { mkdir -p "$1"; printf '%s\n' "$2" > "$1/model.json"; }

T="$tmp/t"; A="$T/art"; flag="$tmp/reference-now-wrong"
cases_target "$T" two-cases kernel "{\"factor\": {}, \"wrong_if_exists\": \"$flag\"}"
expect_rc 0 "$CKO" target freeze --spec "$T/cko.toml" --root "$A"
expect_rc 0 "$CKO" baseline --root "$A"
new_exp() {
  expect_rc 0 "$CKO" experiment new --root "$A" --candidate "$1" --hypothesis h --mechanism m \
    --failure-closes mechanism --no-falsifier-reason r --json
  printf '%s' "$out" | field 'd["id"]'
}

# 1. A candidate whose driver reports correctness "failed" on case b, with max_rel_err 0 (inside the
# threshold), is invalid: the driver's status must agree with the metric.
model "$T/failed" '{"factor": {"a": 2.0, "b": 2.0}, "failed_on": "b"}'
fe=$(new_exp "$T/failed")
expect_rc 1 "$CKO" screen "$fe" --root "$A" --json
check '
import json, sys
o = json.loads(sys.argv[1])["result"]["outputs"]
assert o["verdict"] == "invalid" and o["decision"] == "rejected", (o["verdict"], o["decision"])
assert o["infrastructure_failure"] is False
assert "candidate failed correctness on case b" in o["reason"] and "driver status failed" in o["reason"], o["reason"]
' "a driver-reported correctness failure inside the metric threshold was not invalid"

# 2. The reference fails correctness (the original, correct at its baseline, now reports a wrong
# result): the comparison is void — an infrastructure failure with no decision, the candidate is
# neither rejected nor blamed.
model "$T/fast" '{"factor": {"a": 2.0, "b": 2.0}}'
fast=$(new_exp "$T/fast")
touch "$flag"
expect_rc 1 "$CKO" screen "$fast" --root "$A" --json
check '
import json, sys
o = json.loads(sys.argv[1])["result"]["outputs"]
assert o["verdict"] == "invalid", o["verdict"]
assert o["infrastructure_failure"] is True, o["infrastructure_failure"]
assert o["decision"] == "no_decision", o["decision"]
assert "reference failed correctness" in o["reason"] and "candidate failed" not in o["reason"], o["reason"]
' "a failing reference was not an infrastructure failure"
echo "gate_test: ok"
