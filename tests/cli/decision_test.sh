#!/usr/bin/env bash
# Issue [23], the decision record. `cko experiment falsify` records an experiment's outcome on cited
# evidence (a stored id or a file, stored content-addressed); a falsified experiment's screen,
# confirm and profile refuse with `falsified` naming the record unless --override-falsified REASON
# is given (recorded in the invocation); `survived` blocks nothing; history, report and handoff
# show the outcome. `[limits] farthest_stage` (checked at freeze) and `--stage-limit` refuse a verb
# past the stage with `not_authorized`, naming the limit and where it was set.
. "$(dirname "$0")/lib.sh"
here="$(cd "$(dirname "$0")" && pwd)"
export PYTHONPATH="$here/../../sdk/python"
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
model() { mkdir -p "$1"; printf '%s\n' "$2" > "$1/model.json"; }

new_exp() {
  expect_rc 0 "$CKO" experiment new --root "$1" --candidate "$2" --hypothesis h --mechanism m \
    --failure-closes mechanism --falsifier "screen it" --estimated-cost-s 42 --json
  printf '%s' "$out" | field 'd["id"]'
}

T="$tmp/t"; A="$T/art"
cases_target "$T" decision kernel
expect_rc 0 "$CKO" target freeze --spec "$T/cko.toml" --root "$A"
model "$T/fast" '{"factor": {"a": 2.0, "b": 2.0}}'
fast=$(new_exp "$A" "$T/fast")
model "$T/also" '{"factor": {"a": 2.0, "b": 2.1}}'
also=$(new_exp "$A" "$T/also")

# 1. Bad input names the field and the fix; nothing is recorded.
n0=$(ls "$A/invocations" | grep -c '^inv-' || true)
expect_rc 2 "$CKO" experiment falsify "$fast" --root "$A" --outcome refuted --evidence "$T/cko.toml"
contains "$err" "error[invalid_argument]"; contains "$err" "outcome"; contains "$err" "falsified, survived"
expect_rc 2 "$CKO" experiment falsify "$fast" --root "$A" --outcome falsified --evidence inv-0000000000000000
contains "$err" "error[not_found]"; contains "$err" "evidence"
expect_rc 2 "$CKO" experiment falsify exp-0000000000000000 --root "$A" --outcome falsified --evidence "$T/cko.toml"
contains "$err" "error[not_found]"
[ "$(ls "$A/invocations" | grep -c '^inv-' || true)" -eq "$n0" ] || fail "a refused falsify left an invocation"

# 2. Falsified on a file: the file is stored content-addressed and the record is a ledgered invocation.
printf 'the roofline says the kernel is memory bound\n' > "$T/note.txt"
expect_rc 0 "$CKO" experiment falsify "$fast" --root "$A" --outcome falsified --evidence "$T/note.txt" \
  --note "memory bound" --json
rec=$(printf '%s' "$out" | field 'd["id"]')
digest=$(printf '%s' "$out" | field 'd["result"]["outputs"]["evidence"]["digest"]')
[ "$(printf '%s' "$out" | field 'd["result"]["outputs"]["outcome"]')" = falsified ] || fail "outcome not recorded"
[ -f "$A/objects/sha256/$digest/manifest.json" ] || fail "the evidence file was not stored content-addressed"
grep -q "invocations/$rec/request.json" "$A/ledger.jsonl" || fail "the falsify record is not in the ledger"
expect_rc 0 "$CKO" fsck --root "$A"

# 3. The falsified experiment's screen and confirm refuse, naming the record; nothing runs.
before=$(ls "$A/invocations" | grep -c '^inv-')
expect_rc 2 "$CKO" screen "$fast" --root "$A"
contains "$err" "error[falsified]"; contains "$err" "$rec"; contains "$err" "--override-falsified"
expect_rc 2 "$CKO" confirm "$fast" --root "$A" --json
python3 -c '
import json, sys
e = json.loads(sys.argv[1])["error"]
assert e["code"] == "falsified" and e["details"]["falsify_invocation"] == sys.argv[2], e
' "$out" "$rec"
expect_rc 2 "$CKO" profile collect torch --root "$A" --experiment "$fast" --subject candidate
contains "$err" "error[falsified]"
[ "$(ls "$A/invocations" | grep -c '^inv-')" -eq "$before" ] || fail "a refused screen left an invocation"

