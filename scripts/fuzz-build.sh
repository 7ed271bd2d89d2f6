# Sourced by scripts/fuzz.sh and scripts/sanitize.sh: configures $build (default build-fuzz/) with
# clang, ASan+UBSan and libFuzzer's coverage on every library. One compile serves both: the unit and
# CLI tests run under the sanitizers (`make sanitize`), and the fuzz targets link the same objects.
# -O1 and line tables only: what sanitizer builds use (Chromium's, LLVM's), half the compile of -O2 -g.
# The libraries compile unity (cmake/CkoUnity.cmake; each test binary merges its files by eights,
# whatever the build): about half the compile of CI's sanitizer stage, and a unity clash fails
# there, before `make static`.
build=${FUZZ_BUILD:-build-fuzz}
jobs=$(nproc)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
command -v clang++ >/dev/null || { echo "${0##*/}: clang++ not found (make deps installs clang)" >&2; exit 1; }
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" -DCKO_BUILD_BENCH=OFF \
  -DCKO_FUZZ=ON -DCKO_SANITIZE=address,undefined -DCKO_UNITY_BUILD=ON "${launcher[@]}" >/dev/null
