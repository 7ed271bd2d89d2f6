#!/usr/bin/env bash
# cko profile ncu / diff / collect ncu, end to end on the real H200 exports and a fake ncu.
. "$(dirname "$0")/lib.sh"
fx=tests/fixtures/ncu

# The raw page: 7 launches, durations in the summary, a roofline against the H200 it names.
expect_rc 0 "$CKO" profile ncu "$fx/ncu_raw.csv"
contains "$out" "ncu raw export: 7 launches"
contains "$out" "scale_vec4"
contains "$out" "130.72 us"
contains "$out" "roofline against NVIDIA H200"

# The details page as JSON: facts, rules, every metric, and the DRAM rate of scale_vec4.
expect_rc 0 "$CKO" profile ncu "$fx/ncu_details.csv" --json --device h200-sxm
printf '%s' "$out" | python3 -c '
import json,sys
d=json.load(sys.stdin)
assert d["layout"]=="details" and len(d["launches"])==7, d["layout"]
v=d["launches"][1]
assert v["kernel"].startswith("scale_vec4") and v["grid"]==[1056,1,1] and v["block"]==[256,1,1]
f={x["id"]:x["value"] for x in v["facts"]}
assert abs(f["duration"]-132800)<1e-6 and f["dram.throughput"]==3.88e12, f
assert 0.6 < v["roofline"]["bandwidth_pct_of_peak"]/100 < 0.95
assert any(r["name"]=="HighPipeUtilization" for r in v["rules"])
assert len(v["values"])==87 and v["unmodeled"]==3
cols=d["metric_columns"][v["columns"]]
assert len(cols)==len(v["values"])
m={(d["metric_keys"][k].get("section",""), d["metric_keys"][k]["name"]): (d["metric_units"][u], x) for (k,u),x in zip(cols,v["values"])}
assert m[("GPU Speed Of Light Throughput","Duration")]==("us","132.80"), m[("GPU Speed Of Light Throughput","Duration")]'

# The raw page as JSON: every metric cell of every row, read here with Python's csv module, is a
# value of its launch, against the header's columns and the units row.
expect_rc 0 "$CKO" profile ncu "$fx/ncu_raw.csv" --json
printf '%s' "$out" > "$tmp/raw.json"
python3 - "$tmp/raw.json" "$fx/ncu_raw.csv" <<'PY'
import csv, json, sys
d = json.load(open(sys.argv[1]))
rows = [r for r in csv.reader(l for l in open(sys.argv[2]) if l.startswith('"'))]
header, units, data = rows[0], rows[1], rows[2:]
identity = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
            "Block Size", "Grid Size", "Device", "CC"}
metric = [i for i, h in enumerate(header) if h not in identity]
assert d["format_version"] == "cko/ncu-report-v3" and len(d["metric_columns"]) == 1
cols = d["metric_columns"][0]
assert [d["metric_keys"][k]["name"] for k, _ in cols] == [header[i] for i in metric]
assert [d["metric_units"][u] for _, u in cols] == [units[i] for i in metric]
assert len(d["launches"]) == len(data) == 7
for launch, row in zip(d["launches"], data):
    assert launch["columns"] == 0 and launch["values"] == [row[i] for i in metric], launch["id"]
PY

# --request works like the flags.
printf '{"file": "%s", "json": true}' "$fx/ncu_raw.csv" > "$tmp/req.json"
expect_rc 0 "$CKO" profile ncu --request "$tmp/req.json"
printf '%s' "$out" | python3 -c 'import json, sys; assert json.load(sys.stdin)["layout"] == "raw"' ||
  fail "--request json: layout is not raw"

# Errors are one line with the code, exit 2.
: > "$tmp/empty.csv"
expect_rc 2 "$CKO" profile ncu "$tmp/empty.csv"
contains "$err" "error[empty_input]"
sed 's/"ns"/"fortnight"/g' "$fx/ncu_raw.csv" > "$tmp/unit.csv"
expect_rc 2 "$CKO" profile ncu "$tmp/unit.csv"
contains "$err" "error[unknown_unit]"
contains "$err" "gpu__time_duration.sum"
expect_rc 2 "$CKO" profile ncu "$fx/ncu_raw.csv" --device no-such-gpu
contains "$err" "h200-sxm"

# A refused collection is reported with advice and exit 3.
expect_rc 3 "$CKO" profile ncu "$fx/ncu_counters_not_permitted.txt"
contains "$out" "counters not permitted"

# diff: pairs by kernel and order, lists the rest.
expect_rc 0 "$CKO" profile diff "$fx/ncu_flops_raw.csv" "$fx/ncu_flops_raw_b.csv"
contains "$out" "2 launch pairs, 2 unmatched"
contains "$out" "(-50.0%)"
contains "$out" "only in A: axpy #0"

# collect: a fake ncu on PATH stands in for the real one.
mkdir "$tmp/bin"
cat > "$tmp/bin/ncu" <<SH
#!/bin/sh
if [ "\$1" = --version ]; then echo "NVIDIA (R) Nsight Compute Command Line Profiler"; echo "Version 2025.3.1.0 (build 1)"; exit 0; fi
cat "$PWD/$fx/ncu_raw.csv"
SH
chmod +x "$tmp/bin/ncu"
expect_rc 0 env PATH="$tmp/bin:$PATH" "$CKO" profile collect ncu --out "$tmp/run" --json -- ./vec 1
printf '%s' "$out" | python3 -c '
import json,sys
d=json.load(sys.stdin)
assert len(d["launches"])==7 and d["source"]["tool_version"]=="2025.3.1.0", d["source"]
assert d["collection"]["argv"][-2:]==["./vec","1"]'
[ -f "$tmp/run/ncu-raw.csv" ] || fail "export not kept"
