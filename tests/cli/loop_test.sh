#!/usr/bin/env bash
# The evidence loop end to end on small Targets: freeze, baseline, experiments, confirm, champion,
# and the mirror property (swapping original and candidate turns improved into regressed).
. "$(dirname "$0")/lib.sh"
ex="$(cd "$(dirname "$0")/../../examples/cpu-saxpy" && pwd)"
make -s -C "$ex" build/driver_cpp >/dev/null || fail "cannot build the cpu-saxpy C++ driver"
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }


# A: slow original, fast candidate -> improved.  B: the mirror -> regressed.
saxpy_target "$tmp/a" "$ex/original"
saxpy_target "$tmp/b" "$ex/candidate"
expect_rc 0 "$CKO" target freeze --spec "$tmp/a/cko.toml" --root "$tmp/a/art"
expect_rc 0 "$CKO" target freeze --spec "$tmp/b/cko.toml" --root "$tmp/b/art"
contains "$out" "froze Target"

expect_rc 0 "$CKO" baseline --root "$tmp/a/art" --calls-per-case 1 --aa-pairs 6 --json
printf '%s' "$out" | python3 -c '
import json, sys
o = json.load(sys.stdin)["result"]["outputs"]
assert len(o["aa"]["d"]) == 6 and len(o["aa"]["orders"]) == 6, o["aa"]
assert o["resolution"]["n"] == 6 and o["resolution"]["noise_sd"] > 0, o["resolution"]
assert o["resolution"]["statement"], o["resolution"]
' || fail "A/A output malformed"

# The A/A verdict: the original against itself must come out `equivalent` or `inconclusive`, the
# two verdicts of an interval that contains 0. The other three need an interval that excludes 0,
# which for an A/A run is a false statement, made with probability 1 - confidence by design (pair
# order is randomized, so each d is symmetric about 0). At the loop's 95 % that is 1 run in 20:
# too often for a test. So this A/A runs at 99.9 % on 12 pairs (the exact Wilcoxon interval reaches
# 99.95 % there): a false call in about 1 run in 1000, each such failure naming its interval.
saxpy_target "$tmp/aa" "$ex/original"
sed -i 's/^min_pairs = 6$/min_pairs = 6\nconfidence = 0.999/' "$tmp/aa/cko.toml"
grep -q '^confidence = 0.999$' "$tmp/aa/cko.toml"
expect_rc 0 "$CKO" target freeze --spec "$tmp/aa/cko.toml" --root "$tmp/aa/art"
expect_rc 0 "$CKO" baseline --root "$tmp/aa/art" --calls-per-case 1 --aa-pairs 12 --json
printf '%s' "$out" | python3 -c '
import json, sys
aa = json.load(sys.stdin)["result"]["outputs"]["aa"]
e = aa["estimate"]
assert len(aa["d"]) == 12 and e["achieved_confidence"] >= 0.999, e
assert aa["verdict"] in ("equivalent", "inconclusive"), (aa["verdict"], e["ci_low"], e["ci_high"], aa["d"])
'

expect_rc 0 "$CKO" experiment new --root "$tmp/a/art" --candidate "$ex/candidate" --hypothesis "rows are contiguous" \
  --mechanism loop-order --failure-closes mechanism --no-falsifier-reason "known" --json
exp_a=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 0 "$CKO" experiment new --root "$tmp/b/art" --candidate "$ex/original" --hypothesis "columns (mirror)" \
  --mechanism loop-order --failure-closes mechanism --no-falsifier-reason "known" --json
exp_b=$(printf '%s' "$out" | field 'd["id"]')

# Screens: the fast candidate passes to confirm (improved), the mirror's slow one is rejected. After
# each, a `next:` line says what the evidence allows and the command that takes that step; --json
# carries the same as next_step (the CLI's summary and the MCP document say the same).
expect_rc 0 "$CKO" screen "$exp_a" --root "$tmp/a/art"
contains "$out" "verdict improved, decision pass_to_confirm"
contains "$out" "
next: the screen passes it on: confirm it (the verdict that can make a champion)
  cko confirm $exp_a --root $tmp/a/art"
