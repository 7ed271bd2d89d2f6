#!/usr/bin/env bash
# Knowledge cards end to end: the card files validate against schemas/knowledge-card.json (the
# real jsonschema), and `cko knowledge query` with the H200 identity and the facts of a fixture NCU
# report (and of SASS/ptxas documents) returns the cards whose triggers fire, with reasons.
. "$(dirname "$0")/lib.sh"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
py=""
for p in ${CKO_SCHEMA_PYTHON:-} /usr/bin/python3 python3; do
  if "$p" -c 'import jsonschema' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || fail "no python3 with jsonschema (install python3-jsonschema: scripts/deps.sh)"

# Every card file validates; a broken copy is refused, naming the card and the field.
expect_rc 0 "$py" "$repo/tests/schemas/validate_cards.py" "$repo/knowledge"
n=$(printf '%s' "$out" | sed -n 's/^\([0-9]*\) cards checked.*/\1/p')
[ "${n:-0}" -ge 80 ] || fail "expected at least 80 cards: $out"
mkdir -p "$tmp/bad"
python3 - "$repo/knowledge/tensor-cores.json" "$tmp/bad/t.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
del d["cards"][0]["sources"]
d["cards"][1]["triggers"] = [{"fact": "ncu.x", "op": "=~", "value": 1}]
json.dump(d, open(sys.argv[2], "w"))
PY
expect_rc 1 "$py" "$repo/tests/schemas/validate_cards.py" "$tmp/bad"
contains "$out" "tc.wgmma-needs-sm90a: \$: 'sources' is a required property"
contains "$out" "\$.triggers[0].op: '=~' is not one of"
expect_rc 2 "$CKO" knowledge query --cards "$tmp/bad" --arch sm_90
contains "$err" "tc.wgmma-needs-sm90a.sources: a contract card needs the URL"

# H200 identity + facts of the fixture NCU report: the cards whose triggers fire, with reasons.
"$CKO" profile ncu "$repo/tests/fixtures/ncu/ncu_details.csv" --json > "$tmp/ncu.json" || fail "profile ncu"
expect_rc 0 "$CKO" knowledge query --arch sm_90 --cuda 13.0 --facts "$tmp/ncu.json" --json
printf '%s' "$out" > "$tmp/answer.json"
expect_rc 0 "$py" "$repo/tests/schemas/validate_store.py" --document "$tmp/answer.json"
contains "$out" "knowledge-answer-v1           1 checked"
applicable=$(field '" ".join(c["id"] for c in d["cards"] if c["applicability"] == "applicable")' < "$tmp/answer.json")
for id in memory.dram-roof-is-the-ceiling occ.no-eligible-warps prof.memory-throughput-without-dram; do
  contains " $applicable " " $id "
done
# ... and each applicable card says which trigger fired on which kernel.
reason=$(field '[r for c in d["cards"] if c["id"] == "memory.dram-roof-is-the-ceiling" for r in c["reasons"] if r["status"] == "fired"][0]' < "$tmp/answer.json")
contains "$reason" "ncu.dram.throughput_pct"
contains "$reason" "scale_vec4"
# A card whose trigger facts are absent from the report stays related, never applicable.
[ "$(field '[c["applicability"] for c in d["cards"] if c["id"] == "occ.spills-from-register-cap"][0]' < "$tmp/answer.json")" = related ] \
  || fail "a ptxas-triggered card became applicable from NCU facts"
# Identity: a Hopper-only card is not applicable on Ampere, with the field that fails.
expect_rc 0 "$CKO" knowledge query --arch sm_86 --json
[ "$(printf '%s' "$out" | field '[(c["applicability"], [r["status"] for r in c["reasons"] if r["field"] == "identity.families"]) for c in d["cards"] if c["id"] == "memory.hopper-smem-capacity"][0]')" = "('not_applicable', ['fails'])" ] \
  || fail "hopper card on sm_86: $out"
# sm_90a is Hopper too (no arch list).
expect_rc 0 "$CKO" knowledge query --arch sm_90a --json
[ "$(printf '%s' "$out" | field '[c["applicability"] for c in d["cards"] if c["id"] == "memory.hopper-smem-capacity"][0]')" = applicable ] || fail "sm_90a is not Hopper"

# SASS and ptxas documents feed the same query: a spilling build fires the spill cards.
"$CKO" ptxas "$repo/tests/fixtures/compiler/spill.sm_90.ptxas.txt" --json > "$tmp/ptxas.json" || fail "ptxas"
"$CKO" sass "$repo/tests/fixtures/compiler/spill.sm_90.cuobjdump.sass" --json > "$tmp/sass.json" || fail "sass"
expect_rc 0 "$CKO" knowledge query --arch sm_90 --facts "$tmp/ptxas.json" --facts "$tmp/sass.json"
contains "$out" "[applicable] occ.spills-from-register-cap"
contains "$out" "[applicable] occ.local-memory-in-sass"
contains "$out" "ptxas.spill_stores_bytes = 276 byte in spill_heavy"

# A doctor document gives the identity; a torch version is a framework constraint.
cat > "$tmp/doctor.json" <<'JSON'
{"format_version": "cko/doctor-v1", "identity": {"driver_version": "580.159.03",
 "gpus": [{"compute_capability": "9.0"}], "tools": [{"name": "nvcc", "version": "13.0.88"}]}}
JSON
expect_rc 0 "$CKO" knowledge query --doctor "$tmp/doctor.json" --torch 2.11 --topic pytorch --json
[ "$(printf '%s' "$out" | field 'd["identity"]["arch"] + " " + d["identity"]["cuda"] + " " + d["identity"]["frameworks"]["torch"]')" = "sm_90 13.0.88 2.11" ] || fail "doctor identity: $out"
[ "$(printf '%s' "$out" | field 'd["counts"]["not_applicable"]')" = 0 ] || fail "torch 2.11 cards: $out"

# An empty answer says so and is a success.
expect_rc 0 "$CKO" knowledge query --arch sm_90 --topic no-such-topic
contains "$out" "no card is applicable: that is an answer, not a blocker"
# Bad input names the flag and the fix.
expect_rc 2 "$CKO" knowledge query --arch gfx942
contains "$err" "--arch 'gfx942'"
expect_rc 2 "$CKO" knowledge query --arch sm_90 --cc 8.0
contains "$err" "disagrees"
expect_rc 2 "$CKO" knowledge query --facts "$tmp/doctor.json"
contains "$err" "holds no facts cko reads"
exit 0
