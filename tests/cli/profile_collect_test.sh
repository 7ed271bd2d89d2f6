#!/usr/bin/env bash
# `cko profile collect ncu|nsys|torch --root R --experiment EXP --subject S [--case C]`: one driver
# call of an experiment's subject (its frozen snapshot) under a profiler, through the invocation
# runtime; the output imported and kept as a profile record bound to the experiment, subject, case
# and invocation. ncu and nsys are stand-ins (tests/cli/profilers/: they run the driver and leave
# copies of real exports); torch is a driver that writes a real trace fixture, and the Python SDK's
# own torch.profiler with this host's torch. Also `cko profile ncu FILE --root`.
. "$(dirname "$0")/lib.sh"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
count() { ls "$1" 2>/dev/null | wc -l; }

# The Targets measure on one (fake NVML) H200, the GPU the real exports the stand-ins hand back
# were made on: a profile is bound only to a Target with the device it names.
use_fake_h200

ex="$(cd examples/cpu-saxpy && pwd)"
t="$tmp/t"; root="$t/art"
saxpy_target "$t" "$ex/original"
printf '[resources]\ngpus = "auto"\n' >> "$t/cko.toml"
expect_rc 0 "$CKO" target freeze --spec "$t/cko.toml" --root "$root"
expect_rc 0 "$CKO" experiment new --root "$root" --candidate "$ex/candidate" --hypothesis "rows are contiguous" \
  --mechanism loop-order --failure-closes mechanism --no-falsifier-reason none --json
exp=$(printf '%s' "$out" | field 'd["id"]')
base_digest=$(printf '%s' "$out" | field 'd["base"]["digest"]')
cand_digest=$(printf '%s' "$out" | field 'd["candidate"]["digest"]')

# The stand-in profilers come first on PATH, each beside the real export it hands back.
bin="$tmp/bin"; mkdir -p "$bin"
cp tests/cli/profilers/ncu tests/cli/profilers/nsys tests/fixtures/ncu/ncu_raw.csv tests/fixtures/nsys/vec.sqlite "$bin/"
export PATH="$bin:$PATH"

# --- ncu around one call of the candidate -------------------------------------------------------
expect_rc 0 "$CKO" profile collect ncu --root "$root" --experiment "$exp" --subject candidate \
  --ncu-arg=--set --ncu-arg=full --ncu-arg=--launch-count=20 --json
printf '%s' "$out" > "$tmp/ncu.json"
contains "$(cat "$bin/argv.log")" "--version"
python3 - "$tmp/ncu.json" "$root" "$exp" "$cand_digest" "$bin/argv.log" <<'PY'
import hashlib, json, os, sys
printed, root, exp, digest, log = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
assert printed["format_version"] == "cko/ncu-report-v3" and len(printed["launches"]) == 7, printed.keys()
stored = printed.pop("stored")
c = stored["collection"]
inv = c["invocation_id"]
assert c["tool"] == "ncu" and c["tool_version"] == "2025.3.1.0" and c["call"] == 1 and c["case_id"] == "small", c
assert c["subject_label"] == exp and c["subject_digest"] == digest and c["subject_correct"] is True, c
assert c["tool_args"] == ["--set", "full", "--launch-count", "20"], c["tool_args"]
assert c["argv"][1:4] == ["--export", f"{root}/invocations/{inv}/profile/report", "--force-overwrite"], c["argv"]
files = {f["path"]: f for f in c["files"]}
csv = f"invocations/{inv}/profile/ncu-raw.csv"
assert set(files) >= {f"invocations/{inv}/profile/report.ncu-rep", csv}, files
fixture = hashlib.sha256(open("tests/fixtures/ncu/ncu_raw.csv", "rb").read()).hexdigest()
assert files[csv]["sha256"] == fixture, files[csv]
# The record: the printed document, bound to the experiment, the subject and the collection.
r = json.load(open(os.path.join(root, stored["path"])))
assert r["kind"] == "ncu" and r["experiment_id"] == exp and r["subject"] == "candidate", r["kind"]
assert r["document"] == printed, "the stored document is not the printed one"
assert r["collection"] == c and r["sources"][0]["report_sha256"] == fixture, r["sources"]
assert r["sources"][0]["tool_version"] == "2025.3.1.0", r["sources"]
# The invocation: kind profile, succeeded, names the record; one driver call of the candidate's
# snapshot, one sample, mode single, no `profile` request field (ncu wraps the driver instead).
res = json.load(open(f"{root}/invocations/{inv}/result.json"))
assert res["kind"] == "profile" and res["state"] == "succeeded", res
assert res["outputs"]["profile"]["id"] == stored["id"] and res["cost"]["driver_calls"] == 1, res["outputs"]
req = json.load(open(f"{root}/invocations/{inv}/driver/0001/request.json"))
assert req["mode"] == "single" and req["samples"] == 1 and "profile" not in req, req
assert [s["role"] for s in req["subjects"]] == ["candidate"], req["subjects"]
assert req["subjects"][0]["path"] == f"{root}/invocations/{inv}/workspace/candidate", req["subjects"]
# What ncu was given: its options, then the Target's driver argv and --request.
run = [l for l in open(log) if l.startswith("--export ")][-1].split()
assert run[:6] == ["--export", f"{root}/invocations/{inv}/profile/report", "--force-overwrite", "--set", "full",
                   "--launch-count"], run