expect_rc 1 "$CKO" screen "$exp_b" --root "$tmp/b/art" --json
printf '%s' "$out" | ROOT="$tmp/b/art" python3 -c '
import json, os, sys
d = json.load(sys.stdin)
o = d["result"]["outputs"]
assert o["verdict"] == "regressed" and o["decision"] == "rejected", (o["verdict"], o["decision"])
n = d["next_step"]
assert n["statement"].startswith("the screen rejects it: record what it rules out") and "confirm" in n["statement"], n
assert n["command"] == "cko experiment new --root " + os.environ["ROOT"] + " --candidate …", n'

# A second fast candidate (same code, one comment more), confirmed against the original too.
mkdir -p "$tmp/fast2"; { cat "$ex/candidate/saxpy.cpp"; echo "// the same loop order"; } > "$tmp/fast2/saxpy.cpp"
expect_rc 0 "$CKO" experiment new --root "$tmp/a/art" --candidate "$tmp/fast2" --hypothesis "rows again" \
  --mechanism loop-order --failure-closes mechanism --no-falsifier-reason "known" --json
exp_a2=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 0 "$CKO" confirm "$exp_a2" --root "$tmp/a/art" --json
conf_a2=$(printf '%s' "$out" | field 'd["id"]')
[ "$(printf '%s' "$out" | field 'd["result"]["outputs"]["verdict"]')" = improved ] || fail "A2: not improved: $out"
[ "$(printf '%s' "$out" | field 'd["next_step"]["command"]')" = \
  "cko champion select --root $tmp/a/art --experiment $exp_a2 --confirm $conf_a2" ] || fail "A2's next step: $out"
# What the verdict cost is recorded: the valid rounds, no GPU seconds on a CPU Target, the wall time;
# the early-decision plan's first look is at 8 rounds (6 could not reach its level).
printf '%s' "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)["result"]
o = r["outputs"]
t = o["to_verdict"]
assert t["pairs"] == len(o["d"]) >= 8 and t["gpu_s"] == 0 and 0 < t["wall_s"] <= r["cost"]["wall_s"] + 0.01, t'

expect_rc 0 "$CKO" confirm "$exp_a" --root "$tmp/a/art"
conf_a=$(printf '%s' "$out" | sed -n '1s/^confirm \(inv-[0-9a-f]*\): succeeded, verdict improved$/\1/p')
[ -n "$conf_a" ] || fail "A: not improved: $out"
# An improved confirm allows one step, an explicit choice: the champion select of this experiment
# with this confirm (run below, as printed).
contains "$out" "
next: improved beyond the minimum effect: it may become the champion (an explicit choice)
  cko champion select --root $tmp/a/art --experiment $exp_a --confirm $conf_a"
select_a=$(printf '%s' "$out" | sed -n 's/^  cko champion select //p')
# B's screen rejected it: failure stops what follows unless a reason is given (and recorded).
expect_rc 2 "$CKO" confirm "$exp_b" --root "$tmp/b/art"
contains "$err" "error[candidate_failed]"
expect_rc 1 "$CKO" confirm "$exp_b" --root "$tmp/b/art" --override-failure "the formal look at a rejected mirror" --json
[ "$(printf '%s' "$out" | field 'd["result"]["outputs"]["verdict"]')" = regressed ] || fail "B: not regressed"
conf_b=$(printf '%s' "$out" | field 'd["id"]')
# A regressed confirm allows no champion: the next step is another hypothesis, not a select.
printf '%s' "$out" | ROOT="$tmp/b/art" python3 -c '
import json, os, sys
n = json.load(sys.stdin)["next_step"]
assert n == {"statement": "regressed: not a champion; record what it rules out and try another hypothesis",
             "command": "cko experiment new --root " + os.environ["ROOT"] + " --candidate …"}, n'

# One formal confirm per experiment; a retry must cite an infrastructure failure.
expect_rc 2 "$CKO" confirm "$exp_a" --root "$tmp/a/art"
contains "$err" "error[already_confirmed]"
expect_rc 2 "$CKO" confirm "$exp_b" --root "$tmp/b/art" --retry-of "$conf_b" --reason "flaky"
contains "$err" "error[not_eligible]"

