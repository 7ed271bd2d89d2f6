#!/usr/bin/env bash
# Issue [18], end to end on CPU with a synthetic driver (verdict_driver.py): a constraint broken on
# one case is `regressed` however much another case improves it (`mixed`, accepted by name, where
# the constraint sets accept_per_case); an instance effect below the minimum effect is not a
# regression, a 3 % slowdown is; an inconclusive screen needs judgement; a biased A/A check is
# flagged and carried into the next verdict.
. "$(dirname "$0")/lib.sh"
driver="$(cd "$(dirname "$0")" && pwd)/verdict_driver.py"
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
check() { python3 -c "$1" "$out" || fail "$2"; }   # python over the last output (as sys.argv[1])
model() { mkdir -p "$1"; printf '%s\n' "$2" > "$1/model.json"; }
new_exp() {  # new_exp ROOT CANDIDATE_DIR: prints the experiment id
  expect_rc 0 "$CKO" experiment new --root "$1" --candidate "$2" --hypothesis h --mechanism m \
    --failure-closes mechanism --no-falsifier-reason r --json
  printf '%s' "$out" | field 'd["id"]'
}
# target DIR CASES OBJECTIVE_LINES: a Target on verdict_driver.py (original model written before).
# Its driver serves each operation in one session (protocol v2): a fifth of the time of a process per call.
target() {
  mkdir -p "$1/cases"
  local ids=""
  for c in $2; do echo "{}" > "$1/cases/$c.json"; ids="$ids\"$c\", "; done
  cat > "$1/cko.toml" <<TOML
[target]
name = "verdict-rules"
claim_layer = "serving"
original = "original"
change_scope = ["original/model.json"]
[cases]
dir = "cases"
ids = [${ids%, }]
[driver]
argv = ["python3", "$driver"]
capabilities = ["single_subject", "paired_in_process", "session"]
env_allow = ["PATH"]
[objective]
$3
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
[limits]
command_timeout_s = 60
operation_timeout_s = 600
TOML
  expect_rc 0 "$CKO" target freeze --spec "$1/cko.toml" --root "$1/art"
}

# 1. Serving: capacity 4.2x on both loads; p99 3.8x worse under light load, 5x better under heavy.
# Pooled, p99 improves by (ln 5 - ln 3.8)/2; before [18] the verdict was `improved`, constraint `ok`.
S="$tmp/serving"
model "$S/original" '{"higher_is_better": ["requests_per_gpu_s"], "noise": 0.002,
  "metrics": {"requests_per_gpu_s": {"light": 100, "heavy": 100}, "p99_ms": {"light": 10, "heavy": 50}}}'
target "$S" "light heavy" 'primary = { name = "requests_per_gpu_s", unit = "1/s", direction = "higher", aggregation = "median" }
minimum_effect_pct = 5.0
constraints = [{ name = "p99_ms", unit = "ms", direction = "lower", max_regression_pct = 10.0 }]'
model "$tmp/split" '{"higher_is_better": ["requests_per_gpu_s"], "noise": 0.002,
  "metrics": {"requests_per_gpu_s": {"light": 420, "heavy": 420}, "p99_ms": {"light": 38, "heavy": 10}}}'
model "$tmp/even" '{"higher_is_better": ["requests_per_gpu_s"], "noise": 0.002,
  "metrics": {"requests_per_gpu_s": {"light": 420, "heavy": 420}, "p99_ms": {"light": 10.5, "heavy": 50}}}'
split=$(new_exp "$S/art" "$tmp/split")
even=$(new_exp "$S/art" "$tmp/even")
expect_rc 1 "$CKO" screen "$split" --root "$S/art" --json
check '
import json, sys
o = json.loads(sys.argv[1])["result"]["outputs"]
assert o["verdict"] == "regressed" and o["decision"] == "rejected", (o["verdict"], o["decision"])' "split: screen not rejected"
# The rejected screen stops the candidate ([18] failure stops): its confirm is refused unless a
# reason is given, and with one it runs and the reason is recorded.
expect_rc 2 "$CKO" confirm "$split" --root "$S/art" --json
contains "$err" "candidate_failed"
expect_rc 1 "$CKO" confirm "$split" --root "$S/art" --json \
  --override-failure "shows the per-case constraint table of a candidate the screen rejected"
