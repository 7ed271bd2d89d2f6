#!/usr/bin/env bash
# cko bundle end to end: a cpu-saxpy loop's root bundled; the same root bundles to the same bytes;
# with the root and the workload deleted, `fsck --bundle` passes and `report --bundle` renders the
# same report and verdicts; a byte changed in a record inside is named; --redact withholds a file
# as a note, not damage; bundle.json and fsck's document validate against their schemas.
. "$(dirname "$0")/lib.sh"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
ex="$repo/examples/cpu-saxpy"
validate="$repo/tests/schemas/validate_store.py"
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
command -v zstd >/dev/null || fail "the zstd tool is missing (scripts/deps.sh installs it)"
py=""
for p in ${CKO_SCHEMA_PYTHON:-} /usr/bin/python3 python3; do
  if "$p" -c 'import jsonschema' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || fail "no python3 with jsonschema (install python3-jsonschema: scripts/deps.sh)"

# ---- A small loop: baseline, a confirmed champion, a kept profile, a stop record.
t="$tmp/t"; A="$t/art"
saxpy_target "$t" "$ex/original"
expect_rc 0 "$CKO" target freeze --spec "$t/cko.toml" --root "$A"
expect_rc 0 "$CKO" baseline --root "$A" --calls-per-case 1 --aa-pairs 6
expect_rc 0 "$CKO" experiment new --root "$A" --candidate "$ex/candidate" --hypothesis "rows are contiguous" \
  --mechanism loop-order --failure-closes mechanism --no-falsifier-reason "known" --json
exp=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 0 "$CKO" screen "$exp" --root "$A"
expect_rc 0 "$CKO" confirm "$exp" --root "$A" --json
conf=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 0 "$CKO" champion select --root "$A" --experiment "$exp" --confirm "$conf"
expect_rc 0 "$CKO" profile nsys "$repo/tests/fixtures/nsys/vec.sqlite" --root "$A"
expect_rc 0 "$CKO" stop --root "$A" --reason "bundle test"
expect_rc 0 "$CKO" handoff --root "$A" --out "$A/handoff.md"
expect_rc 0 "$CKO" report --root "$A" --format md
printf '%s\n' "$out" > "$tmp/root.md"
expect_rc 0 "$CKO" report --root "$A" --format md --json
printf '%s' "$out" | field '[(c["id"], c["verdict"]) for c in d["report"]["comparisons"]]' > "$tmp/root.verdicts"
grep -q improved "$tmp/root.verdicts" || fail "no improved verdict in the root's report: $(cat "$tmp/root.verdicts")"

# ---- Bundle it: twice the same bytes; refusals name the field.
expect_rc 0 "$CKO" bundle --root "$A" --out "$tmp/case.tar.zst" --json
id=$(printf '%s' "$out" | field 'd["id"]')
printf '%s' "$out" | field 'd["manifest"]' > /dev/null
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin); m = d["manifest"]
paths = [f["path"] for f in m["files"]]
assert paths == sorted(paths), "files not sorted"
for want in ("target.json", "ledger.jsonl", "store.json", "champion/current.json", "stop.json"):
    assert want in paths, want
