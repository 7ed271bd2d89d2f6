#!/usr/bin/env bash
# Packs the bench programs that time cko's verbs as child processes (bench_request_cost,
# bench_ncu_verb, bench_kineto, bench_map) from BUILD (default build/) into build-portable/bench/,
# stripped, with an rpath to the libraries they link that are not glibc's (lib/) and the source folder compiled
# into them (source_dir), so that scripts/device-quiet-bench.sh can run them on a host that has
# neither Google Benchmark nor simdjson. build-portable/ is what a device run carries.
set -euo pipefail
command -v patchelf >/dev/null || { echo "bench-carry: needs patchelf (apt-get install patchelf)" >&2; exit 2; }
cd "$(dirname "$0")/.."
build=${1:-build}
dest=build-portable/bench
rm -rf "$dest" && mkdir -p "$dest/lib"
for b in bench_request_cost bench_ncu_verb bench_kineto bench_map; do
  [ -x "$build/bench/$b" ] || { echo "bench-carry: no $build/bench/$b (build it first)" >&2; exit 2; }
  strip -o "$dest/$b" "$build/bench/$b"
  patchelf --set-rpath '$ORIGIN/lib' "$dest/$b"  # only the bench finds lib/, not its children
  ldd "$build/bench/$b" | awk '/=> \//{print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*) ;;
      *) cp -L -n "$lib" "$dest/lib/" ;;
    esac
  done
done
grep -m1 '^CMAKE_HOME_DIRECTORY' "$build/CMakeCache.txt" | cut -d= -f2 > "$dest/source_dir"
du -sh "$dest"