check '
import json, sys
o = json.loads(sys.argv[1])["result"]["outputs"]
assert o["pooled_verdict"] == "improved" and o["verdict"] == "regressed", (o["pooled_verdict"], o["verdict"])
c = o["constraints"]["p99_ms"]
assert c["pooled_status"] == "ok" and c["status"] == "regressed", c
assert [(p["case_id"], p["status"]) for p in c["per_case"]] == [("light", "regressed"), ("heavy", "ok")], c["per_case"]
assert o["constraint_regressions"] == [{"case_id": "light", "constraint": "p99_ms"}], o["constraint_regressions"]
assert o["per_case"][0]["constraints"] == {"p99_ms": "regressed"}, o["per_case"][0]
assert "constraint p99_ms regressed beyond 10% on case light" in o["reason"], o["reason"]' "split: confirm not regressed on the light case"
conf=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 2 "$CKO" champion select --root "$S/art" --experiment "$split" --confirm "$conf"
contains "$err" "constraint p99_ms regressed on case light"
# Within its tolerance on every case (+5 % p99 under light load): improved.
expect_rc 0 "$CKO" confirm "$even" --root "$S/art" --json
check '
import json, sys
o = json.loads(sys.argv[1])["result"]["outputs"]
assert o["verdict"] == "improved", o["verdict"]
assert o["constraints"]["p99_ms"]["status"] == "ok", o["constraints"]
# verdict_driver.py answers cko/driver-result-v1 without loaded_digest: believed (v1 is still read),
# and the comparison says its roles went unchecked (before [18]: no word).
assert any(n.startswith("roles unchecked: the driver reported no loaded digest") for n in o["notes"]), o["notes"]' \
  "even: not improved, or no note that its roles went unchecked"
conf_even=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 0 "$CKO" champion select --root "$S/art" --experiment "$even" --confirm "$conf_even"
# The per-case constraint table in the history, the report and the handoff.
expect_rc 0 "$CKO" history --root "$S/art" --json
check '
import json, sys
h = json.loads(sys.argv[1])
c = [e for e in h["entries"] if e["type"] == "confirm" and e["verdict"] == "regressed"][0]
k = c["constraints"]["p99_ms"]
assert k["pooled_status"] == "ok" and [p["status"] for p in k["per_case"]] == ["regressed", "ok"], k
assert c["constraint_regressions"] == [{"case_id": "light", "constraint": "p99_ms"}], c' "history: no per-case constraint table"
expect_rc 0 "$CKO" report --root "$S/art" --format md
contains "$out" "  - case \`light\`: regressed"
expect_rc 0 "$CKO" handoff --root "$S/art"
contains "$out" "constraint p99_ms on case \`light\`: ok"

# 1c. The same split on a Target whose p99 constraint sets accept_per_case: the light case's p99
# regression (pooled p99 ok) makes the improvement `mixed`, naming the case and the constraint, and
# select takes it only with --accept-regression light (before: `regressed`, never selectable).
P="$tmp/accept"
model "$P/original" '{"higher_is_better": ["requests_per_gpu_s"], "noise": 0.002,
  "metrics": {"requests_per_gpu_s": {"light": 100, "heavy": 100}, "p99_ms": {"light": 10, "heavy": 50}}}'
target "$P" "light heavy" 'primary = { name = "requests_per_gpu_s", unit = "1/s", direction = "higher", aggregation = "median" }
minimum_effect_pct = 5.0
constraints = [{ name = "p99_ms", unit = "ms", direction = "lower", max_regression_pct = 10.0, accept_per_case = true }]'
expect_rc 0 "$CKO" show target --root "$P/art" --json
check '
import json, sys
c = json.loads(sys.argv[1])["spec"]["objective"]["constraints"][0]
assert c["accept_per_case"] is True, c' "accept: the frozen Target lost accept_per_case"
split_p=$(new_exp "$P/art" "$tmp/split")
expect_rc 1 "$CKO" confirm "$split_p" --root "$P/art" --json
check '
import json, sys
d = json.loads(sys.argv[1])
o = d["result"]["outputs"]
assert o["pooled_verdict"] == "improved" and o["verdict"] == "mixed", (o["pooled_verdict"], o["verdict"])
assert o["regressed_cases"] == [], o["regressed_cases"]
c = o["constraints"]["p99_ms"]
assert c["pooled_status"] == "ok" and c["status"] == "regressed" and c["accept_per_case"], c
assert o["constraint_regressions"] == [{"case_id": "light", "constraint": "p99_ms", "acceptable": True}], o["constraint_regressions"]
assert "constraint p99_ms regressed beyond 10% on case light" in o["reason"], o["reason"]
assert d["next_step"]["command"].endswith("--accept-regression light"), d["next_step"]' "accept: confirm not mixed on the light case's p99"
conf_p=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 2 "$CKO" champion select --root "$P/art" --experiment "$split_p" --confirm "$conf_p"
contains "$err" "constraint p99_ms regressed on case light"
contains "$err" "--accept-regression"
expect_rc 2 "$CKO" champion select --root "$P/art" --experiment "$split_p" --confirm "$conf_p" \
  --accept-regression heavy
