#!/usr/bin/env bash
# Issue [23], "Done when": one CPU walk through the whole decision record, on the synthetic
# two-case workload (cases_driver.py: verdicts known in advance; a flag file makes the champion slow
# so its audit fails). A falsified hypothesis's screen is refused; a Target frozen with
# `farthest_stage = "screen"` refuses confirm; a failed audit is followed by `conclusion lower`,
# which the report and the handoff state; a copy of the root whose recorded identity has a null
# machine id states the claim lowered by the identity, with its reason; a gain bound from a map of
# the wrong subject, or one that did not record its window, is refused; a bundle made on the root
# verifies (`fsck --bundle`) and renders (`report --bundle`) in a fresh directory once the root is
# deleted.
. "$(dirname "$0")/lib.sh"
here="$(cd "$(dirname "$0")" && pwd)"
export PYTHONPATH="$here/../../sdk/python"
# The workload's driver serves each operation in one session (protocol v2): the same verdicts in a
# third of the time of one process per call, which cli_gate, cli_trust and cli_decision keep.
CASES_CAPS=', "session"'
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
model() { mkdir -p "$1"; printf '%s\n' "$2" > "$1/model.json"; }
invocations() { ls "$1/invocations" | grep -c '^inv-' || true; }

new_exp() {
  expect_rc 0 "$CKO" experiment new --root "$1" --candidate "$2" --hypothesis h --mechanism "$3" \
    --failure-closes mechanism --falsifier "screen it" --json
  printf '%s' "$out" | field 'd["id"]'
}

T="$tmp/t"; A="$T/art"; slow="$tmp/slow-now"
cases_target "$T" decision-walk workload
expect_rc 0 "$CKO" target freeze --spec "$T/cko.toml" --root "$A"
expect_rc 0 "$CKO" baseline --root "$A"

# 1. A falsified hypothesis: its screen is refused, naming the falsify record; nothing runs.
model "$T/doomed" '{"factor": {"a": 1.5, "b": 1.5}}'
doomed=$(new_exp "$A" "$T/doomed" doomed)
printf 'the profile says the loop is not the bottleneck\n' > "$T/why.txt"
expect_rc 0 "$CKO" experiment falsify "$doomed" --root "$A" --outcome falsified --evidence "$T/why.txt" --json
rec=$(printf '%s' "$out" | field 'd["id"]')
n=$(invocations "$A")
expect_rc 2 "$CKO" screen "$doomed" --root "$A"
contains "$err" "error[falsified]"; contains "$err" "$rec"
[ "$(invocations "$A")" -eq "$n" ] || fail "the refused screen left an invocation"

# 2. A Target frozen with farthest_stage = "screen": confirm is refused, naming the limit.
U="$tmp/u"
cases_target "$U" decision-walk workload; printf '[limits]\nfarthest_stage = "screen"\n' >> "$U/cko.toml"
expect_rc 0 "$CKO" target freeze --spec "$U/cko.toml" --root "$U/art"
model "$U/fast" '{"factor": {"a": 2.0, "b": 2.0}}'
ufast=$(new_exp "$U/art" "$U/fast" fast)
n=$(invocations "$U/art")
expect_rc 2 "$CKO" confirm "$ufast" --root "$U/art"
contains "$err" "error[not_authorized]"; contains "$err" "farthest_stage"
[ "$(invocations "$U/art")" -eq "$n" ] || fail "the refused confirm left an invocation"

# 3. A champion confirmed improved and upheld by its first audit.
model "$T/fast" "{\"factor\": {\"a\": 2.0, \"b\": 2.0}, \"slow_if_exists\": \"$slow\"}"
exp=$(new_exp "$A" "$T/fast" fast)
expect_rc 0 "$CKO" confirm "$exp" --root "$A" --json
conf=$(printf '%s' "$out" | field 'd["id"]')
[ "$(printf '%s' "$out" | field 'd["result"]["outputs"]["verdict"]')" = improved ] || fail "confirm: $out"
expect_rc 0 "$CKO" champion select --root "$A" --experiment "$exp" --confirm "$conf"
expect_rc 0 "$CKO" audit --root "$A"

# 4. The identity the evidence was measured under: a copy of the root whose Target recorded no
# machine id (and no container) states the claim lowered to kernel by the identity, saying why.
cp -r "$A" "$tmp/no-machine-id"
chmod u+w "$tmp/no-machine-id/target.json"
python3 - "$tmp/no-machine-id/target.json" <<'PY'
import json, sys
p = sys.argv[1]; d = json.load(open(p))
d["environment"]["host"].update(machine_id=None, in_container=False, container_hints=[])
open(p, "w").write(json.dumps(d, sort_keys=True, separators=(",", ":")))
PY
reledger "$tmp/no-machine-id" target.json  # else the edit itself is refused: tampered_record
lowered="- **Claim lowered by the environment identity:** the claim stated is now kernel: the environment identity supports kernel at most: no machine id was recorded"
expect_rc 0 "$CKO" handoff --root "$tmp/no-machine-id"
contains "$out" "$lowered"
contains "$out" "not claimed at the workload layer"
expect_rc 0 "$CKO" report --root "$tmp/no-machine-id" --format md
contains "$out" "$lowered"
expect_rc 0 "$CKO" report --root "$tmp/no-machine-id" --json
printf '%s' "$out" | python3 -c '
import json, sys
g = json.load(sys.stdin)["report"]["findings"]["goal"]
assert g["stated_claim"] == "kernel" and g["reached"] is False, g
assert [x["gap"] for x in g["identity"]["gaps"]] == ["no_machine_id"], g["identity"]'

