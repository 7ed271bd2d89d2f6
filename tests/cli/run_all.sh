#!/usr/bin/env bash
# Runs every tests/cli/*_test.sh against the binary in $CKO; prints "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${CKO:?set CKO to the cko binary}"
export CKO
passed=0
failed=0
for t in "$here"/*_test.sh; do
  if bash "$t"; then
    passed=$((passed + 1))
  else
    echo "FAILED: $(basename "$t")"
    failed=$((failed + 1))
  fi
done
echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
