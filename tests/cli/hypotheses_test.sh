#!/usr/bin/env bash
# Issue [23], competing hypotheses and a profile's question: two rival explanations of one
# bottleneck (an item of a stored map) are recorded with what would separate them, listed, one is
# settled on the map (once), and the handoff lists the one still open; a map stored with --question
# shows it in show and history; a falsify citing a profile of another experiment's candidate is
# refused naming the field, one citing the claim's own base is recorded with the question.
. "$(dirname "$0")/lib.sh"
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
torch=tests/fixtures/torch/torch_trace.json
ex="$(cd examples/cpu-saxpy && pwd)"

# The Target measures on one (fake NVML) H200, the GPU the trace was taken on (as in cli_map).
use_fake_h200
t="$tmp/t"; A="$t/art"
saxpy_target "$t" "$ex/original"
printf '[resources]\ngpus = "auto"\n' >> "$t/cko.toml"
expect_rc 0 "$CKO" target freeze --spec "$t/cko.toml" --root "$A"
expect_rc 0 "$CKO" experiment new --root "$A" --candidate "$ex/candidate" --hypothesis "rows are contiguous" \
  --mechanism loop-order --failure-closes mechanism --no-falsifier-reason none --json
exp=$(printf '%s' "$out" | field 'd["id"]')
cp -r "$ex/candidate" "$tmp/cand2" && echo "// another candidate" >> "$tmp/cand2/saxpy.cpp"
expect_rc 0 "$CKO" experiment new --root "$A" --candidate "$tmp/cand2" --hypothesis "another order" \
  --mechanism other --failure-closes mechanism --no-falsifier-reason none --json
other=$(printf '%s' "$out" | field 'd["id"]')

# --- a profile's question ---------------------------------------------------------------------
expect_rc 2 "$CKO" map "$torch" --question "needs a store"
contains "$err" "--question need --root"
question="Is memset exposed in the reference's layer windows?"
expect_rc 0 "$CKO" map "$torch" --window layer --root "$A" --experiment "$exp" --subject reference \
  --tool-version 2.11 --question "$question" --json
map=$(printf '%s' "$out" | field 'd["stored"]["id"]')
[ "$(printf '%s' "$out" | field 'd["stored"]["question"]')" = "$question" ] || fail "stored: $out"
[ "$(field 'd["question"]' < "$A/profiles/$map.json")" = "$question" ] || fail "the record lacks the question"
expect_rc 0 "$CKO" show "$map" --root "$A"
contains "$out" "question: $question"
contains "$out" "evidence for $exp (reference)"
expect_rc 0 "$CKO" show "${map:0:14}" --root "$A" --json
[ "$(printf '%s' "$out" | field 'd["question"]')" = "$question" ] || fail "show --json: $out"
expect_rc 0 "$CKO" history --root "$A"
contains "$out" "— question: $question"
# A profile of the other experiment's candidate, with its own question.
expect_rc 0 "$CKO" profile torch "$torch" --root "$A" --experiment "$other" --subject candidate \
  --tool-version 2.11 --question "Does the other order cut the memsets?" --json
theirs=$(printf '%s' "$out" | field 'd["stored"]["id"]')

# --- a falsify must cite a profile of its own experiment's subjects ------------------------------
n0=$(ls "$A/invocations" | wc -l)
expect_rc 2 "$CKO" experiment falsify "$exp" --root "$A" --outcome falsified --evidence "$theirs"
contains "$err" "error[invalid_argument]"
contains "$err" "evidence: cites profile '$theirs' of snapshot"
contains "$err" "($other's candidate), but $exp compares candidate"
contains "$err" "measured neither side of this claim"
contains "$err" "--experiment $exp --subject candidate|reference"
[ "$(ls "$A/invocations" | wc -l)" -eq "$n0" ] || fail "a refused falsify left an invocation"
# The same refusal through --request (the object an MCP call takes).
printf '{"root": "%s", "experiment": "%s", "outcome": "falsified", "evidence": "%s"}' "$A" "$exp" "$theirs" \
  > "$tmp/falsify.json"
expect_rc 2 "$CKO" experiment falsify --request "$tmp/falsify.json"
contains "$err" "measured neither side of this claim"
# The map of this experiment's base is its evidence; the record keeps the question it answered.
expect_rc 0 "$CKO" experiment falsify "$exp" --root "$A" --outcome survived --evidence "$map" --json
python3 -c '
import json, sys
ev = json.loads(sys.argv[1])["result"]["outputs"]["evidence"]
assert ev == {"kind": "map", "id": sys.argv[2], "question": sys.argv[3]}, ev' "$out" "$map" "$question"

# --- competing hypotheses of one bottleneck -------------------------------------------------------
expect_rc 0 "$CKO" hypotheses list --root "$A"
contains "$out" "no hypotheses recorded"
expect_rc 2 "$CKO" hypotheses add --root "$A" --bottleneck "map:$map" --explanation e --separated-by s
contains "$err" "bottleneck: 'map:$map' names no item of the map"
expect_rc 2 "$CKO" hypotheses add --root "$A" --bottleneck "map:$map#nosuch" --explanation e --separated-by s
contains "$err" "has no item 'nosuch'"
expect_rc 0 "$CKO" hypotheses add --root "$A" --bottleneck "map:$map#memset" \
  --explanation "each layer zeroes its output buffer" \
  --separated-by "memset count per layer window equals the layer count" --json
