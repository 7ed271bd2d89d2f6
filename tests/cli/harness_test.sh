#!/usr/bin/env bash
# The test of the tests: a script built on lib.sh fails when any one of its checks fails (a python
# assert block without `|| fail`, a pipeline, a $(...) assignment, a wrong exit code), and a broken
# copy of a real CLI test (one expected count changed inside a python block) fails too.
. "$(dirname "$0")/lib.sh"
here="$(cd "$(dirname "$0")" && pwd)"

# run_script NAME BODY: writes a script sourcing lib.sh with BODY and runs it; rc in $rc, stderr in $err.
run_script() {
  printf '. "%s/lib.sh"\n%s\necho reached-the-end\n' "$here" "$2" > "$tmp/$1.sh"
  rc=0
  bash "$tmp/$1.sh" >"$tmp/$1.out" 2>"$tmp/$1.err" || rc=$?
  out=$(cat "$tmp/$1.out"); err=$(cat "$tmp/$1.err")
}
must_fail() {  # must_fail NAME BODY WANT_IN_STDERR
  run_script "$1" "$2"
  [ "$rc" -ne 0 ] || fail "$1: a failing check left the script green (exit 0)"
  case "$out" in *reached-the-end*) fail "$1: the script went on after a failed check";; esac
  contains "$err" "$3"
}

# The control: a script whose checks hold exits 0 and runs to its end.
run_script passing 'printf "{\"n\": 1}" | python3 -c "import json,sys; assert json.load(sys.stdin)[\"n\"] == 1"
expect_rc 0 true
contains "abc" "b"'
[ "$rc" -eq 0 ] || fail "a passing script failed: $err"
contains "$out" reached-the-end

must_fail python_assert 'printf "{\"n\": 1}" | python3 -c "
import json, sys
assert json.load(sys.stdin)[\"n\"] == 2, \"n is not 2\""' "n is not 2"
must_fail python_heredoc 'python3 - <<PY
assert 1 + 1 == 3, "arithmetic"
PY' "AssertionError: arithmetic"
must_fail pipeline 'false | cat' "exited 1"
must_fail substitution 'x=$(python3 -c "raise SystemExit(4)")' "exited 4"
must_fail wrong_rc 'expect_rc 0 false' "'false' exited 1, expected 0"
must_fail not_contained 'contains "abc" "z"' "expected to find 'z'"
must_fail function_body 'check() { false; echo "not here"; }
check' "exited 1"

# A broken copy of a real test: trace_test.sh expecting 315 events instead of 314 in its JSON check
# (the text checks before it still pass). It must fail, with the AssertionError shown.
grep -q 's\["events"\] == 314 and' "$here/trace_test.sh" || fail "trace_test.sh no longer checks 314 events: update this test"
mkdir "$tmp/broken" && cp "$here/lib.sh" "$tmp/broken/"
sed 's/s\["events"\] == 314 and/s["events"] == 315 and/' "$here/trace_test.sh" > "$tmp/broken/trace_test.sh"
rc=0
(cd "$here/../.." && bash "$tmp/broken/trace_test.sh") >"$tmp/broken.out" 2>"$tmp/broken.err" || rc=$?
[ "$rc" -ne 0 ] || fail "a broken copy of trace_test.sh (315 events) passed"
contains "$(cat "$tmp/broken.err")" "AssertionError: 314"
contains "$(cat "$tmp/broken.err")" "FAIL: "