assert any(p.startswith("profiles/") for p in paths), "no profile bundled"
assert any(p.endswith("/out/result.json") for p in paths), "no raw samples bundled"
assert any(p.startswith("objects/sha256/") for p in paths), "no snapshot bundled"
assert {"path": "handoff.md", "reason": "the decision maker'"'"'s own handoff: never read by cko, not evidence"} in m["left_out"], m["left_out"]
print("bundle:", d["bytes"], "bytes;", len(paths), "files,", d["store_bytes"], "bytes before compression")'
expect_rc 0 "$CKO" bundle --root "$A" --out "$tmp/again.tar.zst"
contains "$out" "bundle $id"
cmp "$tmp/case.tar.zst" "$tmp/again.tar.zst" || fail "the same root gave two different bundles"
expect_rc 2 "$CKO" bundle --root "$A" --out "$tmp/case.tar.zst"
contains "$err" "already_exists"
expect_rc 2 "$CKO" bundle --root "$A" --out "$A/inside.tar.zst"
contains "$err" "lies inside the artifact root"
[ ! -e "$A/inside.tar.zst" ] || fail "a bundle was written into the store"
expect_rc 2 "$CKO" bundle --root "$A" --out "$tmp/case.zip"
contains "$err" "out: "
expect_rc 2 "$CKO" bundle --root "$A" --out "$tmp/r.tar.zst" --redact target.json --redact-reason "no"
contains "$err" "redact: target.json is a record the report or fsck reads"
[ ! -e "$tmp/r.tar.zst" ] || fail "a refused bundle left a file"

# ---- Any tar reads it, manifest first; bundle.json is valid bundle-v1.
zstd -dcq "$tmp/case.tar.zst" | tar -tf - > "$tmp/list"
[ "$(head -n1 "$tmp/list")" = bundle.json ] || fail "bundle.json is not the first entry: $(head -n3 "$tmp/list")"
grep -q "^store/target.json$" "$tmp/list" || fail "tar does not list store/target.json"
zstd -dcq "$tmp/case.tar.zst" | tar -xOf - bundle.json > "$tmp/bundle.json"
expect_rc 0 "$py" "$validate" --document "$tmp/bundle.json"
[ "$(field 'd["id"]' < "$tmp/bundle.json")" = "$id" ] || fail "bundle.json's id is not the printed id"

# ---- --redact through --request (the same keys an MCP call takes): a note, not damage.
stderr_rel=$(cd "$A" && ls invocations/*/driver/0001/stderr.txt | head -n1)
[ -n "$stderr_rel" ] || fail "no driver stderr capture to redact"
printf '{"root": "%s", "out": "%s", "redact": ["%s"], "redact_reason": "host names of a customer"}' \
  "$A" "$tmp/redacted.tar.zst" "$stderr_rel" > "$tmp/req.json"
expect_rc 0 "$CKO" bundle --request "$tmp/req.json"
contains "$out" "1 redacted"
expect_rc 0 "$CKO" fsck --bundle "$tmp/redacted.tar.zst"
contains "$out" "redacted    $stderr_rel  withheld (host names of a customer)"
contains "$out" "the bundle is consistent"
zstd -dcq "$tmp/redacted.tar.zst" | tar -xOf - "store/$stderr_rel" | grep -q "this file was redacted" \
  || fail "the redacted file does not hold its marker"

# ---- The root and the workload gone: verify and render from the bundle alone (extracted under a
# TMPDIR of this test's own, so that what is left behind can be seen).
chmod -R u+w "$t" && rm -rf "$t"
mkdir "$tmp/scratch" && export TMPDIR="$tmp/scratch"
expect_rc 0 "$CKO" fsck --bundle "$tmp/case.tar.zst" --json
printf '%s' "$out" > "$tmp/fsck.json"
expect_rc 0 "$py" "$validate" --document "$tmp/fsck.json"
[ "$(field 'd["bundle"]["id"]' < "$tmp/fsck.json")" = "$id" ] || fail "fsck --bundle names another bundle"
[ "$(field 'd["damaged"]' < "$tmp/fsck.json")" = False ] || fail "the bundle is damaged: $(cat "$tmp/fsck.json")"
expect_rc 0 "$CKO" report --bundle "$tmp/case.tar.zst" --format md
printf '%s\n' "$out" > "$tmp/bundle.md"
contains "$out" "from \`bundle $id\`"
# The same Markdown but for the header line (it names the bundle where the root's names its path).
diff <(grep -v '^Target `' "$tmp/root.md") <(grep -v '^Target `' "$tmp/bundle.md") > "$tmp/md.diff" \
  || fail "report --bundle differs from the root's report: $(cat "$tmp/md.diff")"
expect_rc 0 "$CKO" report --bundle "$tmp/case.tar.zst" --format md --json
printf '%s' "$out" | field '[(c["id"], c["verdict"]) for c in d["report"]["comparisons"]]' > "$tmp/bundle.verdicts"
cmp "$tmp/root.verdicts" "$tmp/bundle.verdicts" || fail "verdicts differ: $(cat "$tmp/bundle.verdicts")"
expect_rc 0 "$CKO" report --bundle "$tmp/case.tar.zst" --out "$tmp/case.html"
head -c 15 "$tmp/case.html" | grep -q '<!DOCTYPE html>' || fail "no HTML report from the bundle"
[ -z "$(ls -A "$tmp/scratch")" ] || fail "an extracted bundle was left behind: $(ls "$tmp/scratch")"

# ---- One byte changed in a record inside: fsck names the file, report refuses.
zstd -dcq "$tmp/case.tar.zst" > "$tmp/case.tar"
python3 - "$tmp/case.tar" "$exp" <<'PY'
import sys
path, exp = sys.argv[1], sys.argv[2]
data = bytearray(open(path, "rb").read())
at = data.find(b'"hypothesis":"rows are contiguous"')
assert at > 0, "the experiment record is not in the archive"
data[at + len(b'"hypothesis":"')] = ord("R")  # rows -> Rows: the tar header's checksum still holds
open(path, "wb").write(data)
PY
zstd -qf "$tmp/case.tar" -o "$tmp/tampered.tar.zst"
expect_rc 1 "$CKO" fsck --bundle "$tmp/tampered.tar.zst"
contains "$out" "altered     experiments/$exp.json"
contains "$out" "the bundle is damaged"
expect_rc 2 "$CKO" report --bundle "$tmp/tampered.tar.zst" --format md
contains "$err" "tampered_record"
contains "$err" "experiments/$exp.json"
# Cut short, or not a bundle at all: an error naming the file, not a report.
head -c 2000 "$tmp/case.tar.zst" > "$tmp/cut.tar.zst"
expect_rc 2 "$CKO" fsck --bundle "$tmp/cut.tar.zst"
contains "$err" "truncated_input"
expect_rc 2 "$CKO" fsck --bundle "$tmp/nowhere.tar.zst"
contains "$err" "bundle: $tmp/nowhere.tar.zst is not a file"
