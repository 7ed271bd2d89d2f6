#!/usr/bin/env bash
# `cko profile nsys` reads exports by their columns: schema 3.24.14 is read, schema 2.x refused
# naming its version, Latin-1 kernel names give the same answer in text and --json.
. "$(dirname "$0")/lib.sh"

build() {  # build SQL_FILE OUT [EXTRA_SQL]
  python3 - "$@" <<'PY' || fail "cannot build $2 from $1"
import sqlite3, sys
db = sqlite3.connect(sys.argv[2])
db.executescript(open(sys.argv[1]).read() + (sys.argv[3] if len(sys.argv) > 3 else ""))
db.commit()
PY
}

build tests/fixtures/nsys/schema_3_24_14.sql "$tmp/s324.sqlite"
expect_rc 0 "$CKO" profile nsys "$tmp/s324.sqlite"
contains "$out" "Nsight Systems 2026.1.1.204, export schema 3.24.14"
contains "$out" "scale(float*, float, int)"
expect_rc 0 "$CKO" profile nsys "$tmp/s324.sqlite" --json
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["source"]["dialect"] == "nsys-sqlite-3.24.14" and d["schema_version"] == "3.24.14", d["source"]
k = d["reports"]["cuda_gpu_kern_sum"]["rows"]
assert [(r["count"], r["total_ns"]) for r in k] == [(3, 3600), (1, 2000)], k
' || fail "schema 3.24.14 JSON"

build tests/fixtures/nsys/schema_2_export_meta_data.sql "$tmp/s2.sqlite"
expect_rc 2 "$CKO" profile nsys "$tmp/s2.sqlite"
contains "$err" "error[unsupported_format]"
contains "$err" "schema 2.7.1"

# Latin-1 bytes in a kernel name: text and --json both succeed with the same repaired name.
build tests/fixtures/nsys/schema_3_24_14.sql "$tmp/latin1.sqlite" \
  "UPDATE StringIds SET value = CAST(X'7363616CE9' AS TEXT) WHERE id = 1;"
expect_rc 0 "$CKO" profile nsys "$tmp/latin1.sqlite"
contains "$out" "scal$(printf '\xef\xbf\xbd')"
contains "$out" "held invalid UTF-8"
expect_rc 0 "$CKO" profile nsys "$tmp/latin1.sqlite" --json
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["reports"]["cuda_gpu_kern_sum"]["rows"][0]["name"] == "scal\ufffd", d["reports"]["cuda_gpu_kern_sum"]
assert any("held invalid UTF-8" in n for n in d["notes"]), d["notes"]
' || fail "Latin-1 nsys JSON"
expect_rc 0 "$CKO" profile nsys "$tmp/latin1.sqlite" --csv cuda_gpu_kern_sum
contains "$out" "scal$(printf '\xef\xbf\xbd')"
echo "nsys_schema: ok"