expect_rc 0 "$CKO" champion select --root "$P/art" --experiment "$split_p" --confirm "$conf_p" \
  --accept-regression light --json
check '
import json, sys
s = json.loads(sys.argv[1])
assert s["accepted_regressions"] == ["light"], s' "accept: the selection did not record the accepted case"

# 2. Latency, two cases, noise 0.05 %, minimum effect 1 %: a copy 0.1 % slower is an instance
# effect (before [18]: `regressed`), a 3 % slowdown is a regression, 1 % slower cannot be decided.
L="$tmp/latency"
model "$L/original" '{"noise": 0.0005, "metrics": {"latency_us": {"a": 100, "b": 40}}}'
target "$L" "a b" 'primary = { name = "latency_us", unit = "us", direction = "lower", aggregation = "median" }
minimum_effect_pct = 1.0'
model "$tmp/slow01" '{"noise": 0.0005, "metrics": {"latency_us": {"a": 100.1, "b": 40.04}}}'
model "$tmp/slow3" '{"noise": 0.0005, "metrics": {"latency_us": {"a": 103, "b": 41.2}}}'
model "$tmp/slow1" '{"noise": 0.0005, "metrics": {"latency_us": {"a": 101, "b": 40.4}}}'
slow01=$(new_exp "$L/art" "$tmp/slow01")
slow3=$(new_exp "$L/art" "$tmp/slow3")
slow1=$(new_exp "$L/art" "$tmp/slow1")
# The confirm stops once its interval lies inside ±1 %; whether that interval also excludes zero
# depends on the draw (a random seed gave ci_high_pct +0.0008 in one CI run of ten), so the seed is
# fixed here too.
expect_rc 1 "$CKO" confirm "$slow01" --root "$L/art" --seed 1 --json
check '
import json, sys
o = json.loads(sys.argv[1])["result"]["outputs"]
assert o["verdict"] == "equivalent", (o["verdict"], o["estimate"]["ci_low_pct"], o["estimate"]["ci_high_pct"])
assert o["estimate"]["ci_high_pct"] < 0, o["estimate"]  # resolved, yet not a regression
assert o["regressed_cases"] == [] and not any(c["regressed"] for c in o["per_case"]), o["per_case"]
assert o["thresholds"] == {"regression_pct": 1.0, "case_regression_pct": 1.0}, o["thresholds"]' "0.1 % slower: not equivalent"
expect_rc 1 "$CKO" confirm "$slow3" --root "$L/art" --json
[ "$(printf '%s' "$out" | field 'd["result"]["outputs"]["verdict"]')" = regressed ] || fail "3 % slower: not regressed"
# At the threshold a 95 % interval excludes it in about one draw of twenty, so the seed is fixed
# (the noise of verdict_driver.py follows the request seeds).
expect_rc 1 "$CKO" screen "$slow1" --root "$L/art" --seed 1 --json
check '
import json, sys
o = json.loads(sys.argv[1])["result"]["outputs"]
assert o["verdict"] == "inconclusive" and o["decision"] == "needs_judgement", (o["verdict"], o["decision"])' "1 % slower: screen not needs_judgement"

