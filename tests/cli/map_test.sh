#!/usr/bin/env bash
# `cko map` end to end on the real torch and nsys fixtures: an independent Python recomputation
# (tests/map_check.py) must agree to the nanosecond; bad flags are refused naming the field.
. "$(dirname "$0")/lib.sh"

torch=tests/fixtures/torch/torch_trace.json
gz=tests/fixtures/torch/h200_matmul_trace.json.gz
vec=tests/fixtures/nsys/vec.sqlite

# Whole trace and per-window maps, each checked by the independent script.
for args in "$torch" "$torch --window layer" "$gz" "$vec" "tests/fixtures/torch/torch18_camelcase_trace.json"; do
  set -- $args
  expect_rc 0 "$CKO" map "$@" --json
  printf '%s' "$out" > "$tmp/map.json"
  window=""; [ $# -gt 1 ] && window=$3
  expect_rc 0 python3 tests/map_check.py --trace "$1" --map "$tmp/map.json" --window "$window"
  contains "$out" ", 0 differ"
done

# The torch fixture: five 'layer' windows, aggregated; the document names its input by digest.
expect_rc 0 "$CKO" map "$torch" --window layer --speedup 2 --json
printf '%s' "$out" | python3 -c '
import json, sys, hashlib
d = json.load(sys.stdin)
assert d["format_version"] == "cko/map-v1", d["format_version"]
p = d["parts"][0]
assert len(p["windows"]) == 5 and p["aggregate"]["occurrences"] == 5, p["aggregate"]
digest = hashlib.sha256(open("tests/fixtures/torch/torch_trace.json", "rb").read()).hexdigest()
assert d["inputs"][0]["source"]["report_sha256"] == digest, d["inputs"]
for w in p["windows"]:
    g = w["gpu"]
    assert g["busy_ns"] + g["idle_ns"] == w["duration_ns"], w
    a = g["idle_attribution"]
    assert sum(a.values()) == g["idle_ns"], a
    assert sum(c["ns"] for c in g["concurrency"]) == w["duration_ns"], g["concurrency"]
    assert w["coverage"]["recorded_ns"] + w["coverage"]["unobserved_ns"] == w["duration_ns"]
    for i in w["items"]:
        assert i["exposed_ns"] <= i["union_ns"] <= max(i["total_ns"], i["union_ns"]), i
        assert abs(i["amdahl_gain_pct"] - i["removable_pct"] / 2) < 1e-9, i
'

# Text: the summary lines and a Gantt row per lane.
expect_rc 0 "$CKO" map "$torch" --window layer --top 3
contains "$out" "window 'layer' #0"
contains "$out" "idle while CPU: in sync"
contains "$out" "GPU 0 stream 7"
contains "$out" "Gantt legend:"
expect_rc 0 "$CKO" map "$vec"
contains "$out" "scale_naive(const float *, float *, float, int)"

# Refusals name the field and the fix.
expect_rc 2 "$CKO" map "$torch" --window nosuch
contains "$err" "no annotation named 'nosuch'"
contains "$err" "'layer'"
expect_rc 2 "$CKO" map "$torch" --speedup 0.5
contains "$err" "--speedup must be a finite number greater than 1"
expect_rc 2 "$CKO" map "$torch" --device 3
contains "$err" "no GPU lane is on device 3"
expect_rc 2 "$CKO" map "$torch" "$torch"
contains "$err" "distributedInfo.rank"

# Profiles kept as evidence: content-addressed records in the store, shown by the history. The
# Target measures on one (fake NVML) H200, the GPU the trace was taken on; the trace does not state
# its torch version, so a map bound to an experiment names it (--tool-version).
ex="$(cd examples/cpu-saxpy && pwd)"
use_fake_h200
t="$tmp/t"; root="$t/art"
saxpy_target "$t" "$ex/original"
printf '[resources]\ngpus = "auto"\n' >> "$t/cko.toml"
expect_rc 0 "$CKO" target freeze --spec "$t/cko.toml" --root "$root"
expect_rc 0 "$CKO" experiment new --root "$root" --candidate "$ex/candidate" --hypothesis "rows are contiguous" \
  --mechanism loop-order --failure-closes mechanism --no-falsifier-reason none --json
exp=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
expect_rc 0 "$CKO" map "$torch" --window layer --root "$root" --experiment "$exp" --subject candidate --tool-version 2.11 --json
printf '%s' "$out" > "$tmp/stored.json"
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stored"]["id"])' "$tmp/stored.json")
[ -f "$root/profiles/$id.json" ] || fail "no profiles/$id.json"
python3 - "$root/profiles/$id.json" "$tmp/stored.json" <<'PY'
import json, sys, hashlib
r = json.load(open(sys.argv[1]))
printed = json.load(open(sys.argv[2]))
printed.pop("stored")
assert r["format_version"] == "cko/profile-record-v1" and r["kind"] == "map", r["kind"]
assert r["document"] == printed, "the stored document is not the printed one"
assert r["experiment_id"] and r["subject"] == "candidate", r
digest = hashlib.sha256(open("tests/fixtures/torch/torch_trace.json", "rb").read()).hexdigest()
assert r["sources"][0]["report_sha256"] == digest and r["sources"][0]["tool"] == "kineto", r["sources"]
assert len(r["environment_sha256"]) == 64 and r["target"], r
PY
# The same evidence again is the same record; another document is another.
expect_rc 0 "$CKO" map "$torch" --window layer --root "$root" --experiment "$exp" --subject candidate --tool-version 2.11
contains "$out" "stored as $id"
# Kept without an experiment and without a version, a trace is foreign evidence, saying why.
expect_rc 0 "$CKO" profile torch "$torch" --root "$root"
contains "$out" "kept as foreign evidence (no claim may cite it): the torch version is not stated"
contains "$out" "stored as profile-"
[ "$(ls "$root/profiles" | wc -l)" -eq 2 ] || fail "expected two profile records: $(ls "$root/profiles")"
expect_rc 0 "$CKO" history --root "$root"
digest=$(sha256sum "$torch" | cut -c1-12)
contains "$out" "$id"
contains "$out" "map of torch_trace.json (sha256 $digest)"
contains "$out" "for $exp candidate"
expect_rc 0 "$CKO" fsck --root "$root"
expect_rc 0 "$CKO" report --root "$root" --format md --out "$tmp/report.md"
contains "$(cat "$tmp/report.md")" "\`$id\`: map of"
contains "$(cat "$tmp/report.md")" "evidence for \`$exp\` (candidate)"
# Refusals: a subject that is neither side, an experiment without a store, an unknown experiment.
expect_rc 2 "$CKO" map "$torch" --root "$root" --experiment "$exp" --subject both
contains "$err" "use reference or candidate"
expect_rc 2 "$CKO" map "$torch" --experiment "$exp" --subject reference
contains "$err" "need --root"
expect_rc 2 "$CKO" map "$torch" --root "$root" --experiment exp-nosuch --subject reference

# An experiment's gain bound may cite a stored map; a conservative-bound screen whose cited bound
# is below the minimum effect (5 %) is rejected without one driver call.
cp -r "$ex/candidate" "$tmp/cand2" && echo "// another candidate" >> "$tmp/cand2/saxpy.cpp"
expect_rc 2 "$CKO" experiment new --root "$root" --candidate "$ex/candidate" --hypothesis h --mechanism m \
  --failure-closes mechanism --no-falsifier-reason none --gain-bound-source "map:profile-0000000000000000#memset"
contains "$err" "cites map 'profile-0000000000000000', which the store does not hold"
torch_id=$(ls "$root/profiles" | grep -v "^$id.json$" | sed 's/.json$//')
expect_rc 2 "$CKO" experiment new --root "$root" --candidate "$ex/candidate" --hypothesis h --mechanism m \
  --failure-closes mechanism --no-falsifier-reason none --gain-bound-source "map:$torch_id#memset"
contains "$err" "a torch profile, not a map"
# The bound is about an item of a map of the experiment's base: $id maps $exp's candidate, not the
# original the new experiment is compared against; a map item without a bound is computed.
expect_rc 2 "$CKO" experiment new --root "$root" --candidate "$tmp/cand2" --hypothesis h --mechanism m \
  --failure-closes mechanism --no-falsifier-reason none --gain-bound-source "map:$id"
contains "$err" "names no item of the map"
expect_rc 2 "$CKO" experiment new --root "$root" --candidate "$tmp/cand2" --hypothesis h --mechanism m \
  --failure-closes mechanism --no-falsifier-reason none --gain-bound-source "map:$id#memset"
contains "$err" "gain_bound_source"
contains "$err" "but this experiment's base is"
expect_rc 0 "$CKO" map "$torch" --window layer --root "$root" --experiment "$exp" --subject reference --tool-version 2.11 --json
ref_id=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["stored"]["id"])')
# memset's largest share of a 'layer' window, recomputed here from the printed map.
bound=$(printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(max(100.0 * i["exposed_ns"] / w["duration_ns"] for p in d["parts"] for w in p["windows"]
          for i in w["items"] if i["name"] == "memset"))')
expect_rc 2 "$CKO" experiment new --root "$root" --candidate "$tmp/cand2" --hypothesis h --mechanism m \
  --failure-closes mechanism --no-falsifier-reason none --gain-bound-pct 1 --gain-bound-source "map:$ref_id#memset"
contains "$err" "gain_bound_pct"
contains "$err" "but the cited map computes"
expect_rc 2 "$CKO" experiment new --root "$root" --candidate "$tmp/cand2" --hypothesis h --mechanism m \
  --failure-closes mechanism --no-falsifier-reason none --gain-bound-source "map:$ref_id#nosuch"
contains "$err" "has no item 'nosuch'"
expect_rc 0 "$CKO" experiment new --root "$root" --candidate "$tmp/cand2" --hypothesis h --mechanism m \
  --failure-closes mechanism --no-falsifier-reason none --gain-bound-source "map:$ref_id#memset" --json
bounded=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
printf '%s' "$out" | python3 -c '
import json, sys
g = json.load(sys.stdin)["gain_bound"]
assert abs(g["pct"] - float(sys.argv[1])) < 1e-9 and g["computed"]["item"] == "memset", g
assert g["computed"]["window"] == "layer" and g["computed"]["kind"] == "category", g' "$bound"
expect_rc 1 "$CKO" screen "$bounded" --root "$root" --json
screen=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
[ -d "$root/invocations/$screen" ] || fail "no invocation $screen"
[ -z "$(ls -A "$root/invocations/$screen/driver" 2>/dev/null)" ] ||
  fail "the bounded screen called the driver: $(ls "$root/invocations/$screen/driver")"
printf '%s' "$out" | python3 -c '
import json, sys
o = json.load(sys.stdin)["result"]["outputs"]
assert o["verdict"] == "below_minimum" and o["decision"] == "rejected", (o["verdict"], o["decision"])
assert o["pairs"] == [] and o["d"] == [], o["pairs"]
assert abs(o["bound_rejection"]["bound_pct"] - float(sys.argv[1])) < 1e-9, o
assert o["bound_rejection"]["minimum_effect_pct"] == 5, o
assert "rejected without measuring" in o["reason"], o["reason"]' "$bound"
# Every record of the root (profiles, the bounded screen's result) against its schema.
python3 tests/schemas/validate_store.py "$root" > "$tmp/validate.log" 2>&1 || fail "records invalid: $(cat "$tmp/validate.log")"
out=$(cat "$tmp/validate.log")
contains "$out" "profile-record-v1"
echo "map: ok"