assert run[-2:] == ["--request", f"{root}/invocations/{inv}/driver/0001/request.json"], run
assert run[7].endswith("examples/cpu-saxpy/build/driver_cpp"), run
# The workspace is gone; the profiler's files are ledgered.
assert not os.path.exists(f"{root}/invocations/{inv}/workspace")
ledger = [json.loads(l)["path"] for l in open(f"{root}/ledger.jsonl")]
assert all(p in ledger for p in files), files
PY
ncu_id=$(field 'd["stored"]["id"]' < "$tmp/ncu.json")
ncu_inv=$(field 'd["stored"]["collection"]["invocation_id"]' < "$tmp/ncu.json")

# --- nsys around one call of the reference (the experiment's base: the original) ----------------
# --question: the one question the profile is meant to answer, kept in the record and the request.
expect_rc 0 "$CKO" profile collect nsys --root "$root" --experiment "$exp" --subject reference \
  --nsys-arg=--trace=cuda,nvtx --case small --question "Where does the reference spend its GPU time?" --json
printf '%s' "$out" > "$tmp/nsys.json"
python3 - "$tmp/nsys.json" "$root" "$base_digest" <<'PY'
import hashlib, json, sys
printed, root, digest = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
assert printed["format_version"] == "cko/profile-nsys-v1", printed["format_version"]
kern = printed["reports"]["cuda_gpu_kern_sum"]
assert {row["name"] for row in kern["rows"]} >= {"sgemm_naive(const float *, const float *, float *, int)"}, kern
stored = printed.pop("stored")
c = stored["collection"]
assert c["tool"] == "nsys" and c["tool_version"].startswith("2025.3.2") and c["subject_label"] == "original", c
assert c["subject_digest"] == digest and c["tool_args"] == ["--trace", "cuda,nvtx"], c
inv = c["invocation_id"]
assert c["argv"][1:8] == ["profile", "--output", f"{root}/invocations/{inv}/profile/report", "--export", "sqlite",
                          "--force-overwrite", "true"], c["argv"]
r = json.load(open(f"{root}/{stored['path']}"))
assert r["kind"] == "nsys" and r["subject"] == "reference" and r["document"] == printed, r["kind"]
assert stored["question"] == r["question"] == "Where does the reference spend its GPU time?", (stored, r)
assert json.load(open(f"{root}/invocations/{inv}/request.json"))["request"]["question"] == r["question"]
fixture = hashlib.sha256(open("tests/fixtures/nsys/vec.sqlite", "rb").read()).hexdigest()
assert r["sources"][0]["report_sha256"] == fixture, r["sources"]
req = json.load(open(f"{root}/invocations/{inv}/driver/0001/request.json"))
assert [s["role"] for s in req["subjects"]] == ["reference"] and req["case"]["id"] == "small", req
PY
nsys_id=$(field 'd["stored"]["id"]' < "$tmp/nsys.json")

# --- an NCU export imported into the store (cko profile ncu FILE --root) ------------------------
# The export does not state its NCU version: bound to an experiment it needs --tool-version.
expect_rc 0 "$CKO" profile ncu tests/fixtures/ncu/ncu_raw.csv --root "$root" --experiment "$exp" --subject reference \
  --tool-version 2025.3.1.0 --json
