#!/usr/bin/env bash
# Issue [23], a lowered conclusion: a champion confirmed improved at the workload layer fails its
# audit (it runs slower once a flag file exists); `cko conclusion lower --to kernel --audit INV`
# records the downgrade, which history, report and handoff state. An audit that upheld the champion,
# a raise and a second lowering that does not go lower are refused, naming the field; the record
# meets its schema.
. "$(dirname "$0")/lib.sh"
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export PYTHONPATH="$here/../../sdk/python"
# The workload's driver serves each operation in one session (protocol v2): the same verdicts in a
# third of the time of one process per call, which cli_gate, cli_trust and cli_decision keep.
CASES_CAPS=', "session"'
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
model() { mkdir -p "$1"; printf '%s\n' "$2" > "$1/model.json"; }

T="$tmp/t"; A="$T/art"; slow="$tmp/slow-now"
cases_target "$T" conclusion workload
expect_rc 0 "$CKO" target freeze --spec "$T/cko.toml" --root "$A"
expect_rc 0 "$CKO" baseline --root "$A"
model "$T/fast" "{\"factor\": {\"a\": 2.0, \"b\": 2.0}, \"slow_if_exists\": \"$slow\"}"
expect_rc 0 "$CKO" experiment new --root "$A" --candidate "$T/fast" --hypothesis h --mechanism m \
  --failure-closes mechanism --no-falsifier-reason r --json
exp=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 0 "$CKO" confirm "$exp" --root "$A" --json
conf=$(printf '%s' "$out" | field 'd["id"]')
[ "$(printf '%s' "$out" | field 'd["result"]["outputs"]["verdict"]')" = improved ] || fail "confirm: $out"
expect_rc 0 "$CKO" champion select --root "$A" --experiment "$exp" --confirm "$conf"

# An audit that upholds the champion gives no ground to lower the conclusion.
expect_rc 0 "$CKO" audit --root "$A" --json
upheld=$(printf '%s' "$out" | field 'd["id"]')
[ "$(printf '%s' "$out" | field 'd["result"]["outputs"]["verdict"]')" = improved ] || fail "audit: $out"
expect_rc 2 "$CKO" conclusion lower --root "$A" --to kernel --reason "why" --audit "$upheld"
contains "$err" "error[invalid_argument]"
contains "$err" "audit: audit $upheld says \`improved\`"
[ ! -d "$A/conclusions" ] || fail "a refused lowering left a record"

# Once the champion runs slower, its audit fails.
touch "$slow"
expect_rc 1 "$CKO" audit --root "$A" --json  # a regressed verdict exits 1
failed=$(printf '%s' "$out" | field 'd["id"]')
[ "$(printf '%s' "$out" | field 'd["result"]["outputs"]["verdict"]')" = regressed ] || fail "audit: $out"

# Bad input names the field.
expect_rc 2 "$CKO" conclusion lower --root "$A" --to workload --reason "why"
contains "$err" "to: \"workload\" is not allowed"
expect_rc 2 "$CKO" conclusion lower --root "$A" --to kernel --reason "" --audit "$failed"
contains "$err" "reason: missing"
expect_rc 2 "$CKO" conclusion lower --root "$A" --to kernel --reason "why" --audit inv-0000000000000000
contains "$err" "error[not_found]"; contains "$err" "audit: \"inv-0000000000000000\" is no invocation"
expect_rc 2 "$CKO" conclusion lower --root "$A" --to kernel --reason "why" --audit "$conf"
contains "$err" "audit: $conf is a confirm invocation, not an audit"

# The lowering, through the CLI and through --request.
expect_rc 0 "$CKO" conclusion lower --root "$A" --to kernel --reason "the champion regressed at the workload layer" \
  --audit "$failed"
contains "$out" "conclusion lowered from workload to kernel (low-"
contains "$out" "cites audit $failed (regressed)"
low=$(printf '%s' "$out" | grep -o 'low-[0-9a-f]*' | head -n1)
# cko show finds it by its id and by a prefix, as every other record.
expect_rc 0 "$CKO" show "$low" --root "$A" --json
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["lowered_to"] == "kernel" and d["id"] == sys.argv[2], d' "$out" "$low"
expect_rc 0 "$CKO" show "${low:0:8}" --root "$A" --json
contains "$out" "\"lowered_from\": \"workload\""
expect_rc 2 "$CKO" conclusion lower --root "$A" --to kernel --reason "again"
contains "$err" "to: the conclusion states kernel now (lowered by low-"
contains "$err" "choose unconfirmed"

expect_rc 0 "$CKO" history --root "$A"
contains "$out" "conclusion workload -> kernel (champion $exp) on audit $failed — the champion regressed"
expect_rc 0 "$CKO" report --root "$A" --format md
contains "$out" "- **Conclusion lowered:** the claim stated is now kernel: lowered from workload to kernel (low-"
contains "$out" "not claimed at the workload layer"
expect_rc 0 "$CKO" report --root "$A" --out "$tmp/report.html"
contains "$(cat "$tmp/report.html")" "conclusion lowered to kernel"
expect_rc 0 "$CKO" handoff --root "$A"
contains "$out" "- **Conclusion lowered:** the claim stated is now kernel: lowered from workload to kernel"
contains "$out" "the champion regressed at the workload layer; cites audit $failed (regressed)"

printf '{"root": "%s", "to": "unconfirmed", "reason": "not reproduced"}' "$A" > "$tmp/req.json"
expect_rc 0 "$CKO" conclusion lower --request "$tmp/req.json" --json
[ "$(printf '%s' "$out" | field 'd["lowered_from"] + "/" + d["lowered_to"]')" = kernel/unconfirmed ] || fail "$out"
expect_rc 0 "$CKO" handoff --root "$A"
contains "$out" "the claim stated is now unconfirmed: lowered from kernel to unconfirmed"

# Every record, the lowerings included, against the JSON Schemas; fsck finds the store sound.
py=""
for p in ${CKO_SCHEMA_PYTHON:-} /usr/bin/python3 python3; do
  if "$p" -c 'import jsonschema' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || fail "no python3 with jsonschema (install python3-jsonschema: scripts/deps.sh)"
expect_rc 0 "$py" "$repo/tests/schemas/validate_store.py" "$A"
contains "$out" "conclusion-v1"
expect_rc 0 "$CKO" fsck --root "$A"