h1=$(printf '%s' "$out" | field 'd["id"]')
[ "$(printf '%s' "$out" | field 'd["bottleneck_map"]["item"]')" = memset ] || fail "add: $out"
printf '{"root": "%s", "bottleneck": "map:%s#memset", "explanation": "the allocator zeroes fresh blocks", "separated_by": "memsets only in the first window", "rival": ["%s"]}' \
  "$A" "$map" "$h1" > "$tmp/add.json"
expect_rc 0 "$CKO" hypotheses add --request "$tmp/add.json" --json
h2=$(printf '%s' "$out" | field 'd["id"]')
[ "$(printf '%s' "$out" | field 'd["rivals"]')" = "['$h1']" ] || fail "rivals: $out"
expect_rc 2 "$CKO" hypotheses add --root "$A" --bottleneck "another" --explanation e --separated-by s --rival "$h1"
contains "$err" "rival: $h1 explains the bottleneck 'map:$map#memset', not 'another'"
expect_rc 0 "$CKO" hypotheses list --root "$A"
contains "$out" "hypotheses: 2 recorded, 2 open"
contains "$out" "bottleneck map:$map#memset (category memset:"
contains "$out" "separated by: memsets only in the first window"
expect_rc 0 "$CKO" hypotheses list --root "$A" --json
[ "$(printf '%s' "$out" | field 'd["bottlenecks"][0]["open"]')" = "['$h1', '$h2']" ] || fail "list: $out"

# Settled once, on a stored record; the other stays open.
expect_rc 2 "$CKO" hypotheses settle "$h1" --root "$A" --outcome maybe --evidence "$map"
contains "$err" "outcome: \"maybe\" is not allowed"
expect_rc 2 "$CKO" hypotheses settle "$h1" --root "$A" --outcome refuted --evidence nowhere.txt
contains "$err" "error[not_found]"
expect_rc 0 "$CKO" hypotheses settle "$h1" --root "$A" --outcome refuted --evidence "$map" \
  --note "five memsets in five windows: one per layer, not per allocation"
contains "$out" "$h1 refuted on map $map"
settled=$(printf '%s' "$out" | grep -o 'hset-[0-9a-f]*' | head -n1)
expect_rc 2 "$CKO" hypotheses settle "$h1" --root "$A" --outcome supported --evidence "$exp"
contains "$err" "error[already_exists]"
contains "$err" "$h1 was settled already: refuted on map $map ($settled)"
expect_rc 0 "$CKO" hypotheses list --root "$A"
contains "$out" "hypotheses: 2 recorded, 1 open"
expect_rc 0 "$CKO" show "$settled" --root "$A" --json
[ "$(printf '%s' "$out" | field 'd["hypothesis"]')" = "$h1" ] || fail "show: $out"

# An experiment names the hypothesis it tests; an unknown one is refused.
expect_rc 2 "$CKO" experiment new --root "$A" --candidate "$tmp/cand2" --hypothesis h --mechanism m2 \
  --failure-closes mechanism --no-falsifier-reason none --tests-hypothesis hyp-0000000000000000
contains "$err" "tests_hypothesis: \"hyp-0000000000000000\" is no hypothesis of this store"
echo "// a third candidate" >> "$tmp/cand2/saxpy.cpp"
expect_rc 0 "$CKO" experiment new --root "$A" --candidate "$tmp/cand2" --hypothesis "reuse buffers" \
  --mechanism buffer-reuse --failure-closes mechanism --no-falsifier-reason none --tests-hypothesis "$h2" --json
tester=$(printf '%s' "$out" | field 'd["id"]')

# History, report and handoff.
expect_rc 0 "$CKO" history --root "$A"
contains "$out" "map:$map#memset: each layer zeroes its output buffer (separated by: memset count"
contains "$out" "$h1 refuted on map $map — five memsets"
contains "$out" "tests $h2"
expect_rc 0 "$CKO" report --root "$A" --format md
contains "$out" "## Competing hypotheses"
contains "$out" "refuted \`$h1\`"
contains "$out" "; answers: $question"
expect_rc 0 "$CKO" report --root "$A" --out "$tmp/report.html"
contains "$(cat "$tmp/report.html")" "<section id=\"hypotheses\">"
expect_rc 0 "$CKO" handoff --root "$A"
contains "$out" "## Open hypotheses by bottleneck"
contains "$out" "open \`$h2\`: the allocator zeroes fresh blocks — **separated by:** memsets only in the first window; tested by \`$tester\`"
contains "$out" "settled rivals: \`$h1\` refuted"

# Every record against the JSON Schemas; fsck finds the store sound.
py=""
for p in ${CKO_SCHEMA_PYTHON:-} /usr/bin/python3 python3; do
  if "$p" -c 'import jsonschema' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || fail "no python3 with jsonschema (install python3-jsonschema: scripts/deps.sh)"
expect_rc 0 "$py" "$repo/tests/schemas/validate_store.py" "$A"
contains "$out" "hypothesis-v1"
contains "$out" "hypothesis-settlement-v1"
expect_rc 0 "$CKO" fsck --root "$A"
echo "hypotheses: ok"
