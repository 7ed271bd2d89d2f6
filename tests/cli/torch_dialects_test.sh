#!/usr/bin/env bash
# `cko profile torch` on the dialects it reads by meaning: torch 1.8-1.9 CamelCase categories, GPU
# work under unknown categories (refused, never an idle GPU), Latin-1 bytes, sub-ns timestamps.
. "$(dirname "$0")/lib.sh"

camel=tests/fixtures/torch/torch18_camelcase_trace.json
latin1=tests/fixtures/torch/latin1_trace.json

# CamelCase: exact counts (by hand, see src/cko/profile/kineto/kineto_dialect_test.cpp).
expect_rc 0 "$CKO" profile torch "$camel"
contains "$out" "24 events, 13 complete; kernel time 22000 ns"
contains "$out" "note: categories spelled as torch 1.8-1.9"
expect_rc 0 "$CKO" profile torch "$camel" --json
printf '%s' "$out" | python3 -c '
import json, sys
t = json.load(sys.stdin)["traces"][0]
s = t["summary"]
assert t["source"]["dialect"] == "kineto-chrome-trace-v1-camelcase", t["source"]
assert sum(k["count"] for k in s["kernels"]) == 3 and s["kernel_time_ns"] == 22000, s["kernels"]
assert [(m["name"], m["bytes"]) for m in s["memcpy"]] == [("Memcpy HtoD (Pageable -> Device)", 4096)]
assert [(m["name"], m["bytes"]) for m in s["memset"]] == [("Memset (Device)", 1024)]
assert s["flows"]["linked"] == 5 and s["flows"]["launch_to_gpu_start"]["p50_ns"] == 7000, s["flows"]
assert s["streams"][0]["kernels"]["count"] == 3
' || fail "CamelCase trace JSON counts"

# GPU-looking events under a category cko does not know, and nothing it knows: refused.
sed -e 's/"cat": "Kernel"/"cat": "GpuKernelV9"/' -e 's/"cat": "Memcpy"/"cat": "GpuCopyV9"/' \
    -e 's/"cat": "Memset"/"cat": "GpuFillV9"/' "$camel" > "$tmp/unknown.json"
expect_rc 2 "$CKO" profile torch "$tmp/unknown.json"
contains "$err" "error[unsupported_format]"
contains "$err" "'GpuKernelV9' (3)"
expect_rc 2 "$CKO" profile torch "$tmp/unknown.json" --json
contains "$err$out" "unsupported_format"

# Latin-1 bytes: both modes succeed with the same repaired names and say so.
expect_rc 0 "$CKO" profile torch "$latin1"
contains "$out" "5 string(s) held invalid UTF-8"
contains "$out" "gemm_$(printf '\xef\xbf\xbd')kernel"
expect_rc 0 "$CKO" profile torch "$latin1" --json
printf '%s' "$out" | python3 -c '
import json, sys
t = json.load(sys.stdin)["traces"][0]
assert [k["name"] for k in t["summary"]["kernels"]] == ["gemm_\ufffdkernel"], t["summary"]["kernels"]
assert any("6 byte(s) replaced with U+FFFD" in n for n in t["notes"]), t["notes"]
' || fail "Latin-1 trace JSON"

# More than 3 fraction digits: rounded to the nanosecond, said in the notes.
python3 - "$camel" "$tmp/float.json" <<'PY' || fail "cannot write the float-rewritten trace"
import json, sys
d = json.load(open(sys.argv[1]))
for e in d["traceEvents"]:
    if e.get("ph") == "X" and e["cat"] == "Kernel":
        e["dur"] = e["dur"] + 0.0004  # 8.0004 us and so on
json.dump(d, open(sys.argv[2], "w"))
PY
expect_rc 0 "$CKO" profile torch "$tmp/float.json" --json
printf '%s' "$out" | python3 -c '
import json, sys
t = json.load(sys.stdin)["traces"][0]
assert t["summary"]["kernel_time_ns"] == 22000, t["summary"]["kernel_time_ns"]
assert t["summary"]["unmodeled"]["rounded_timestamps"] == 3
assert any("rounded to the nearest nanosecond" in n for n in t["notes"]), t["notes"]
' || fail "rounded timestamps"
echo "torch_dialects: ok"