file_id=$(printf '%s' "$out" | field 'd["stored"]["id"]')
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert "collection" not in d["stored"] and len(d["launches"]) == 7, d["stored"]'
python3 -c 'import json,sys; r = json.load(open(sys.argv[1])); assert r["kind"] == "ncu" and "collection" not in r, r' \
  "$root/profiles/$file_id.json"
expect_rc 0 "$CKO" profile ncu tests/fixtures/ncu/ncu_raw.csv --root "$root" --experiment "$exp" --subject reference \
  --tool-version 2025.3.1.0
contains "$out" "stored as $file_id"   # the same evidence is the same record
expect_rc 3 "$CKO" profile ncu tests/fixtures/ncu/ncu_counters_not_permitted.txt --root "$root"
contains "$out" "not stored: the export holds no counters"
expect_rc 2 "$CKO" profile ncu tests/fixtures/ncu/ncu_raw.csv --experiment "$exp" --subject reference
contains "$err" "need --root"
[ "$(count "$root/profiles")" -eq 3 ] || fail "expected 3 profiles: $(ls "$root/profiles")"

# History and report list each profile with how it was taken.
expect_rc 0 "$CKO" history --root "$root"
contains "$out" "$ncu_id ncu of ncu-raw.csv"
contains "$out" "for $exp candidate, collected by $ncu_inv (case small, ncu 2025.3.1.0)"
contains "$out" "$nsys_id nsys of report.sqlite"
contains "$out" "$file_id ncu of ncu_raw.csv"
expect_rc 0 "$CKO" report --root "$root" --format md --out "$tmp/report.md"
contains "$(cat "$tmp/report.md")" "\`$ncu_id\`: ncu of"
contains "$(cat "$tmp/report.md")" "collected by \`$ncu_inv\` on case \`small\`"
expect_rc 0 "$CKO" ls --root "$root"
contains "$out" "$ncu_inv"

# --- bad input: each error names its field, and nothing runs ------------------------------------
invocations=$(count "$root/invocations")
bad() {  # bad FIELD TEXT ARGS...: exit 2, the message holds TEXT, the JSON error names FIELD
  local want=$1 text=$2; shift 2
  expect_rc 2 "$CKO" profile collect "$@" --json
  contains "$err" "$text"
  printf '%s' "$out" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
got = doc["error"]["details"].get("field")
assert got == sys.argv[1], (got, doc["error"])' "$want"
}
bad subject "use reference (the experiment's base) or candidate" ncu --root "$root" --experiment "$exp" --subject both
bad subject "--subject is required" nsys --root "$root" --experiment "$exp"
bad experiment "no experiment exp-0000000000000000" ncu --root "$root" --experiment exp-0000000000000000 --subject candidate
bad experiment "--experiment is required" torch --root "$root" --subject candidate
bad case "'large' is not a case of the Target; its cases: small" nsys --root "$root" --experiment "$exp" --subject candidate --case large
bad ncu "--ncu $tmp/no-ncu is not an executable file" ncu --root "$root" --experiment "$exp" --subject candidate --ncu "$tmp/no-ncu"
bad nsys "nsys-not-installed (Nsight Systems) was not found on PATH" nsys --root "$root" --experiment "$exp" \
  --subject candidate --nsys nsys-not-installed
contains "$err" "install Nsight Systems, or pass --nsys /path/to/nsys"
bad ncu_arg "'--export=/tmp/x' is not an option cko passes to ncu" ncu --root "$root" --experiment "$exp" \
  --subject candidate --ncu-arg=--export=/tmp/x
bad nsys_arg "'--trace' needs a value" nsys --root "$root" --experiment "$exp" --subject candidate --nsys-arg=--trace
bad nsys_arg "'--trace' needs a value" nsys --root "$root" --experiment "$exp" --subject candidate --nsys-arg=--trace \
  --nsys-arg=--sample=none
bad command "not both" ncu --root "$root" --experiment "$exp" --subject candidate -- true
bad root "name its artifact root with --root" ncu --experiment "$exp" --subject candidate
[ "$(count "$root/invocations")" -eq "$invocations" ] || fail "a refused request created an invocation"

