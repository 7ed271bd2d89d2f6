#!/usr/bin/env bash
# The loop on a three-case workload as a first user meets it (issue [07]): a pair is a round over
# every case, the reference is the experiment's base, the interval printed is the one that decided,
# crashes are attributed, causes are shown, exit codes agree on every path, progress is visible,
# regressed cases are never hidden, and the history tells it all.
. "$(dirname "$0")/lib.sh"
set -o pipefail
here="$(cd "$(dirname "$0")" && pwd)"
driver="$here/cases_driver.py"
export PYTHONPATH="$here/../../sdk/python"
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
check() { python3 -c "$1" "$out" || fail "$2"; }   # python over the last output (as sys.argv[1])

# model DIR JSON: a subject directory whose model.json is JSON.
model() { mkdir -p "$1"; printf '%s\n' "$2" > "$1/model.json"; }

# target DIR [extra spec lines]: a three-case Target driven by cases_driver.py; max_pairs 40 as the template.
# The driver serves an operation's requests in one session (protocol v2: a third of this test's time
# of one process per call); caps= (empty) before the call gives one process per call, as $R below.
caps=', "session"'
target() {
  local dir=$1; shift
  model "$dir/original" '{"factor": {}}'
  mkdir -p "$dir/cases"
  for c in a b c; do echo "{\"case\": \"$c\"}" > "$dir/cases/$c.json"; done
  cp "$driver" "$dir/driver.py"
  cat > "$dir/cko.toml" <<TOML
[target]
name = "three-cases"
claim_layer = "kernel"
original = "original"
change_scope = ["original/model.json"]
[cases]
dir = "cases"
ids = ["a", "b", "c"]
[driver]
argv = ["python3", "driver.py"]
capabilities = ["single_subject", "paired_in_process"$caps]
identity_paths = ["driver.py"]
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
max_pairs = 40
samples_per_call = 3
$*
TOML
  sed -i "s#argv = \[\"python3\", \"driver.py\"\]#argv = [\"python3\", \"$dir/driver.py\"]#" "$dir/cko.toml"
}
new_exp() {  # new_exp ROOT CANDIDATE_DIR [flags]: prints the experiment id
  local root=$1 cand=$2; shift 2
  expect_rc 0 "$CKO" experiment new --root "$root" --candidate "$cand" --hypothesis "h" --mechanism m \
    --failure-closes mechanism --no-falsifier-reason r --json "$@"
  printf '%s' "$out" | field 'd["id"]'
}

T="$tmp/t"; A="$T/art"
target "$T"
expect_rc 0 "$CKO" target freeze --spec "$T/cko.toml" --root "$A"

# 9. No baseline yet: the comparison says so.  1. An A/A screen of a 3-case Target with max_pairs
# 40 ends in a verdict (20 rounds at most), every case with the same number of pairs.
expect_rc 0 "$CKO" experiment new --root "$A" --control --json
aa=$(printf '%s' "$out" | field 'd["id"]')
check 'import json,sys; d=json.loads(sys.argv[1]); assert d["control"] is True and d["changed_files"] == [], d' \
  "--control did not freeze an A/A control"
# A/A controls may be repeated: a second --control is a new experiment, not a refused re-freeze
# (it was refused with already_exists before).
expect_rc 0 "$CKO" experiment new --root "$A" --control --json
aa2=$(printf '%s' "$out" | field 'd["id"]')
[ -n "$aa2" ] && [ "$aa2" != "$aa" ] || fail "a second A/A control was not frozen as its own experiment"
contains "$out" "A/A control (repeat 2)"
expect_rc 1 "$CKO" screen "$aa" --root "$A" --json
check '
import json, sys, collections
o = json.loads(sys.argv[1])["result"]["outputs"]
assert o["verdict"] == "equivalent" and o["decision"] == "rejected", (o["verdict"], o["reason"])
per = collections.Counter(p["case"] for p in o["pairs"])
assert set(per) == {"a", "b", "c"} and len(set(per.values())) == 1, per
assert len(o["d"]) == per["a"] and len(o["per_case"]) == 3, (len(o["d"]), per)
assert any("no baseline" in n for n in o["notes"]), o["notes"]
assert o["exit_code"] == 1
' "the 3-case A/A screen did not end in an equivalent verdict with equal pairs per case"

