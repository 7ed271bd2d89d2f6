#!/usr/bin/env bash
# `cko profile torch` and `cko profile nsys` end to end on the real H200 exports in tests/fixtures.
. "$(dirname "$0")/lib.sh"

torch=tests/fixtures/torch/torch_trace.json
vec=tests/fixtures/nsys/vec.sqlite

# nsys: the CSV of each report equals what `nsys stats` printed for the same report.
expect_rc 0 "$CKO" profile nsys "$vec" --csv cuda_gpu_kern_sum
printf '%s\n' "$out" | cmp -s - tests/fixtures/nsys/vec_stats_cuda_gpu_kern_sum.csv ||
  fail "cuda_gpu_kern_sum differs from nsys stats: $out"
expect_rc 0 "$CKO" profile nsys "$vec" --csv cuda_api_sum
printf '%s\n' "$out" | cmp -s - tests/fixtures/nsys/vec_stats_cuda_api_sum.csv ||
  fail "cuda_api_sum differs from nsys stats: $out"

# The human summary is aligned tables; --json carries source identity and every report.
expect_rc 0 "$CKO" profile nsys "$vec"
contains "$out" "export schema 3.20.3"
contains "$out" "scale_naive(const float *, float *, float, int)"
contains "$out" "SKIPPED"
expect_rc 0 "$CKO" profile nsys "$vec" --json
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["format_version"] == "cko/profile-nsys-v1", d
assert d["source"]["tool"] == "nsys" and d["source"]["tool_version"] == "2025.3.2.0", d["source"]
k = d["reports"]["cuda_gpu_kern_sum"]["rows"]
assert [r["count"] for r in k] == [3, 1, 3] and k[0]["total_ns"] == 681533, k
assert d["reports"]["cuda_api_sum"]["rows"][0]["name"] == "cudaMalloc"'

# Failures: unknown report, unsupported file, missing file; one error line, usage exit code.
expect_rc 2 "$CKO" profile nsys "$vec" --csv no_such_report
contains "$err" "error[invalid_argument]"
expect_rc 2 "$CKO" profile nsys "$torch"
contains "$err" "error[unsupported_format]"
expect_rc 2 "$CKO" profile nsys "$tmp/absent.sqlite"
contains "$err" "error[not_found]"

# torch: counts of the real torch 2.11 trace (numbers checked by an independent python script,
# see src/cko/profile/kineto/kineto_trace_test.cpp).
expect_rc 0 "$CKO" profile torch "$torch"
contains "$out" "314 events, 168 complete"
contains "$out" "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"
expect_rc 0 "$CKO" profile torch "$torch" --json --tool-version 2.11
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
t = d["traces"][0]
s = t["summary"]
assert t["source"]["tool_version"] == "2.11" and t["identity"]["cupti_version"] == 130001
assert s["events"] == 314 and s["kernel_time_ns"] == 1840249, s["events"]
assert sum(k["count"] for k in s["kernels"]) == 25
assert s["flows"]["linked"] == 40 and s["flows"]["unmatched_starts"] == 6, s["flows"]'

# gzip and several ranks.
gzip -c "$torch" > "$tmp/t.json.gz"
expect_rc 0 "$CKO" profile torch "$tmp/t.json.gz" --json
printf '%s' "$out" | python3 -c '
import json, sys
t = json.load(sys.stdin)["traces"][0]
assert t["gzip"] is True and t["summary"]["events"] == 314'
for r in 1 0; do
  python3 -c "
import json, sys
d = json.load(open('$torch')); d['distributedInfo'] = {'rank': $r, 'world_size': 2}
json.dump(d, open('$tmp/rank$r.json', 'w'))"
done
expect_rc 0 "$CKO" profile torch "$tmp/rank1.json" "$tmp/rank0.json" --json
printf '%s' "$out" | python3 -c '
import json, sys
assert [t["identity"]["rank"] for t in json.load(sys.stdin)["traces"]] == [0, 1]'
expect_rc 2 "$CKO" profile torch "$tmp/rank1.json" "$torch"
contains "$err" "error[missing_field]"

# Broken traces fail closed with their code.
head -c 20000 "$torch" > "$tmp/cut.json"
expect_rc 2 "$CKO" profile torch "$tmp/cut.json"
contains "$err" "error[truncated_input]"
: > "$tmp/empty.json"
expect_rc 2 "$CKO" profile torch "$tmp/empty.json"
contains "$err" "error[empty_input]"
expect_rc 2 "$CKO" profile torch "$vec"
contains "$err" "error[binary_input]"
