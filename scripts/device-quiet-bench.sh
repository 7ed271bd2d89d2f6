#!/usr/bin/env bash
# The [21] benches on a quiet host: the device machine, pinned to two CPUs (taskset) so its figures
# compare with the 2-core development VM's, but with nothing else running. It runs the bench
# programs themselves (bench_request_cost, bench_ncu_verb, bench_kineto, bench_map), built on the
# development machine and carried with the non-glibc libraries they link (scripts/bench-carry.sh
# puts both in build-portable/bench/), against the portable cko.
#
# Usage (GPU host): CPUS=2,3 OUT=/tmp/quiet bash scripts/device-quiet-bench.sh
# What comes back in $OUT: one log per bench (Google Benchmark's console output with the counters)
# and host.txt (CPU model, load before and after, kernel, which cores the pinned CPUs are).
# BEFORE=FILE (another build's portable cko): bench_kineto reads each trace with both builds,
# alternating, so that a change compares on one quiet host. REAL_TRACE=1 (a GPU and PyTorch):
# a real trace recorded by bench/record_torch_trace.py is read too, beside the generated ones.
# CKO_KINETO_BENCH_HTA=DIR (a copy of HTA's source, its `hta` package in DIR, and pandas):
# bench_kineto times HTA loading each trace too (bench/hta_load.py), the anchor of the 510 MB goal,
# with the first python3 that has pandas (the GPU hosts': /opt/torch/.venv) unless
# CKO_KINETO_BENCH_PYTHON names one; CKO_KINETO_BENCH_RUNS=1 keeps a 510 MB round to minutes.
# HTA's time depends on the trace's ProfilerStep count (docs/profile-traces.md): time it on a
# generated trace of a few steps (OPS_PER_STEP=32768, passed to gen_kineto_trace.py --ops-per-step)
# or the real one.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
OUT=${OUT:-/tmp/cko-quiet}
CPUS=${CPUS:-2,3}
mkdir -p "$OUT"
bin=$repo/build-portable/bench
[ -d "$bin" ] || { echo "device-quiet-bench: no $bin (run scripts/bench-carry.sh first)" >&2; exit 2; }
export CKO_BENCH_BINARY=$repo/build-portable/cko
if [ -n "${CKO_KINETO_BENCH_HTA:-}" ] && [ -z "${CKO_KINETO_BENCH_PYTHON:-}" ]; then
  for p in /opt/torch/.venv/bin/python3 $(which -a python3); do
    "$p" -c 'import pandas' 2>/dev/null && { export CKO_KINETO_BENCH_PYTHON=$p; break; }
  done
fi
# The benches find the SDK, the fixtures and the trace generator under the source folder compiled
# into them (the development machine's); point that path at this copy of the repository.
src=$(cat "$bin/source_dir")
if [ "$src" != "$repo" ] && [ ! -e "$src" ]; then
  mkdir -p "$(dirname "$src")" && ln -s "$repo" "$src" || echo "device-quiet-bench: cannot link $src" >&2
fi
{
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-) ($(nproc) CPUs; pinned to $CPUS)"
  echo "kernel: $(uname -r)"
  # Two CPUs of one core (hyperthreads) would share it: the core and socket of each pinned CPU.
  echo "pinned CPUs (cpu core socket): $(lscpu -p=CPU,CORE,SOCKET 2>/dev/null | grep -v '^#' |
    awk -F, -v want=",$CPUS," 'index(want, "," $1 ",") {printf "%s ", $0}')"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "python3: $(python3 --version 2>&1)"
} | tee "$OUT/host.txt"
run() {  # run NAME ARGS...: one bench program, pinned, its console output kept
  local name=$1; shift
  echo "== $name $*"
  taskset -c "$CPUS" "$bin/$name" "$@" 2>&1 | tee "$OUT/$name.log" | grep -E '^BM_|^---|^Benchmark' || true
}
run bench_request_cost --benchmark_filter='BM_ScreenRequestCost'
run bench_ncu_verb --benchmark_filter='100MB'
# 96 MB and 510 MB generated traces (gen_kineto_trace.py), the verb as a child process, each run
# beside Python's json.load of the same trace (the floor on HTA's time, bench/kineto_bench.cpp;
# about a minute at 510 MB on the H100 hosts; CKO_KINETO_BENCH_FLOOR=0 skips it).
kineto() {  # kineto NAME TRACE: the verb on TRACE, this build (and BEFORE's, alternating)
  local builds=(after)
  [ -n "${BEFORE:-}" ] && builds=(after before after before)
  local i=0
  for b in "${builds[@]}"; do
    i=$((i + 1))
    local binary=$repo/build-portable/cko
    [ "$b" = before ] && binary=$BEFORE
    CKO_BENCH_BINARY=$binary CKO_KINETO_BENCH_TRACE=$2 run bench_kineto \
      --benchmark_filter='BM_ProfileTorchVerb'
    mv "$OUT/bench_kineto.log" "$OUT/bench_kineto_$1_${b}_$i.log"
  done
}
tmp=$(mktemp -d)
for mb in 96 510; do
  python3 "$repo/bench/gen_kineto_trace.py" --size-mb "$mb" --ops-per-step "${OPS_PER_STEP:-64}" \
    --out "$tmp/trace_${mb}mb.json" >/dev/null
  kineto "${mb}mb" "$tmp/trace_${mb}mb.json"
  rm -f "$tmp/trace_${mb}mb.json"
done
if [ -n "${REAL_TRACE:-}" ]; then
  python3 "$repo/bench/record_torch_trace.py" --size-mb 96 --out "$tmp/real.json" | tee "$OUT/real_trace.txt"
  kineto real "$tmp/real.json"
fi
rm -rf "$tmp"
CKO_MAP_BENCH_SIZES=50,150,500 run bench_map --benchmark_filter='BM_MapVerbScaling'
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/host.txt"
