#!/usr/bin/env bash
# cko report / handoff / stop end to end on a small real loop: Markdown on stdout, HTML to a file,
# the handoff refusing to overwrite, the stop record written once and cited.
. "$(dirname "$0")/lib.sh"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
ex="$repo/examples/cpu-saxpy"
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

t="$tmp/t"; A="$t/art"
saxpy_target "$t" "$ex/original"
expect_rc 0 "$CKO" target freeze --spec "$t/cko.toml" --root "$A"

# Before any measurement: a report that says what is missing.
expect_rc 0 "$CKO" report --root "$A"
contains "$out" "# cko report: saxpy-small"
contains "$out" "No baseline"

expect_rc 0 "$CKO" baseline --root "$A" --calls-per-case 1 --aa-pairs 6
expect_rc 0 "$CKO" experiment new --root "$A" --candidate "$ex/candidate" --hypothesis "rows are contiguous" \
  --mechanism loop-order --failure-closes mechanism --no-falsifier-reason "known" --json
exp=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 0 "$CKO" screen "$exp" --root "$A"
expect_rc 0 "$CKO" confirm "$exp" --root "$A" --json
conf=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 0 "$CKO" champion select --root "$A" --experiment "$exp" --confirm "$conf"

# Markdown: stdout by default; HTML needs a file.
expect_rc 0 "$CKO" report --root "$A" --format md
contains "$out" "Champion now: **\`$exp\`**"
contains "$out" "| confirm \`$conf\` | loop-order (\`$exp\`) | **improved** |"
expect_rc 2 "$CKO" report --root "$A" --format html
contains "$err" "--out report.html"
expect_rc 2 "$CKO" report --root "$A" --format pdf --out "$tmp/r.pdf"
expect_rc 0 "$CKO" report --root "$A" --out "$tmp/r.html"
contains "$out" "$tmp/r.html"
python3 - "$tmp/r.html" "$exp" <<'PY'
import sys
html, exp = open(sys.argv[1], encoding="utf-8").read(), sys.argv[2]
assert html.startswith("<!DOCTYPE html>"), html[:40]
assert html.count('class="effect-chart"') == 2, html.count('class="effect-chart"')  # screen, confirm
assert f'<strong id="champion-name">{exp}</strong>' in html
assert "<script" not in html and "https://" not in html
PY
# A second report replaces the first (a regenerated view), and --json carries the model.
expect_rc 0 "$CKO" report --root "$A" --out "$tmp/r.html" --json
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["format"] == "html" and d["report"]["format_version"] == "cko/report-v1", d.keys()
assert d["report"]["champion"]["current"] == sys.argv[1], d["report"]["champion"]
assert [x["status"] for x in d["report"]["experiments"]] == ["champion"]
' "$exp"
# --request drives it like any verb; a .md --out means Markdown.
printf '{"root": "%s", "out": "%s"}' "$A" "$tmp/r.md" > "$tmp/req.json"
expect_rc 0 "$CKO" report --request "$tmp/req.json"
head -n1 "$tmp/r.md" | grep -q '^# cko report: saxpy-small$' || fail "r.md is not the Markdown report"

# The handoff: stdout, or a file it never overwrites without --force.
expect_rc 0 "$CKO" handoff --root "$A"
contains "$out" "## Termination reason"
contains "$out" "no termination reason is recorded"
contains "$out" "the champion was never audited"
expect_rc 0 "$CKO" handoff --root "$A" --out "$A/handoff.md"
echo "my own notes" >> "$A/handoff.md"
expect_rc 2 "$CKO" handoff --root "$A" --out "$A/handoff.md"
contains "$err" "already_exists"
grep -q "my own notes" "$A/handoff.md" || fail "the handoff was overwritten without --force"

# stop: a reason is required, written once, cited by the handoff; fsck accepts the root.
expect_rc 2 "$CKO" stop --root "$A" --reason "   "
expect_rc 2 "$CKO" stop --root "$A"
expect_rc 0 "$CKO" stop --root "$A" --reason "the goal is reached" --json
stop_id=$(printf '%s' "$out" | field 'd["id"]')
[ -f "$A/stop.json" ] || fail "no stop.json"
expect_rc 2 "$CKO" stop --root "$A" --reason "again"
contains "$err" "already stopped ($stop_id"
expect_rc 0 "$CKO" handoff --root "$A" --out "$A/handoff.md" --force
grep -q "^the goal is reached (\`$stop_id\`" "$A/handoff.md" || fail "the handoff does not cite the stop record"
grep -q "my own notes" "$A/handoff.md" && fail "--force did not replace the handoff"
expect_rc 0 "$CKO" fsck --root "$A"

# Not a store: the usual error.
expect_rc 2 "$CKO" report --root "$tmp/nowhere"
contains "$err" "error["
