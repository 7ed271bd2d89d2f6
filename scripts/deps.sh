#!/usr/bin/env bash
# Installs the Debian packages cko builds and tests with; does nothing when all are present.
# scripts/deps.sh --demo installs only what `make demo` needs: the compiler, cmake and ninja, the
# libraries the cko binary links and python3 (scripts/demo.sh reads cko's JSON with it). Without
# --demo: everything `make test` and `make bench` need as well.
set -euo pipefail
demo_packages=(
  build-essential cmake ninja-build pkg-config ccache python3
  nlohmann-json3-dev libsimdjson-dev libsqlite3-dev libcli11-dev libfmt-dev libtomlplusplus-dev
  libssl-dev zlib1g-dev libzstd-dev
)
test_packages=(
  file python3-pytest python3-jsonschema
  zstd  # tests/cli/bundle_test.sh opens a bundle with the zstd tool to tamper with it
  python3-venv  # the wheel test (tests/cli/release_test.sh) installs it into a fresh venv
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
  slurm-wlm munge  # the Slurm launcher test (tests/cli/slurm_test.sh) starts a one-node cluster
  chromium  # the browser test of the HTML report (tests/cli/report_browser.sh), headless
  python3-torch  # the torch examples' CPU tests (1.13, CPU): ~1.5 min, 166 packages, 633 MB installed
  nodejs    # the MCP SDK client test and the skills-install test (tests/mcp/, packages pinned in its lock file)
  clang-format-14  # scripts/format-check.sh
  debootstrap  # CI's fresh Debian 12 root for the wheel alone (scripts/wheel-container-test.sh)
)
case "${1:-}" in
  --demo) what="demo"; packages=("${demo_packages[@]}") ;;
  "") what="all"; packages=("${demo_packages[@]}" "${test_packages[@]}") ;;
  *) echo "usage: scripts/deps.sh [--demo]" >&2; exit 2 ;;
esac
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# Debian ships npm as its own package; NodeSource's nodejs holds it (and conflicts with Debian's).
if [ "$what" = all ] && ! command -v npm >/dev/null 2>&1; then
  missing+=(npm)
fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} packages present ($what)"
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
