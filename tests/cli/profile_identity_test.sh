#!/usr/bin/env bash
# Issue [18] item 4, evidence identity: a profile bound to a Target (--root --experiment) carries a
# tool version within the tested ranges and a device the Target has, or it is refused
# (environment_mismatch, tool_version_unknown); --foreign keeps it as foreign evidence that no claim
# may cite; a standalone read still reads it, with a note naming what is unknown.
. "$(dirname "$0")/lib.sh"
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
count() { ls "$1" 2>/dev/null | wc -l; }
ncu=tests/fixtures/ncu/ncu_raw.csv          # a real H200 raw page; it does not state its NCU version
torch=tests/fixtures/torch/torch_trace.json # a real H200 trace (torch 2.11); traces state no version
ex="$(cd examples/cpu-saxpy && pwd)"

new_target() {  # new_target DIR [SPEC LINES]: a frozen cpu-saxpy Target with one experiment; sets $exp
  saxpy_target "$1" "$ex/original"
  [ -z "${2:-}" ] || printf '%s\n' "$2" >> "$1/cko.toml"
  expect_rc 0 "$CKO" target freeze --spec "$1/cko.toml" --root "$1/art"
  expect_rc 0 "$CKO" experiment new --root "$1/art" --candidate "$ex/candidate" --hypothesis h --mechanism m \
    --failure-closes mechanism --no-falsifier-reason none --json
  exp=$(printf '%s' "$out" | field 'd["id"]')
}

# --- a CPU-only Target: no GPU export is its evidence -------------------------------------------
new_target "$tmp/cpu"
cpu="$tmp/cpu/art"
expect_rc 3 "$CKO" profile ncu "$ncu" --root "$cpu" --experiment "$exp" --subject candidate --tool-version 2025.3.1.0 --json
printf '%s' "$out" | python3 -c '
import json, sys
e = json.load(sys.stdin)["error"]
assert e["code"] == "environment_mismatch" and e["details"]["field"] == "device", e
assert "made on NVIDIA H200 (compute capability 9.0)" in e["message"] and "has no GPU" in e["message"], e["message"]
assert "--foreign" in e["details"]["fix"], e["details"]'
[ "$(count "$cpu/profiles")" -eq 0 ] || fail "a refused profile was stored"
# Without a version both problems are named; the device decides the code.
expect_rc 3 "$CKO" profile ncu "$ncu" --root "$cpu" --experiment "$exp" --subject candidate
contains "$err" "error[environment_mismatch]"
contains "$err" "the NCU version is not stated"

# --foreign keeps it, recorded as foreign with the reasons, and nothing may cite it.
expect_rc 0 "$CKO" profile ncu "$ncu" --root "$cpu" --experiment "$exp" --subject candidate --foreign --json
printf '%s' "$out" > "$tmp/foreign.json"
foreign_id=$(field 'd["stored"]["id"]' < "$tmp/foreign.json")
python3 - "$tmp/foreign.json" "$cpu/profiles/$foreign_id.json" <<'PY'
import json, sys
printed, record = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert printed["stored"]["foreign"] is True and len(printed["stored"]["foreign_reasons"]) == 2, printed["stored"]
assert record["foreign"] is True and record["foreign_reasons"] == printed["stored"]["foreign_reasons"], record
assert any("NVIDIA H200" in r for r in record["foreign_reasons"]), record["foreign_reasons"]
assert any("NCU version is not stated" in r for r in record["foreign_reasons"]), record["foreign_reasons"]
assert record["identity"]["devices"] == [{"name": "NVIDIA H200", "compute_capability": "9.0"}], record["identity"]
assert record["identity"]["target_devices"] == [], record["identity"]
PY
expect_rc 0 "$CKO" profile ncu "$ncu" --root "$cpu" --experiment "$exp" --subject candidate --foreign
contains "$out" "kept as foreign evidence (no claim may cite it): the export was made on NVIDIA H200"
n0=$(count "$cpu/invocations")
expect_rc 2 "$CKO" experiment falsify "$exp" --root "$cpu" --outcome falsified --evidence "$foreign_id"
contains "$err" "evidence: $foreign_id is foreign evidence"
[ "$(count "$cpu/invocations")" -eq "$n0" ] || fail "a falsify citing foreign evidence left an invocation"
# The same refusal through --request (the object an MCP call takes).
printf '{"file": "%s", "root": "%s", "experiment": "%s", "subject": "reference"}' "$ncu" "$cpu" "$exp" > "$tmp/req.json"
expect_rc 3 "$CKO" profile ncu --request "$tmp/req.json"
contains "$err" "error[environment_mismatch]"
expect_rc 0 "$CKO" fsck --root "$cpu"
expect_rc 0 python3 tests/schemas/validate_store.py "$cpu"

