#!/usr/bin/env bash
# Compiler evidence end to end: cko ptxas, cko sass (text, binary through a stand-in cuobjdump,
# diff), cko triton, on the fixtures of tests/fixtures/compiler/; errors name the fix.
. "$(dirname "$0")/lib.sh"
here="$(cd "$(dirname "$0")" && pwd)"
fx="$(cd "$(dirname "$0")/../fixtures/compiler" && pwd)"
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

# ptxas -v of the H200 build: three kernels, registers per kernel, no spills.
expect_rc 0 "$CKO" ptxas "$fx/ptxas_v.txt"
contains "$out" "scale_vec4                   sm_90       18"
expect_rc 0 "$CKO" ptxas "$fx/ptxas_v.txt" --json
[ "$(printf '%s' "$out" | field 'd["format_version"]')" = cko/ptxas-report-v1 ] || fail "ptxas format_version"
[ "$(printf '%s' "$out" | field '[f["registers"] for f in d["functions"]]')" = "[32, 18, 12]" ] || fail "registers: $out"
[ "$(printf '%s' "$out" | field 'sum(f["spill_stores_bytes"] + f["spill_loads_bytes"] for f in d["functions"])')" = 0 ] || fail "spills"
expect_rc 0 "$CKO" ptxas "$fx/spill.sm_90.ptxas.txt" --json
[ "$(printf '%s' "$out" | field '[x["value"] for x in d["functions"][0]["facts"] if x["id"]=="ptxas.spill_stores_bytes"]')" = "[276.0]" ] || fail "spill fact: $out"

# cuobjdump -res-usage of a built fatbin goes through the same verb.
expect_rc 0 "$CKO" ptxas "$fx/mix.multi.res-usage.txt" --json
[ "$(printf '%s' "$out" | field 'd["source"]["dialect"] + " " + str(len(d["functions"])) + " " + str(d["functions"][2]["registers"])')" = "cuobjdump-res-usage 8 14" ] || fail "res-usage: $out"

# SASS text: scale_vec4 has the 128-bit loads; an sm_90a wgmma kernel has HGMMA (both dialects).
expect_rc 0 "$CKO" sass "$fx/vec.sass" --json
[ "$(printf '%s' "$out" | field '[k["signatures"]["ldg_128"] for k in d["kernels"]]')" = "[0, 1, 0]" ] || fail "ldg_128: $out"
for f in wgmma.sm_90a.cuobjdump.sass wgmma.sm_90a.nvdisasm.sass; do
  expect_rc 0 "$CKO" sass "$fx/$f" --json
  [ "$(printf '%s' "$out" | field 'd["kernels"][0]["arch"] + " " + str(d["kernels"][0]["signatures"]["hgmma"])')" = "sm_90a 1" ] || fail "$f: no HGMMA on sm_90a"
done

# A binary goes through cuobjdump: missing, it is a tool error with the fixes; present (a stand-in
# printing the dump the real one printed on the H200), it is parsed.
expect_rc 3 "$CKO" sass "$fx/wgmma.sm_90a.cubin" --cuobjdump /nonexistent/cuobjdump
contains "$err" "pass --cuobjdump PATH"
printf '#!/bin/sh\n[ "$1" = --version ] && { echo "Cuda compilation tools, release 13.0, V13.0.85"; exit 0; }\ncat "%s"\n' \
  "$fx/wgmma.sm_90a.cuobjdump.sass" > "$tmp/cuobjdump"
chmod +x "$tmp/cuobjdump"
expect_rc 0 "$CKO" sass "$fx/wgmma.sm_90a.cubin" --cuobjdump "$tmp/cuobjdump" --json
[ "$(printf '%s' "$out" | field 'd["input_kind"] + " " + d["source"]["tool_version"] + " " + str(d["kernels"][0]["signatures"]["hgmma"])')" = "binary 13.0.85 1" ] || fail "binary path: $out"

# diff: the same build in the two dialects differs in nothing; other architectures are listed.
expect_rc 0 "$CKO" sass diff "$fx/mix.sm_80.cuobjdump.sass" "$fx/mix.sm_80.nvdisasm.sass" --json
[ "$(printf '%s' "$out" | field 'sum(len(k["opcodes"]) + len(k["signatures"]) for k in d["kernels"])')" = 0 ] || fail "dialect diff not empty: $out"
expect_rc 0 "$CKO" sass diff "$fx/mix.sm_80.cuobjdump.sass" "$fx/mix.multi.cuobjdump.sass"
contains "$out" "only in B: mma_f16 [sm_100a]"

# A kernel in an anonymous namespace (as nvcc names one declared in an unnamed namespace): the
# tables print its name, not the empty text before "(anonymous namespace)"'s parenthesis.
sed 's/_Z9eval_polyPKfS0_Pfi/_ZN12_GLOBAL__N_19eval_polyEPKfS1_Pfi/g' "$fx/callee.sm_89.cuobjdump.sass" > "$tmp/anon.sass"
expect_rc 0 "$CKO" sass "$tmp/anon.sass"
contains "$out" "(anonymous namespace)::eval~ sm_89"
expect_rc 0 "$CKO" sass diff "$fx/callee.sm_89.cuobjdump.sass" "$tmp/anon.sass"
contains "$out" "only in B: (anonymous namespace)::eval_poly [sm_89]"

# Triton cache: num_warps, num_stages, shared memory and target per kernel.
expect_rc 0 "$CKO" triton "$fx/triton-cache" --no-sass --json
[ "$(printf '%s' "$out" | field '[(k["name"], k["num_warps"], k["num_stages"], k["shared_bytes"], k["arch"]) for k in d["kernels"]]')" = \
  "[('add_kernel', 4, 2, 0, 'sm_90'), ('matmul_kernel', 8, 4, 65536, 'sm_80')]" ] || fail "triton: $out"