# 4. With a reason it runs, and the reason is recorded in the invocation's request.
expect_rc 0 "$CKO" screen "$fast" --root "$A" --override-falsified "the note was about another GPU" --json
scr=$(printf '%s' "$out" | field 'd["id"]')
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["request"]["override_falsified"]
assert r == {"reason": "the note was about another GPU", "falsify_invocation": sys.argv[2]}, r
' "$A/invocations/$scr/request.json" "$rec"

# 5. Survived (citing the screen by id) blocks nothing, and leaves nothing to override.
expect_rc 0 "$CKO" experiment falsify "$also" --root "$A" --outcome survived --evidence "$scr" --json
[ "$(printf '%s' "$out" | field 'd["result"]["outputs"]["evidence"]["kind"]')" = invocation ] || fail "id evidence"
expect_rc 2 "$CKO" screen "$also" --root "$A" --override-falsified "why not"
contains "$err" "error[invalid_argument]"; contains "$err" "nothing to override"
expect_rc 0 "$CKO" screen "$also" --root "$A"

# 6. A later record supersedes: the falsified experiment declared survived runs again.
expect_rc 0 "$CKO" experiment falsify "$fast" --root "$A" --outcome survived --evidence "$scr" --json
rec2=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 0 "$CKO" screen "$fast" --root "$A"

# 7. History, report and handoff show the outcomes.
expect_rc 0 "$CKO" history --root "$A"
contains "$out" "falsify"; contains "$out" "$fast falsified on file"; contains "$out" "$also survived on invocation $scr"
expect_rc 0 "$CKO" history --root "$A" --json
python3 -c '
import json, sys
es = [e for e in json.loads(sys.argv[1])["entries"] if e["type"] == "falsify"]
assert [e["outcome"] for e in es] == ["falsified", "survived", "survived"], es
' "$out"
expect_rc 0 "$CKO" handoff --root "$A"
contains "$out" "$rec2"; contains "$out" "hypothesis survived"
expect_rc 0 "$CKO" report --root "$A" --format md --out "$tmp/report.md"
grep -q "$rec2" "$tmp/report.md" || fail "the report does not show the falsify record"

# 8. The stage limit: --stage-limit of the call refuses what lies past it, naming where it was set.
expect_rc 2 "$CKO" confirm "$also" --root "$A" --stage-limit screen
contains "$err" "error[not_authorized]"; contains "$err" "--stage-limit"
expect_rc 2 "$CKO" screen "$also" --root "$A" --stage-limit review
contains "$err" "error[invalid_argument]"; contains "$err" "screen, confirm, audit"

# 9. farthest_stage is a closed word checked at freeze, and a frozen "screen" makes confirm refuse.
U="$tmp/u"
cases_target "$U" decision kernel; printf '[limits]\nfarthest_stage = "review"\n' >> "$U/cko.toml"
expect_rc 2 "$CKO" target freeze --spec "$U/cko.toml" --root "$U/art"
contains "$err" "error[invalid_spec]"; contains "$err" "limits.farthest_stage"; contains "$err" "screen, confirm, audit"
cases_target "$U" decision kernel; printf '[limits]\nfarthest_stage = "screen"\n' >> "$U/cko.toml"
expect_rc 0 "$CKO" target freeze --spec "$U/cko.toml" --root "$U/art"
model "$U/fast" '{"factor": {"a": 2.0, "b": 2.0}}'
ufast=$(new_exp "$U/art" "$U/fast")
expect_rc 0 "$CKO" screen "$ufast" --root "$U/art" --json
uscr=$(printf '%s' "$out" | field 'd["id"]')
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["request"]["stage_limit"]
assert r["stage"] == "screen" and "farthest_stage" in r["set_by"], r
' "$U/art/invocations/$uscr/request.json"
expect_rc 2 "$CKO" confirm "$ufast" --root "$U/art"
contains "$err" "error[not_authorized]"; contains "$err" "farthest_stage"; contains "$err" "screen"
expect_rc 2 "$CKO" confirm "$ufast" --root "$U/art" --stage-limit audit
contains "$err" "error[not_authorized]"
echo "decision_test: ok"