expect_rc 0 "$CKO" baseline --root "$A" --calls-per-case 1 --aa-pairs 6
contains "$out" "A/A check (original against itself)"

# 10. A candidate 2.4x and 6.7x faster on a and b but 15 % slower on c: never a plain improved.
model "$T/mixed" '{"factor": {"a": 2.4, "b": 6.7, "c": 0.85}}'
mx=$(new_exp "$A" "$T/mixed")
expect_rc 1 "$CKO" confirm "$mx" --root "$A" --json
check '
import json, sys
o = json.loads(sys.argv[1])["result"]["outputs"]
assert o["verdict"] == "mixed" and o["pooled_verdict"] == "improved", o["verdict"]
assert o["regressed_cases"] == ["c"], o["regressed_cases"]
v = {c["case_id"]: c["verdict"] for c in o["per_case"]}
assert v == {"a": "improved", "b": "improved", "c": "regressed"}, v
assert not any("no baseline" in n for n in o["notes"]), o["notes"]
' "a pooled improvement hid the regressed case"
mx_conf=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 2 "$CKO" champion select --root "$A" --experiment "$mx" --confirm "$mx_conf"
contains "$err" "--accept-regression"
contains "$err" "c"

# 3. The interval printed is the one that decided, with its look and level (a 2.5x speed-up on every
# case decides at an early look, whose repeated interval is wider than the nominal 95 % one).
model "$T/fast" '{"factor": {"a": 2.5, "b": 2.5, "c": 2.5}}'
fast=$(new_exp "$A" "$T/fast")
expect_rc 0 "$CKO" confirm "$fast" --root "$A"
contains "$out" "repeated interval"
contains "$out" "against original"
contains "$out" "× faster ("
contains "$out" "case a"
expect_rc 0 "$CKO" show "$(printf '%s' "$out" | head -n1 | awk '{print $2}' | tr -d :)" --root "$A" --json
fast_conf=$(printf '%s' "$out" | field 'd["id"]')
check '
import json, sys
o = json.loads(sys.argv[1])["result"]["outputs"]
assert o["deciding"]["look"] >= 1 and o["deciding"]["level"] > 0.95, o["deciding"]
assert o["estimate"]["confidence"] == o["deciding"]["level"], o["estimate"]["confidence"]
assert o["nominal_estimate"]["confidence"] == 0.95
assert len(o["d"]) < 40, len(o["d"])
' "the deciding interval was not recorded"
expect_rc 0 "$CKO" champion select --root "$A" --experiment "$fast" --confirm "$fast_conf"

# 2. --base is honoured: a control frozen on the original after a champion exists is compared with
# the original (not the champion), says so, and cannot be selected; the fix offered is possible.
# (the control frozen at the start, base original, confirmed now that a champion exists)
expect_rc 1 "$CKO" confirm "$aa" --root "$A" --json
check '
import json, sys
o = json.loads(sys.argv[1])["result"]["outputs"]
assert o["reference"]["label"] == "original" and o["reference"]["kind"] == "original", o["reference"]
assert o["verdict"] == "equivalent", (o["verdict"], o["reason"])
' "an A/A control on the original was compared with the champion"
model "$T/faster" '{"factor": {"a": 3.5, "b": 3.5, "c": 3.5}}'
on_orig=$(new_exp "$A" "$T/faster" --base original)
expect_rc 0 "$CKO" confirm "$on_orig" --root "$A"
contains "$out" "reference original"
oc=$(printf '%s' "$out" | head -n1 | awk '{print $2}' | tr -d :)
expect_rc 2 "$CKO" champion select --root "$A" --experiment "$on_orig" --confirm "$oc"
contains "$err" "--base champion"
on_champ=$(new_exp "$A" "$T/faster" --base champion)
expect_rc 0 "$CKO" screen "$on_champ" --root "$A" --json
check '
import json, sys
o = json.loads(sys.argv[1])["result"]["outputs"]
assert o["reference"]["kind"] == "champion" and o["reference"]["label"].startswith("exp-"), o["reference"]
' "--base champion was not the reference"

