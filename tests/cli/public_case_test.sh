#!/usr/bin/env bash
# The first public case (docs/cases/cpu-saxpy): the bundle made by an earlier cko still verifies and
# renders with this one (bundle-v1 stays readable), and every id case.md cites is in the bundle.
. "$(dirname "$0")/lib.sh"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
case_dir=$repo/docs/cases/cpu-saxpy
bundle=$case_dir/case.tar.zst
id=$(grep -o '| bundle id | `[0-9a-f]\{64\}`' "$case_dir/case.md" | grep -o '[0-9a-f]\{64\}')
[ -n "$id" ] || fail "case.md cites no bundle id"

expect_rc 0 "$CKO" fsck --bundle "$bundle"
contains "$out" "bundle $id "
contains "$out" "the bundle is consistent"

expect_rc 0 "$CKO" report --bundle "$bundle" --format md
contains "$out" "exp-2fe7898dfd331737"
contains "$out" "inv-8311696b1ac5f25b"

# Every record id case.md cites resolves in the bundle's store, to a record of the kind it names.
mkdir "$tmp/R"
zstd -q -dc "$bundle" | tar -xf - -C "$tmp/R" --strip-components=1 store/
cited=$(grep -o '\b\(tgt\|exp\|inv\|sel\|stop\|profile\)-[0-9a-f]\{16\}\b' "$case_dir/case.md" | sort -u)
[ "$(wc -l <<<"$cited")" -ge 10 ] || fail "case.md cites too few ids: $cited"
for rid in $cited; do
  case $rid in
    tgt-*) expect_rc 0 "$CKO" show target --root "$tmp/R" --json
           contains "$out" "\"id\": \"$rid\"" ;;
    stop-*) grep -q "\"id\":\"$rid\"" "$tmp/R/stop.json" || fail "case.md cites $rid, not the bundle's stop record" ;;
    *) expect_rc 0 "$CKO" show "$rid" --root "$tmp/R" --json ;;
  esac
done
# The numbers the case quotes are the confirm's and the audit's.
expect_rc 0 "$CKO" show inv-8311696b1ac5f25b --root "$tmp/R" --json
printf '%s' "$out" | python3 -c '
import json, sys
o = json.load(sys.stdin)["result"]["outputs"]; e = o["estimate"]
assert o["verdict"] == "improved" and o["to_verdict"]["pairs"] == 8, (o["verdict"], o["to_verdict"])
assert (round(e["hl_pct"], 2), round(e["ci_low_pct"], 2), round(e["ci_high_pct"], 2)) == (1185.34, 799.59, 1766.98), e'
echo "ok: the public case's bundle verifies, renders, and holds every id case.md cites"