# 5. The champion slows down: its audit fails; the conclusion is lowered on it, and the report and
# the handoff state the lowered claim and why.
touch "$slow"
expect_rc 1 "$CKO" audit --root "$A" --json
failed=$(printf '%s' "$out" | field 'd["id"]')
[ "$(printf '%s' "$out" | field 'd["result"]["outputs"]["verdict"]')" = regressed ] || fail "audit: $out"
expect_rc 0 "$CKO" conclusion lower --root "$A" --to kernel --reason "the champion regressed at the workload layer" \
  --audit "$failed"
contains "$out" "conclusion lowered from workload to kernel (low-"
expect_rc 0 "$CKO" handoff --root "$A"
contains "$out" "- **Conclusion lowered:** the claim stated is now kernel: lowered from workload to kernel"
contains "$out" "cites audit $failed (regressed)"
expect_rc 0 "$CKO" report --root "$A" --format md
contains "$out" "- **Conclusion lowered:** the claim stated is now kernel"
contains "$out" "not claimed at the workload layer"

# 6. A gain bound from a mismatched map is refused, naming the field. The map (a CPU-only Kineto
# trace: two operators with 100 us between them that nothing recorded) is stored for the champion's
# candidate: not the original a new experiment is compared against; stored for the reference, its
# window recorded only 2/3 of its time.
python3 - "$T/gap_trace.json" <<'PY'
import json, sys
ev = lambda name, ts: {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": 100}
json.dump({"schemaVersion": 1, "traceEvents": [ev("aten::add", 0), ev("aten::mul", 200)]}, open(sys.argv[1], "w"))
PY
expect_rc 0 "$CKO" map "$T/gap_trace.json" --root "$A" --experiment "$exp" --subject candidate --tool-version 2.11 --json
of_candidate=$(printf '%s' "$out" | field 'd["stored"]["id"]')
expect_rc 0 "$CKO" map "$T/gap_trace.json" --root "$A" --experiment "$exp" --subject reference --tool-version 2.11 --json
of_reference=$(printf '%s' "$out" | field 'd["stored"]["id"]')
model "$T/next" '{"factor": {"a": 1.2, "b": 1.2}}'
n=$(ls "$A/experiments" | wc -l)
expect_rc 2 "$CKO" experiment new --root "$A" --candidate "$T/next" --hypothesis h --mechanism next \
  --failure-closes mechanism --falsifier f --gain-bound-source "map:$of_candidate#cpu_op"
contains "$err" "error[invalid_argument]"; contains "$err" "gain_bound_source"
contains "$err" "but this experiment's base is"
expect_rc 2 "$CKO" experiment new --root "$A" --candidate "$T/next" --hypothesis h --mechanism next \
  --failure-closes mechanism --falsifier f --gain-bound-source "map:$of_reference#cpu_op"
contains "$err" "error[invalid_argument]"; contains "$err" "gain_bound_source: cites map '$of_reference'"
contains "$err" "recorded only 66.7 % of its time: below the 80 % a gain bound needs"
[ "$(ls "$A/experiments" | wc -l)" -eq "$n" ] || fail "a refused experiment was recorded"

# 7. A bundle made on this root verifies and renders in a fresh directory, the root deleted.
expect_rc 0 "$CKO" stop --root "$A" --reason "decision walk done"
expect_rc 0 "$CKO" bundle --root "$A" --out "$tmp/walk.tar.zst" --json
id=$(printf '%s' "$out" | field 'd["id"]')
chmod -R u+w "$T" "$tmp/no-machine-id" && rm -rf "$T" "$U" "$tmp/no-machine-id"
mkdir "$tmp/fresh" "$tmp/fresh/scratch"
cp "$tmp/walk.tar.zst" "$tmp/fresh/"
cd "$tmp/fresh"
export TMPDIR="$tmp/fresh/scratch"
expect_rc 0 "$CKO" fsck --bundle walk.tar.zst
contains "$out" "the bundle is consistent"
expect_rc 0 "$CKO" report --bundle walk.tar.zst --format md
contains "$out" "from \`bundle $id\`"
contains "$out" "- **Conclusion lowered:** the claim stated is now kernel"
contains "$out" "hypothesis falsified ($rec)"
expect_rc 0 "$CKO" report --bundle walk.tar.zst --out walk.html
head -c 15 walk.html | grep -q '<!DOCTYPE html>' || fail "no HTML report from the bundle"
[ -z "$(ls -A "$tmp/fresh/scratch")" ] || fail "an extracted bundle was left behind"
echo "decision_walk_test: ok"
