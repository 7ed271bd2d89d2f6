#!/usr/bin/env bash
# Runs a deliberately broken copy of trace_test.sh (its JSON check expects 315 events, the trace has
# 314) and exits with the copy's status. ctest runs it as cli_broken_copy_fails with WILL_FAIL, so a
# check that fails inside a python block is shown to fail the script *and* ctest.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cp "$here/lib.sh" "$d/"
sed 's/s\["events"\] == 314 and/s["events"] == 315 and/' "$here/trace_test.sh" > "$d/trace_test.sh"
# If the pattern no longer applies the copy is not broken; exit 0 so that ctest reports the failure.
cmp -s "$here/trace_test.sh" "$d/trace_test.sh" && { echo "broken_copy.sh: pattern no longer in trace_test.sh"; exit 0; }
bash "$d/trace_test.sh"