# Re-freezing the same candidate against the same base is reported as such.
expect_rc 2 "$CKO" experiment new --root "$A" --candidate "$T/fast" --hypothesis "reworded" --mechanism m2 \
  --failure-closes mechanism --no-falsifier-reason r
contains "$err" "already frozen"
contains "$err" "$fast"

# 4. A candidate that crashes the driver (SIGSEGV while it runs) on case b is invalid, naming the case.
model "$T/crash" '{"factor": {"a": 2.0, "b": 2.0, "c": 2.0}, "crash_on": "b"}'
cr=$(new_exp "$A" "$T/crash" --base original)
expect_rc 1 "$CKO" confirm "$cr" --root "$A" --json
check '
import json, sys
r = json.loads(sys.argv[1])["result"]
o = r["outputs"]
assert r["state"] == "succeeded" and o["verdict"] == "invalid", (r["state"], o.get("verdict"))
assert o["infrastructure_failure"] is False
assert "crashed" in o["reason"] and "case b" in o["reason"] and "candidate was running" in o["reason"], o["reason"]
assert "reference_alone" in o["pairs"][-1]
' "a crashing candidate was not invalid"
# The SDK said who ran in a file of the call's output directory, not in ~2 000 stderr lines a call
# (`cko: subject ROLE case ID` at every change of subject): the file the crash left names the
# candidate on case b, no call's stderr holds such a line, and neither does the reason.
cr_inv=$(printf '%s' "$out" | field 'd["id"]')
mapfile -t notes < <(find "$A/invocations/$cr_inv" -name cko-running-subject.txt)
[ "${#notes[@]}" -eq 1 ] || fail "expected one running-subject file (the crashed call's): ${notes[*]}"
[ "$(cat "${notes[0]}")" = "cko: subject candidate case b" ] || fail "the crash left: $(cat "${notes[0]}")"
! grep -rl --include=stderr.txt "cko: subject" "$A/invocations/$cr_inv" || fail "a call wrote subject lines to stderr"
check 'import json,sys; r = json.loads(sys.argv[1])["result"]["outputs"]["reason"]; assert "subject" not in r, r' \
  "the reason quotes subject lines"

# ... and the same file names the reference when the reference crashes (its original crashes once
# a file exists: after the freeze's smoke calls): no reference-alone call, an infrastructure failure
# and no verdict on the candidate.
# Both on a Target whose driver runs one process per call (the default; $T's serves sessions): the
# crashing candidate first, then the crashing reference.
R="$tmp/r"
caps='' target "$R"
model "$R/original" "{\"factor\": {}, \"crash_if_exists\": \"$R/CRASH\"}"
expect_rc 0 "$CKO" target freeze --spec "$R/cko.toml" --root "$R/art"
grep -q '"session"' "$R/cko.toml" && fail "$R/cko.toml should not list the session capability"
model "$R/crash" '{"factor": {"a": 2.0, "b": 2.0, "c": 2.0}, "crash_on": "b"}'
rcr=$(new_exp "$R/art" "$R/crash")
expect_rc 1 "$CKO" screen "$rcr" --root "$R/art" --json
check '
import json, sys
o = json.loads(sys.argv[1])["result"]["outputs"]
assert o["verdict"] == "invalid" and o["infrastructure_failure"] is False, (o.get("verdict"), o)
assert "crashed" in o["reason"] and "case b" in o["reason"] and "candidate was running" in o["reason"], o["reason"]
' "a crashing candidate (one process per call) was not invalid"
rcr_inv=$(printf '%s' "$out" | field 'd["id"]')
mapfile -t notes < <(find "$R/art/invocations/$rcr_inv" -name cko-running-subject.txt)
[ "${#notes[@]}" -eq 1 ] && [ "$(cat "${notes[0]}")" = "cko: subject candidate case b" ] ||
  fail "one process per call: the crash left ${notes[*]}"
