#!/usr/bin/env bash
# `cko profile ncu` on NCU output that profiled nothing (quoting NCU) and on Latin-1 names (text
# and --json give the same repaired answer).
. "$(dirname "$0")/lib.sh"

expect_rc 2 "$CKO" profile ncu tests/fixtures/ncu/ncu_no_kernels.txt
contains "$err" "error[empty_input]"
contains "$err" "no profiled kernel"
contains "$err" '==ERROR== Failed to profile "gemm_kernel" in process 5151'
case "$err" in *"--page"*) fail "an empty log should not suggest a re-export: $err";; esac

latin1=tests/fixtures/ncu/ncu_details_latin1.csv
expect_rc 0 "$CKO" profile ncu "$latin1"
contains "$out" "scale_$(printf '\xef\xbf\xbd')naive"
contains "$out" "note: 190 byte(s) of invalid UTF-8"
expect_rc 0 "$CKO" profile ncu "$latin1" --json
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
l = d["launches"]
assert len(l) == 1 and l[0]["kernel"].startswith("scale_\ufffdnaive("), l[0]["kernel"]
assert any("invalid UTF-8" in n for n in d["notes"]), d["notes"]
assert len(l[0]["values"]) == 87 and len(l[0]["facts"]) == 48, (len(l[0]["values"]), len(l[0]["facts"]))
assert len(d["metric_columns"][l[0]["columns"]]) == 87
' || fail "Latin-1 NCU JSON"

# A long name of repaired bytes (U+FFFD is three bytes) is cut to 27 whole code points and "~" in
# the table: cutting at 27 bytes split a character and made the text output invalid UTF-8.
LC_ALL=C sed 's/scale_\xb5naive/scale_x\xb5\xb5\xb5\xb5\xb5\xb5\xb5\xb5\xb5\xb5\xb5\xb5\xb5\xb5\xb5\xb5\xb5\xb5\xb5\xb5\xb5\xb5\xb5\xb5\xb5naive/' \
  "$latin1" > "$tmp/long_name.csv"
expect_rc 0 "$CKO" profile ncu "$tmp/long_name.csv"
printf '%s' "$out" | python3 -c '
import sys
text = sys.stdin.buffer.read().decode("utf-8")  # fails on a split character
row = [line for line in text.splitlines() if line.startswith("   0  ")][0]
assert row[6:34] == "scale_x" + "\ufffd" * 20 + "~", row
' || fail "a long repaired kernel name in the text table"
echo "ncu_logs: ok"