# The champion: never from a regressed confirm; selected explicitly from an improved one.
expect_rc 2 "$CKO" champion select --root "$tmp/b/art" --experiment "$exp_b" --confirm "$conf_b"
contains "$err" "only an \`improved\` confirm"
expect_rc 2 "$CKO" champion select --root "$tmp/a/art" --experiment "$exp_a" --confirm "$conf_a2"
contains "$err" "error[not_eligible]"
contains "$err" "measured $exp_a2, not $exp_a"
# shellcheck disable=SC2086  # the next step's arguments, as the confirm printed them
expect_rc 0 "$CKO" champion select $select_a
expect_rc 0 "$CKO" champion show --root "$tmp/a/art" --json
printf '%s' "$out" | EXP="$exp_a" python3 -c '
import json, os, sys
assert json.load(sys.stdin)["champion"] == os.environ["EXP"]'
# A2 was confirmed against the original, which is no longer the champion: stale, refused.
expect_rc 2 "$CKO" champion select --root "$tmp/a/art" --experiment "$exp_a2" --confirm "$conf_a2"
contains "$err" "--base champion"
expect_rc 2 "$CKO" champion restore --root "$tmp/a/art"
contains "$err" "--reason"
expect_rc 0 "$CKO" champion restore --root "$tmp/a/art" --reason "demo of restore"
expect_rc 0 "$CKO" champion show --root "$tmp/a/art"
contains "$out" "champion: original"

# A candidate with a wrong result: invalid after the first pair, no further driver calls.
mkdir -p "$tmp/wrong"
sed 's/a \* x\[row + j\] + y\[row + j\]/a * x[row + j] + y[row + j] * 1.001f/' "$ex/candidate/saxpy.cpp" > "$tmp/wrong/saxpy.cpp"
expect_rc 0 "$CKO" experiment new --root "$tmp/a/art" --candidate "$tmp/wrong" --hypothesis "planted error" \
  --mechanism loop-order --failure-closes implementation --no-falsifier-reason "planted" --json
exp_w=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 1 "$CKO" screen "$exp_w" --root "$tmp/a/art" --json
printf '%s' "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)["result"]
o = r["outputs"]
assert o["verdict"] == "invalid" and o["decision"] == "rejected", o["verdict"]
assert len(o["pairs"]) == 1 and r["cost"]["driver_calls"] == 1, (len(o["pairs"]), r["cost"])
assert "candidate failed correctness" in o["reason"], o["reason"]
assert "estimate" not in o, "no performance claim for an incorrect candidate"
' || fail "a wrong candidate was not stopped at once with invalid"
# Failure stops what follows: no confirm of it without a reason. With one, its confirm is invalid
# too, and an invalid confirm never selects a champion.
expect_rc 2 "$CKO" confirm "$exp_w" --root "$tmp/a/art"
contains "$err" "error[candidate_failed]"
expect_rc 1 "$CKO" confirm "$exp_w" --root "$tmp/a/art" --override-failure "planted error, confirmed on purpose" --json
[ "$(printf '%s' "$out" | field 'd["result"]["outputs"]["verdict"]')" = invalid ] || fail "wrong: confirm not invalid"
printf '%s' "$out" | python3 -c '
import json, sys
n = json.load(sys.stdin)["next_step"]
assert n["statement"].startswith("the candidate failed correctness") and "a fixed version is a new experiment" in n["statement"], n
assert n["command"].startswith("cko experiment new --root "), n'
conf_w=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 2 "$CKO" champion select --root "$tmp/a/art" --experiment "$exp_w" --confirm "$conf_w"
contains "$err" "gave \`invalid\`; only an \`improved\` confirm"
expect_rc 0 "$CKO" champion show --root "$tmp/a/art"
contains "$out" "champion: original"
# The retry rule: only a named earlier confirm, with a reason, after an infrastructure failure.
expect_rc 2 "$CKO" confirm "$exp_w" --root "$tmp/a/art" --retry-of inv-0000000000000000 --reason "x"
contains "$err" "is not a confirm of $exp_w"
expect_rc 2 "$CKO" confirm "$exp_w" --root "$tmp/a/art" --retry-of "$conf_w"
contains "$err" "--retry-of needs --reason"