# Every document validates against its schema (schemas/<format>.json, the real jsonschema); one
# with an architecture outside the sm_NN[x] shape does not.
py=""
for p in ${CKO_SCHEMA_PYTHON:-} /usr/bin/python3 python3; do
  if "$p" -c 'import jsonschema' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || fail "no python3 with jsonschema (install python3-jsonschema: scripts/deps.sh)"
"$CKO" ptxas "$fx/mix.multi.ptxas.txt" --json > "$tmp/d1.json"
"$CKO" sass "$fx/mix.multi.cuobjdump.sass" --json > "$tmp/d2.json"
"$CKO" sass diff "$fx/vec.sass" "$fx/mix.sm_80.nvdisasm.sass" --json > "$tmp/d3.json"
"$CKO" triton "$fx/triton-cache" --cuobjdump "$tmp/cuobjdump" --json > "$tmp/d4.json"
[ "$(field 'd["kernels"][0]["sass"]["input_kind"]' < "$tmp/d4.json")" = binary ] || fail "triton cubin not through SASS"
expect_rc 0 "$py" "$here/../schemas/validate_store.py" --document "$tmp/d1.json" --document "$tmp/d2.json" \
  --document "$tmp/d3.json" --document "$tmp/d4.json"
contains "$out" "ok: 4 documents checked"
sed 's/"sm_100a"/"sm_100aa"/' "$tmp/d2.json" > "$tmp/bad.json"
expect_rc 1 "$py" "$here/../schemas/validate_store.py" --document "$tmp/bad.json"
contains "$out" "sm_100aa"

# --root [--experiment --subject]: the document is kept as a profile record, with the tool version
# and the SHA-256 of each file it came from (a ptxas log states no version: --tool-version).
ex="$(cd "$here/../../examples/cpu-saxpy" && pwd)"
saxpy_target "$tmp/t" "$ex/original"
expect_rc 0 "$CKO" target freeze --spec "$tmp/t/cko.toml" --root "$tmp/t/art"
expect_rc 0 "$CKO" experiment new --root "$tmp/t/art" --candidate "$ex/candidate" --hypothesis h --mechanism m \
  --failure-closes mechanism --no-falsifier-reason none --json
exp=$(printf '%s' "$out" | field 'd["id"]')
root="$tmp/t/art"
expect_rc 0 "$CKO" ptxas "$fx/ptxas_v.txt" --tool-version 13.0.88 --root "$root" --experiment "$exp" --subject candidate --json
printf '%s' "$out" > "$tmp/ptxas-stored.json"
expect_rc 0 "$CKO" sass "$fx/wgmma.sm_90a.cubin" --cuobjdump "$tmp/cuobjdump" --root "$root" --experiment "$exp" \
  --subject candidate --json
printf '%s' "$out" > "$tmp/sass-stored.json"
expect_rc 0 "$CKO" triton "$fx/triton-cache" --no-sass --root "$root" --experiment "$exp" --subject reference --json
printf '%s' "$out" > "$tmp/triton-stored.json"
python3 - "$root" "$fx" "$tmp/ptxas-stored.json" "$tmp/sass-stored.json" "$tmp/triton-stored.json" <<'PY'
import hashlib, json, os, sys
root, fx = sys.argv[1], sys.argv[2]
sha = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
records = {}
for printed in map(lambda p: json.load(open(p)), sys.argv[3:]):
    r = json.load(open(os.path.join(root, printed["stored"]["path"])))
    printed.pop("stored")
    assert r["document"] == printed and r["foreign"] is False, r["kind"]
    records[r["kind"]] = r
p = records["ptxas"]["sources"]
assert [(s["tool"], s["tool_version"], s["report_sha256"]) for s in p] == [("ptxas", "13.0.88", sha(f"{fx}/ptxas_v.txt"))], p
s = records["sass"]["sources"]
assert [(x["tool"], x["tool_version"], x["report_sha256"]) for x in s] == [("cuobjdump", "13.0.85", sha(f"{fx}/wgmma.sm_90a.cubin"))], s
t = records["triton"]["sources"]
# The real cache's kernel states its Triton version; the hand-written one does not.
assert {x["tool_version"] for x in t if "TAICAZ" in x["path"]} == {"3.6.0"}, t
assert {x["tool_version"] for x in t if "HANDWRITTEN" in x["path"]} == {""}, t
assert all(x["report_sha256"] == sha(x["path"]) for x in t), t
assert {x["dialect"] for x in t} >= {"triton-metadata", "triton-cubin", "triton-ptx"}, t
PY
expect_rc 2 "$CKO" ptxas "$fx/ptxas_v.txt" --experiment "$exp" --subject candidate
contains "$err" "need --root"
expect_rc 0 "$CKO" history --root "$root"
contains "$out" "ptxas of ptxas_v.txt (sha256 $(sha256sum "$fx/ptxas_v.txt" | cut -c1-12))"
expect_rc 0 "$py" "$here/../schemas/validate_store.py" "$root" --document "$tmp/ptxas-stored.json" \
  --document "$tmp/sass-stored.json" --document "$tmp/triton-stored.json"

# Wrong inputs say what to pass instead.
expect_rc 2 "$CKO" ptxas "$fx/vec.sass"
contains "$err" "-Xptxas -v"
expect_rc 2 "$CKO" sass "$fx/ptxas_v.txt"
contains "$err" "cuobjdump --dump-sass"
expect_rc 2 "$CKO" triton "$fx/../ncu"
contains "$err" "TRITON_CACHE_DIR"
expect_rc 2 "$CKO" sass
contains "$err" "FILE is required"
exit 0