# --- a failing profiler: the invocation says why, no profile is kept, the store stays whole -----
profiles=$(count "$root/profiles")
failed() {  # failed RC TEXT TOOL: the collection fails with RC naming TEXT
  expect_rc "$1" "$CKO" profile collect "$3" --root "$root" --experiment "$exp" --subject candidate --json
  contains "$err" "$2"
  local inv
  inv=$(printf '%s' "$out" | field 'd["error"]["details"]["invocation_id"]')
  python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["kind"] == "profile" and r["state"] == "failed" and "profile" not in r["outputs"], r' \
    "$root/invocations/$inv/result.json"
  [ "$(count "$root/profiles")" -eq "$profiles" ] || fail "a failed $3 collection left a profile record"
}
echo fail > "$bin/mode"
failed 3 "the profiled call (ncu around the driver) failed: the driver exited with status 1" ncu
contains "$err" "could not be launched"
echo noperm > "$bin/mode"
failed 3 "ncu was refused the GPU performance counters (ERR_NVGPUCTRPERM): nothing was profiled" ncu
contains "$err" "cko never changes driver settings"
echo empty-import > "$bin/mode"
failed 2 "empty" ncu
echo no-export > "$bin/mode"
failed 3 "nsys ended without writing $root/invocations/" nsys
# An ncu of an untested version is refused before any profiled call: no invocation, no driver run
# (before, the call ran under ncu and the profile was refused only when it was stored).
echo old-version > "$bin/mode"
invocations=$(count "$root/invocations"); : > "$bin/argv.log"
expect_rc 2 "$CKO" profile collect ncu --root "$root" --experiment "$exp" --subject candidate
contains "$err" "error[tool_version_unknown]"
contains "$err" "nothing was profiled"
[ "$(count "$root/invocations")" -eq "$invocations" ] || fail "an untested ncu still started an invocation"
[ "$(cat "$bin/argv.log")" = "--version" ] || fail "an untested ncu still ran the driver: $(cat "$bin/argv.log")"
rm "$bin/mode"
expect_rc 0 "$CKO" fsck --root "$root"
expect_rc 0 python3 tests/schemas/validate_store.py "$root"

# The diagnostic form is unchanged: ncu around any command, outside any store.
expect_rc 0 "$CKO" profile collect ncu --out "$tmp/free" -- true
contains "$out" "7 launches (NCU 2025.3.1.0"
[ -f "$tmp/free/ncu-raw.csv" ] || fail "the diagnostic form kept no export"

# --- torch: the request asks the driver for a trace ---------------------------------------------
# A python with torch drives the SDK part when there is one (Debian's python3-torch is /usr/bin's).
py=$(command -v python3)
for cand in python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null && "$cand" -c 'import torch' 2>/dev/null; then py=$(command -v "$cand"); break; fi
done
tt="$tmp/tt"; troot="$tt/art"
mkdir -p "$tt/original" "$tt/cases"
echo "print('v0')" > "$tt/original/model.py"
echo '{}' > "$tt/cases/main.json"
echo trace > "$tt/profile_mode"
cat > "$tt/cko.toml" <<TOML
[target]
name = "torch-profile"
claim_layer = "kernel"
original = "original"
change_scope = ["original/model.py"]
[cases]
dir = "cases"
ids = ["main"]
[driver]
argv = ["$py", "$repo/tests/cli/profile_driver.py"]
capabilities = ["single_subject"]
env_allow = ["PATH", "TMPDIR", "HOME"]
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
max_pairs = 8
samples_per_call = 3
[limits]
command_timeout_s = 120
operation_timeout_s = 600
[resources]
gpus = "auto"
TOML
expect_rc 0 "$CKO" target freeze --spec "$tt/cko.toml" --root "$troot"
mkdir -p "$tmp/cand"; echo "print('v1')" > "$tmp/cand/model.py"
expect_rc 0 "$CKO" experiment new --root "$troot" --candidate "$tmp/cand" --hypothesis h --mechanism m \
  --failure-closes mechanism --no-falsifier-reason none --json
texp=$(printf '%s' "$out" | field 'd["id"]')