# 3. A biased instrument: the candidate slot runs 2 % faster whatever code it holds. The baseline's
# A/A check flags it; a confirm of an unchanged model then looks +2 % (improved before [18]) and
# is inconclusive because the carried bias decides.
B="$tmp/biased"
model "$B/original" '{"noise": 0.0005, "role_bias": {"candidate": 0.02}, "metrics": {"latency_us": {"a": 100}}}'
target "$B" "a" 'primary = { name = "latency_us", unit = "us", direction = "lower", aggregation = "median" }
minimum_effect_pct = 1.0'
expect_rc 0 "$CKO" baseline --root "$B/art" --json
check '
import json, sys
o = json.loads(sys.argv[1])["result"]["outputs"]
c = o["instrument_check"]
assert c["biased"] and c["biased_scopes"] == ["pooled"] and c["bias_bound_pct"] > 1.9, c
assert "biased instrument" in json.loads(sys.argv[1])["result"]["reason"]' "baseline: bias not flagged"
model "$tmp/same" '{"noise": 0.0005, "role_bias": {"candidate": 0.02}, "comment": "reformatted", "metrics": {"latency_us": {"a": 100}}}'
same=$(new_exp "$B/art" "$tmp/same")
expect_rc 1 "$CKO" confirm "$same" --root "$B/art" --json
check '
import json, sys
r = json.loads(sys.argv[1])["result"]
o = r["outputs"]
assert o["verdict"] == "inconclusive" and o["pooled_verdict"] == "improved", (o["verdict"], o["pooled_verdict"])
b = o["instrument_bias"]
assert b["decides"] and b["verdict_without_bias"] == "improved" and b["source"].startswith("baseline inv-"), b
assert any("biased instrument" in n for n in o["notes"]), o["notes"]
assert "decides this verdict" in o["reason"], o["reason"]' "biased: the carried bias did not decide"

# 3b. A constraint's own instance effect: the candidate slot uses 0.4 % more memory whatever code it
# holds (latency unaffected). The baseline's A/A flags that constraint alone; a candidate 3 % faster
# with the same memory is then not called a memory regression (it was `regressed` before: the A/A
# checked the primary only), while its latency verdict carries no bias.
M="$tmp/membias"
model "$M/original" '{"noise": 0.0005, "metric_role_bias": {"candidate": {"peak_mem_mb": -0.004}},
  "metrics": {"latency_us": {"a": 100, "b": 100}, "peak_mem_mb": {"a": 1000, "b": 1000}}}'
target "$M" "a b" 'primary = { name = "latency_us", unit = "us", direction = "lower", aggregation = "median" }
minimum_effect_pct = 1.0
constraints = [{ name = "peak_mem_mb", unit = "MB", direction = "lower", max_regression_pct = 0.1 }]'
expect_rc 0 "$CKO" baseline --root "$M/art" --aa-pairs 12 --json
# (The primary's own three A/A intervals are clean in truth; each excludes zero by chance in about
# one baseline of twenty, the seed coming from the ids, so the primary is not asserted clean.)
check '
import json, sys
c = json.loads(sys.argv[1])["result"]["outputs"]["instrument_check"]
assert c["biased"] and (c["bias_bound_pct"] == 0) == (c["biased_scopes"] == []), c
m = c["constraints"]["peak_mem_mb"]
assert m["biased"] and m["bias_bound_pct"] > 0.35, m
assert "constraint peak_mem_mb" in c["statement"], c["statement"]' "membias: the constraint's bias not flagged"
primary_biased=$(printf '%s' "$out" | field 'int(bool(d["result"]["outputs"]["instrument_check"]["biased_scopes"]))')
model "$tmp/faster" '{"noise": 0.0005, "metric_role_bias": {"candidate": {"peak_mem_mb": -0.004}},
  "metrics": {"latency_us": {"a": 97, "b": 97}, "peak_mem_mb": {"a": 1000, "b": 1000}}}'
faster=$(new_exp "$M/art" "$tmp/faster")
expect_rc 0 "$CKO" confirm "$faster" --root "$M/art" --json
python3 -c '
import json, sys
o = json.loads(sys.argv[1])["result"]["outputs"]
assert o["verdict"] == "improved", (o["verdict"], o.get("constraints"))
assert ("instrument_bias" in o) == (sys.argv[2] == "1"), o.get("instrument_bias")  # the primary only
b = o["constraints"]["peak_mem_mb"]["instrument_bias"]
assert b["decides"] and b["status_without_bias"] == "regressed", b
assert any("biased instrument for constraint peak_mem_mb" in n for n in o["notes"]), o["notes"]' "$out" "$primary_biased" || fail "membias: a placement effect on memory was a regression"

# 4. Every record of the five roots against the JSON Schemas (the new fields included).
repo="$(cd "$(dirname "$0")/../.." && pwd)"
py=""
for p in ${CKO_SCHEMA_PYTHON:-} /usr/bin/python3 python3; do
  if "$p" -c 'import jsonschema' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || fail "no python3 with jsonschema (install python3-jsonschema: scripts/deps.sh)"
expect_rc 0 "$py" "$repo/tests/schemas/validate_store.py" "$S/art" "$P/art" "$L/art" "$B/art" "$M/art"
