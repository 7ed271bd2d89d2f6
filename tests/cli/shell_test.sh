#!/usr/bin/env bash
# The shell every verb shares: version, help, errors printed once, --json and --request plumbing.
. "$(dirname "$0")/lib.sh"

expect_rc 0 "$CKO" --version
contains "$out" "cko 0."

expect_rc 0 "$CKO" help
contains "$out" "self-check"
# help is a verb like the others: --json gives the verb table, --request works, bad flags are usage.
expect_rc 0 "$CKO" help --json
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["format_version"] == "cko/help-v1", d
names = {v["name"]: v for v in d["verbs"]}
assert {"doctor", "baseline", "confirm", "champion", "profile", "help"} <= set(names), names
assert {v["name"] for v in names["profile"]["verbs"]} >= {"ncu", "nsys", "torch", "diff"}, names["profile"]'
echo '{"json": true}' > "$tmp/help.json"
expect_rc 0 "$CKO" help --request "$tmp/help.json"
contains "$out" '"format_version": "cko/help-v1"'
expect_rc 2 "$CKO" help --no-such-flag
contains "$err" "error[usage]"

# A usage error: one line on stderr with the code; exit 2.
expect_rc 2 "$CKO" no-such-verb
contains "$err" "cko: error[usage]:"
[ "$(printf '%s\n' "$err" | grep -c 'cko: error')" -eq 1 ] || fail "error printed more than once"

# With --json the same error is also one JSON document on stdout.
expect_rc 2 "$CKO" self-check --json --no-such-flag
printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["error"]["code"]=="usage", d'

# self-check as JSON; in the build tree it finds the source tree's schemas and skill package.
expect_rc 0 "$CKO" self-check --json
printf '%s' "$out" | python3 -c '
import json,sys
d=json.load(sys.stdin)
assert d["format_version"]=="cko/self-check-v1" and d["ok"] is True, d
assert {c["name"] for c in d["checks"]} >= {"version","schemas","skill_package","temp_dir","json_sha256_roundtrip"}'

# A data dir without schemas fails the check with exit 3 and says what to do.
expect_rc 3 env CKO_DATA_DIR="$tmp" "$CKO" self-check
contains "$out" "FAIL schemas"

# --request: keys are the verb's options; unknown keys are rejected naming the key.
echo '{"json": true}' > "$tmp/req.json"
expect_rc 0 "$CKO" self-check --request "$tmp/req.json"
contains "$out" '"format_version": "cko/self-check-v1"'
echo '{"jsn": true}' > "$tmp/bad.json"
expect_rc 2 "$CKO" self-check --request "$tmp/bad.json"
contains "$err" 'error[invalid_request]'
contains "$err" '"jsn"'
# Every verb: a misspelt key in its --request file is refused before anything runs, with the same
# rule and words as an MCP call's (verbs::RequestDef), naming the key; so is a value out of range.
echo '{"no_such_key": 1}' > "$tmp/misspelt.json"
"$CKO" help --json | python3 -c '
import json, sys
def walk(rows, prefix):
    for r in rows:
        words = prefix + [r["name"]]
        if r.get("verbs"): walk(r["verbs"], words)
        else: print(" ".join(words))
walk(json.load(sys.stdin)["verbs"], [])' > "$tmp/verbs.txt"
[ "$(wc -l < "$tmp/verbs.txt")" -ge 30 ] || fail "help --json lists $(wc -l < "$tmp/verbs.txt") verbs"
while read -r -a words; do
  expect_rc 2 "$CKO" "${words[@]}" --request "$tmp/misspelt.json" --json </dev/null
  python3 -c 'import json, sys
e = json.loads(sys.argv[1])["error"]
assert e["code"] == "invalid_request" and e["details"]["key"] == "no_such_key", (sys.argv[2], e)
assert e["message"].startswith("request key \"no_such_key\" is not a key"), (sys.argv[2], e)' "$out" "${words[*]}"
done < "$tmp/verbs.txt"
for m in -1 0 1001; do
  echo "{\"candidate\": \"c\", \"minimum_effect_pct\": $m}" > "$tmp/minimum.json"
  expect_rc 2 "$CKO" experiment new --request "$tmp/minimum.json" --json
  python3 -c 'import json, sys
e = json.loads(sys.argv[1])["error"]
assert e["code"] == "invalid_request" and e["details"]["key"] == "minimum_effect_pct", e' "$out"
done
echo '{"json": true, "json": false}' > "$tmp/dup.json"
expect_rc 2 "$CKO" self-check --request "$tmp/dup.json"
contains "$err" 'error[json_duplicate_key]'