model "$R/fast" '{"factor": {"a": 2.0, "b": 2.0, "c": 2.0}}'
rc_exp=$(new_exp "$R/art" "$R/fast")
touch "$R/CRASH"
expect_rc 3 "$CKO" screen "$rc_exp" --root "$R/art" --json
check '
import json, sys
r = json.loads(sys.argv[1])["result"]
assert r["state"] == "failed" and r["error"]["code"] == "driver_failed", (r["state"], r.get("error"))
assert "candidate" not in r["reason"] and r["cost"]["driver_calls"] == 1, (r["reason"], r["cost"])
' "a crash of the reference was not an infrastructure failure"

# 5. Causes are shown: a compile error in the candidate reaches the verdict's reason.
model "$T/broken" '{"error_on": "a"}'
br=$(new_exp "$A" "$T/broken" --base original)
expect_rc 1 "$CKO" screen "$br" --root "$A" --json
check '
import json, sys
o = json.loads(sys.argv[1])["result"]["outputs"]
assert o["verdict"] == "invalid" and "blockDimx" in o["reason"], o["reason"]
' "the driver's note about a compile error was not in the reason"

# 7. The same exit code through --detach + wait as directly (a regressed candidate: 1).
model "$T/slow" '{"factor": {"a": 0.5, "b": 0.5, "c": 0.5}}'
sl=$(new_exp "$A" "$T/slow" --base original)
expect_rc 1 "$CKO" screen "$sl" --root "$A"
sl2=$(new_exp "$A" "$T/slow" --base original --minimum-effect-pct 4)
expect_rc 0 "$CKO" screen "$sl2" --root "$A" --detach
inv=$(printf '%s' "$out" | tr -d '\n')
expect_rc 1 "$CKO" wait "$inv" --root "$A"
expect_rc 1 "$CKO" status "$inv" --root "$A"

# 8. A detached comparison shows its progress; 7. wait --timeout expiring is not the operation timing out.
# The candidate's calls hang after its third (one pair of three cases), so the screen is still
# running however fast the first pair went: a session serves a call in a few milliseconds.
model "$T/sleepy" "{\"factor\": {\"a\": 1.0, \"b\": 1.0, \"c\": 1.0}, \"hang_after_calls\": 3, \"count_file\": \"$tmp/sleepy-calls\"}"
zz=$(new_exp "$A" "$T/sleepy" --base original)
expect_rc 0 "$CKO" screen "$zz" --root "$A" --detach
inv=$(printf '%s' "$out" | tr -d '\n')
expect_rc 5 "$CKO" wait "$inv" --root "$A" --timeout 2 --json
contains "$err" "still_running"
for _ in $(seq 120); do  # the first pair done (the fourth call has started): at most a minute
  [ "$(wc -l < "$tmp/sleepy-calls" 2>/dev/null || echo 0)" -ge 4 ] && break
  sleep 0.5
done
expect_rc 0 "$CKO" status "$inv" --root "$A" --json
check '
import json, sys
p = json.loads(sys.argv[1])["progress"]
assert p["pairs_done"] >= 1 and p["pairs_at_most"] == 20 and p["elapsed_s"] > 0, p
' "status shows no progress for a running comparison"
expect_rc 0 "$CKO" status "$inv" --root "$A"
contains "$out" "of at most 20 pairs"
expect_rc 0 "$CKO" cancel "$inv" --root "$A"
expect_rc 4 "$CKO" wait "$inv" --root "$A"   # cancelled: exit 4, as a direct run would

# Errors in one go: every missing field at once.
expect_rc 2 "$CKO" experiment new --root "$A" --candidate "$T/fast"
contains "$err" "hypothesis"
contains "$err" "mechanism"
contains "$err" "falsifier"