# An extra correctness gate of the experiment is requested from the driver and judged on every call.
expect_rc 0 "$CKO" experiment new --root "$tmp/a/art" --candidate "$ex/candidate" --hypothesis "exact to 1e-12?" \
  --mechanism loop-order --failure-closes implementation --no-falsifier-reason "gate test" \
  --correctness-gate "max_rel_err <= 1e-12" --json
exp_g=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 1 "$CKO" screen "$exp_g" --root "$tmp/a/art" --json
printf '%s' "$out" | python3 -c '
import json, sys
o = json.load(sys.stdin)["result"]["outputs"]
assert o["verdict"] == "invalid" and "failed gates: max_rel_err <= 1e-12" in o["reason"], o["reason"]
' || fail "an extra correctness gate was not enforced"
expect_rc 2 "$CKO" experiment new --root "$tmp/a/art" --candidate "$ex/candidate" --hypothesis h --mechanism m \
  --failure-closes mechanism --no-falsifier-reason r --correctness-gate "max_rel_err about 1e-3"
contains "$err" "correctness_gate[0]"

# Another machine (simulated by a copy of the root whose Target names another machine-id): invalid, no driver call.
cp -r "$tmp/a/art" "$tmp/moved"
chmod u+w "$tmp/moved/target.json"
python3 - "$tmp/moved/target.json" <<'PY'
import json, sys
p = sys.argv[1]; d = json.load(open(p))
d["environment"]["host"]["machine_id"] = "0123456789abcdef0123456789abcdef"
open(p, "w").write(json.dumps(d, sort_keys=True, separators=(",", ":")))
PY
reledger "$tmp/moved" target.json  # else the edit itself is refused: tampered_record
expect_rc 1 "$CKO" screen "$exp_w" --root "$tmp/moved" --json
printf '%s' "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)["result"]
assert r["outputs"]["verdict"] == "invalid" and r["cost"]["driver_calls"] == 0, r
assert "environment mismatch" in r["outputs"]["reason"] and "machine" in r["outputs"]["reason"], r["outputs"]["reason"]
' || fail "a measurement on another machine was not invalid"

# A spent wall-time budget refuses to start and says what is left.
saxpy_target "$tmp/d" "$ex/original"
printf 'wall_seconds_budget = 0.001\n' >> "$tmp/d/cko.toml"
expect_rc 0 "$CKO" target freeze --spec "$tmp/d/cko.toml" --root "$tmp/d/art"
expect_rc 2 "$CKO" baseline --root "$tmp/d/art" --calls-per-case 1 --aa-pairs 6
contains "$err" "error[budget_exhausted]"
contains "$err" "wall seconds are left"

# A candidate touching files outside the change scope is refused before it is measured.
mkdir -p "$tmp/scope"; cp "$ex/candidate/saxpy.cpp" "$tmp/scope/"; echo x > "$tmp/scope/extra.h"
expect_rc 2 "$CKO" experiment new --root "$tmp/a/art" --candidate "$tmp/scope" --hypothesis h --mechanism m \
  --failure-closes mechanism --no-falsifier-reason r
contains "$err" "error[scope_violation]"
contains "$err" "original/extra.h"

# A freeze whose smoke fails leaves nothing behind.
saxpy_target "$tmp/c" "$ex/original"
sed -i "s#argv = \[.*\]#argv = [\"/bin/false\"]#" "$tmp/c/cko.toml"
expect_rc 3 "$CKO" target freeze --spec "$tmp/c/cko.toml" --root "$tmp/c/art"
contains "$err" "smoke"
[ ! -e "$tmp/c/art" ] || fail "a failed freeze left $tmp/c/art"
ls -a "$tmp/c" | grep -q freeze && fail "a failed freeze left its staging directory"

# A bad spec names the field.
sed -i 's/direction = "lower"/direction = "down"/' "$tmp/c/cko.toml"
expect_rc 2 "$CKO" target freeze --spec "$tmp/c/cko.toml" --root "$tmp/c/art"
contains "$err" "objective.primary.direction"

expect_rc 0 "$CKO" fsck --root "$tmp/a/art"
expect_rc 0 "$CKO" fsck --root "$tmp/b/art"