# --- a Target on the H200 the exports were made on: the version decides ---------------------------
use_fake_h200
new_target "$tmp/gpu" $'[resources]\ngpus = "auto"'
gpu="$tmp/gpu/art"
expect_rc 2 "$CKO" profile ncu "$ncu" --root "$gpu" --experiment "$exp" --subject candidate --tool-version 1999.9 --json
printf '%s' "$out" | python3 -c '
import json, sys
e = json.load(sys.stdin)["error"]
assert e["code"] == "tool_version_unknown" and e["details"]["field"] == "tool_version", e
assert e["details"]["seen"] == "1999.9" and e["details"]["expected"] == "2020.1.x, 2025.3.x", e["details"]
assert "NCU 1999.9 is outside the versions cko was tested on (2020.1.x, 2025.3.x)" in e["message"], e["message"]
assert "--foreign" in e["message"] and "--tool-version" in e["message"], e["message"]'
expect_rc 2 "$CKO" profile ncu "$ncu" --root "$gpu" --experiment "$exp" --subject candidate
contains "$err" "error[tool_version_unknown]"
contains "$err" "the NCU version is not stated (cko was tested on 2020.1.x, 2025.3.x)"
contains "$err" "pass --tool-version VERSION"
[ "$(count "$gpu/profiles")" -eq 0 ] || fail "a refused profile was stored"
# Read standalone, the same export is read, with a note naming what is unknown.
expect_rc 0 "$CKO" profile ncu "$ncu"
contains "$out" "7 launches (NCU version not stated"
contains "$out" "note: the NCU version is not stated (cko was tested on 2020.1.x, 2025.3.x): read anyway"
expect_rc 0 "$CKO" profile ncu "$ncu" --tool-version 1999.9 --json
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert any("NCU 1999.9 is outside the versions cko was tested on" in n for n in d["notes"]), d["notes"]'
# With a tested version it is the Target's own evidence, and citable.
expect_rc 0 "$CKO" profile ncu "$ncu" --root "$gpu" --experiment "$exp" --subject candidate --tool-version 2025.3.1.0 --json
own_id=$(printf '%s' "$out" | field 'd["stored"]["id"]')
printf '%s' "$out" | python3 -c 'import json,sys; s = json.load(sys.stdin)["stored"]; assert "foreign" not in s, s'
python3 -c 'import json,sys; r = json.load(open(sys.argv[1])); assert r["foreign"] is False, r' "$gpu/profiles/$own_id.json"
expect_rc 0 "$CKO" experiment falsify "$exp" --root "$gpu" --outcome survived --evidence "$own_id"

# nsys: the release and the export schema are both checked; a schema past the tested ones is refused
# bound and noted read standalone.
expect_rc 0 "$CKO" profile nsys tests/fixtures/nsys/vec.sqlite --root "$gpu" --experiment "$exp" --subject reference
contains "$out" "stored as profile-"
python3 - tests/fixtures/nsys/schema_3_24_14.sql "$tmp/s326.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[2])
db.executescript(open(sys.argv[1]).read().replace("'3.24.14'", "'3.26.0'"))
db.commit()
PY
expect_rc 2 "$CKO" profile nsys "$tmp/s326.sqlite" --root "$gpu" --experiment "$exp" --subject reference
contains "$err" "error[tool_version_unknown]"
contains "$err" "Nsight Systems export schema 3.26.0 is outside the versions cko was tested on (3.1.7 - 3.25.x)"
expect_rc 0 "$CKO" profile nsys "$tmp/s326.sqlite"
contains "$out" "note: Nsight Systems export schema 3.26.0 is outside the versions cko was tested on"
expect_rc 2 "$CKO" profile nsys tests/fixtures/nsys/vec.sqlite --tool-version 2026.1.1
contains "$err" "states Nsight Systems 2025.3.2.0"

# torch: a trace states no version; bound it needs a tested one.
expect_rc 2 "$CKO" profile torch "$torch" --root "$gpu" --experiment "$exp" --subject reference
contains "$err" "the torch version is not stated (cko was tested on 1.8 - 1.9.x, 2.11.x)"
expect_rc 2 "$CKO" profile torch "$torch" --root "$gpu" --experiment "$exp" --subject reference --tool-version 2.5.1
contains "$err" "torch 2.5.1 is outside the versions cko was tested on"
expect_rc 0 "$CKO" profile torch "$torch" --root "$gpu" --experiment "$exp" --subject reference --tool-version 2.11.0
contains "$out" "stored as profile-"
expect_rc 0 "$CKO" profile torch "$torch"
contains "$out" "note: the torch version is not stated"
expect_rc 2 "$CKO" profile torch "$torch" --foreign
contains "$err" "need --root"
expect_rc 0 "$CKO" fsck --root "$gpu"
python3 tests/schemas/validate_store.py "$gpu" || fail "records invalid"
echo "profile identity: ok"