expect_rc 0 "$CKO" profile collect torch --root "$troot" --experiment "$texp" --subject candidate --json
printf '%s' "$out" > "$tmp/torch.json"
python3 - "$tmp/torch.json" "$troot" "$texp" <<'PY'
import hashlib, json, sys
printed, root, exp = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
assert printed["format_version"] == "cko/profile-torch-v1", printed["format_version"]
stored = printed.pop("stored")
c = stored["collection"]
inv = c["invocation_id"]
trace = f"{root}/invocations/{inv}/driver/0001/out/torch-trace.json"
# The request the driver got asked for the trace inside its output_dir.
req = json.load(open(f"{root}/invocations/{inv}/driver/0001/request.json"))
assert req["profile"] == {"kind": "torch", "trace_path": trace}, req.get("profile")
assert c["tool"] == "torch" and c["tool_path"] == "" and c["argv"] == [] and c["tool_version"] == "2.11.0", c
assert c["subject_label"] == exp and c["case_id"] == "main", c
fixture = hashlib.sha256(open("tests/fixtures/torch/torch_trace.json", "rb").read()).hexdigest()
assert [f["sha256"] for f in c["files"]] == [fixture], c["files"]
assert c["files"][0]["path"] == f"invocations/{inv}/driver/0001/out/torch-trace.json", c["files"]
r = json.load(open(f"{root}/{stored['path']}"))
assert r["kind"] == "torch" and r["document"] == printed and r["subject"] == "candidate", r["kind"]
assert r["sources"][0]["report_sha256"] == fixture and r["sources"][0]["tool_version"] == "2.11.0", r["sources"]
assert printed["traces"][0]["summary"]["kernels"], "the fixture's kernels were not imported"
PY
# A driver that ignores the request's `profile` leaves no trace: a clear error, no record.
echo ignore > "$tt/profile_mode"
expect_rc 3 "$CKO" profile collect torch --root "$troot" --experiment "$texp" --subject reference
contains "$err" "the driver wrote no torch trace at $troot/invocations/"
contains "$err" "(the Python SDK does; docs/PROTOCOL.md)"
[ "$(count "$troot/profiles")" -eq 1 ] || fail "a collection without a trace left a profile"

# The Python SDK runs torch.profiler for that call: with a Kineto torch the trace is stored; a torch
# without Kineto (Debian's 1.13) or no torch at all is refused in words, and nothing is stored.
echo sdk > "$tt/profile_mode"
# This host's torch is bound only when it is of a tested version (src/cko/profile/tested_versions.cpp).
tested_torch() { "$py" -c 'import re, sys, torch; v = tuple(map(int, re.match(r"(\d+)\.(\d+)", torch.__version__).groups()))
sys.exit(0 if v in ((1, 8), (1, 9), (2, 11)) else 1)'; }
if "$py" -c 'import sys, torch; sys.exit(0 if torch.autograd.kineto_available() else 1)' 2>/dev/null && ! tested_torch; then
  expect_rc 2 "$CKO" profile collect torch --root "$troot" --experiment "$texp" --subject reference
  contains "$err" "error[tool_version_unknown]"
  contains "$err" "is outside the versions cko was tested on"
elif "$py" -c 'import sys, torch; sys.exit(0 if torch.autograd.kineto_available() else 1)' 2>/dev/null; then
  expect_rc 0 "$CKO" profile collect torch --root "$troot" --experiment "$texp" --subject reference --json
  printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["stored"]["collection"]["tool_version"], d["stored"]
names = [a["name"] for a in d["traces"][0]["summary"].get("annotations", [])]
assert any("cko:reference" in n for n in names), names'
elif "$py" -c 'import torch' 2>/dev/null; then
  expect_rc 3 "$CKO" profile collect torch --root "$troot" --experiment "$texp" --subject reference
  contains "$err" "was built without Kineto"
else
  expect_rc 3 "$CKO" profile collect torch --root "$troot" --experiment "$texp" --subject reference
  contains "$err" "request.profile asks for a torch trace, but torch cannot be imported"
fi
expect_rc 0 "$CKO" fsck --root "$troot"
expect_rc 0 python3 tests/schemas/validate_store.py "$troot"
# The printed documents (with `stored` and its collection) follow their schemas.
expect_rc 0 python3 tests/schemas/validate_store.py --document "$tmp/ncu.json" --document "$tmp/nsys.json" \
  --document "$tmp/torch.json"
echo "profile collect: ok"
