#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan+UBSan) in build-fuzz/, seeds each corpus from the
# fixtures, and runs each target for FUZZ_SECONDS (default 30). A crash leaves its input in
# build-fuzz/crashes/<target>/ and fails the run; turn it into a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-30}
source scripts/fuzz-build.sh
targets=(fuzz_json_strict fuzz_driver_result fuzz_target_spec fuzz_ncu_csv fuzz_kineto fuzz_nsys
  fuzz_ptxas_log fuzz_sass_listing fuzz_tar)
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

# Seeds: the fixtures each parser reads (copied: libFuzzer adds to the first corpus directory).
seed() {  # seed TARGET FILE...
  mkdir -p "$build/corpus/$1"
  local target=$1; shift
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$build/corpus/$target/"; done
  return 0
}
seed fuzz_json_strict tests/fixtures/torch/latin1_trace.json tests/fuzz/json/*
seed fuzz_driver_result tests/fuzz/driver_result/*
seed fuzz_target_spec examples/*/cko.toml tests/fuzz/target_spec/*
seed fuzz_ncu_csv tests/fixtures/ncu/ncu_flops_raw.csv tests/fixtures/ncu/ncu_details_latin1.csv \
  tests/fixtures/ncu/ncu_no_kernels.txt tests/fixtures/ncu/ncu_counters_not_permitted.txt tests/fuzz/ncu/*
seed fuzz_kineto tests/fixtures/torch/torch18_camelcase_trace.json tests/fixtures/torch/latin1_trace.json \
  tests/fixtures/torch/h200_matmul_trace.json.gz tests/fuzz/kineto/*
mkdir -p "$build/corpus/fuzz_nsys"
for sql in tests/fixtures/nsys/*.sql; do
  out="$build/corpus/fuzz_nsys/$(basename "$sql" .sql).sqlite"
  rm -f "$out"
  python3 -c "import sqlite3, sys; db = sqlite3.connect(sys.argv[2]); db.executescript(open(sys.argv[1]).read()); db.commit()" "$sql" "$out"
done
cp tests/fuzz/nsys/* "$build/corpus/fuzz_nsys/" 2>/dev/null || true
seed fuzz_ptxas_log tests/fixtures/compiler/*.ptxas.txt tests/fixtures/compiler/ptxas_v.txt \
  tests/fixtures/compiler/*.res-usage.txt tests/fuzz/ptxas_log/*
seed fuzz_sass_listing tests/fixtures/compiler/*.sass tests/fixtures/compiler/wgmma.sm_90a.cubin \
  tests/fuzz/sass_listing/*
seed fuzz_tar tests/fuzz/tar/*

max_len() {
  case $1 in fuzz_nsys|fuzz_sass_listing) echo 65536;; fuzz_kineto|fuzz_ncu_csv|fuzz_tar) echo 32768;; *) echo 8192;; esac
}
# The targets run $jobs at a time, each on its own core for its whole FUZZ_SECONDS (the same search
# as one after another, in half the wall time on CI's two cores); reported in the list's order.
fuzz_one() {  # fuzz_one TARGET: its exit status in $build/TARGET.rc
  local t=$1
  mkdir -p "$build/crashes/$t"
  local rc=0
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$build/fuzz/$t" "$build/corpus/$t" -max_total_time="$seconds" -max_len="$(max_len "$t")" \
    -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 \
    -artifact_prefix="$build/crashes/$t/" 2>"$build/$t.log" || rc=$?
  echo "$rc" >"$build/$t.rc"
}
for t in "${targets[@]}"; do
  rm -f "$build/$t.rc"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  echo "== $t for ${seconds}s"
  fuzz_one "$t" &
done
wait
failed=()
for t in "${targets[@]}"; do
  if [ "$(cat "$build/$t.rc" 2>/dev/null || echo missing)" != 0 ]; then
    echo "== $t failed:"
    tail -40 "$build/$t.log"
    failed+=("$t")
  else
    echo "$t: $(grep -E "^stat::number_of_executed_units|^Done" "$build/$t.log" | tr '\n' ' ')"
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: crashes in ${failed[*]}; inputs under $build/crashes/" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} targets ran ${seconds}s each without a crash"
