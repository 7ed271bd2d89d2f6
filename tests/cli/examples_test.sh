#!/usr/bin/env bash
# Both SDKs drive the cpu-saxpy example through a real `cko driver run` (paired, read-only snapshots).
. "$(dirname "$0")/lib.sh"
ex="$(cd "$(dirname "$0")/../../examples/cpu-saxpy" && pwd)"
make -s -C "$ex" >/dev/null || fail "cannot build the C++ driver of cpu-saxpy"
for driver in "python3 $ex/driver.py" "$ex/build/driver_cpp"; do
  # shellcheck disable=SC2086
  expect_rc 0 "$CKO" driver run --root "$tmp/art" --mode paired --capability paired_in_process \
    --case small --case-file "$ex/cases/small.json" --reference "$ex/original" --candidate "$ex/candidate" \
    --samples 3 --correctness-metric max_rel_err --json -- $driver
  printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)["result"]
assert d["state"] == "succeeded", d
subjects = {s["role"]: s for s in d["outputs"]["result"]["subjects"]}
for role in ("reference", "candidate"):
    s = subjects[role]
    assert s["correctness"]["status"] == "passed", s
    assert s["correctness"]["metrics"]["max_rel_err"] <= 1e-6, s
    assert len(s["primary"]) == 3, s
' || fail "unexpected result from $driver"
  # The call workspace (the materialized snapshots) goes with the call.
  left=$(ls -d "$tmp"/art/invocations/*/workspace 2>/dev/null || true)
  [ -z "$left" ] || fail "driver run left its workspace: $left"
done
expect_rc 0 "$CKO" fsck --root "$tmp/art"