# History, ls in time order, show by short id and by selection id, champion export.
expect_rc 0 "$CKO" history --root "$A"
contains "$out" "experiment"
contains "$out" "select"
contains "$out" "A/A control"
expect_rc 0 "$CKO" history --root "$A" --json
check '
import json, sys
h = json.loads(sys.argv[1])
types = [e["type"] for e in h["entries"]]
assert types[0] == "experiment" and "baseline" in types and "select" in types, types
t = [e["t_unix_s"] for e in h["entries"]]
assert t == sorted(t), t
c = [e for e in h["entries"] if e["type"] == "confirm" and e["verdict"] == "mixed"]
assert c and c[0]["regressed_cases"] == ["c"] and c[0]["reference"] == "original", c
assert h["totals"]["wall_s"] > 0
' "the history is incomplete"
expect_rc 0 "$CKO" show "${fast:0:10}" --root "$A"
contains "$out" "hypothesis"
sel=$(ls "$A/champion/selections" | head -n1 | sed 's/\.json$//')
expect_rc 0 "$CKO" show "$sel" --root "$A" --json
contains "$out" "$fast"
expect_rc 0 "$CKO" champion export --root "$A" --to "$tmp/exported"
grep -q '"a": 2.5' "$tmp/exported/model.json" || fail "champion export did not write the champion's files"
expect_rc 2 "$CKO" champion export --root "$A" --to "$tmp/exported"

# 6. A driver edited after the freeze is an error of the Target: exit 3, nothing measured, no verdict.
echo "# edited" >> "$T/driver.py"
n_before=$(ls "$A/invocations" | wc -l)
expect_rc 3 "$CKO" screen "$sl" --root "$A"
contains "$err" "error[driver_changed]"
[ "$(ls "$A/invocations" | wc -l)" = "$n_before" ] || fail "an edited driver still produced an invocation"

expect_rc 0 "$CKO" fsck --root "$A"

# 8b. A detached baseline shows its progress too, counted in driver calls (before, status showed
# none: only comparisons wrote progress events).
B="$tmp/b"
target "$B"
model "$B/original" '{"factor": {}, "sleep_s": 0.05}'
expect_rc 0 "$CKO" target freeze --spec "$B/cko.toml" --root "$B/art"
expect_rc 0 "$CKO" baseline --root "$B/art" --detach
inv=$(printf '%s' "$out" | tr -d '\n')
expect_rc 5 "$CKO" wait "$inv" --root "$B/art" --timeout 3 --json
expect_rc 0 "$CKO" status "$inv" --root "$B/art" --json
check '
import json, sys
p = json.loads(sys.argv[1])["progress"]
assert p["unit"] == "calls" and 1 <= p["done"] < p["total"] == 3 * (3 + 2 * 12), p
assert p["elapsed_s"] > 0 and p["expected_s_at_most"] >= p["elapsed_s"], p
' "status shows no progress for a running baseline"
expect_rc 0 "$CKO" status "$inv" --root "$B/art"
contains "$out" "of 81 calls"
expect_rc 0 "$CKO" cancel "$inv" --root "$B/art"
expect_rc 4 "$CKO" wait "$inv" --root "$B/art"

# 5. A misspelled correctness metric at freeze says so (not "the original fails"), and the smoke's
# logs stay where the message says.
M="$tmp/m"
target "$M"
sed -i 's/metric = "max_rel_err"/metric = "max_rel_er"/' "$M/cko.toml"
expect_rc 2 "$CKO" target freeze --spec "$M/cko.toml" --root "$M/art"
contains "$err" 'reported no metric "max_rel_er"'
logs=$(printf '%s' "$err" | sed -n 's/.*driver logs are kept in \([^)]*\)).*/\1/p')
[ -n "$logs" ] && ls "$logs"/invocations/*/driver/*/stderr.txt >/dev/null 2>&1 || fail "the failed freeze's logs are not where the message says: $err"
rm -rf "$logs"
# Every record of the store, the A/A control's experiment included, matches its schema (the
# control's record had candidate.source "" and changed_files [], which experiment-v1 refused).
expect_rc 0 python3 "$(dirname "$0")/../schemas/validate_store.py" "$A"
echo "loop_cases: ok"
