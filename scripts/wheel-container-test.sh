#!/usr/bin/env bash
# [19] The wheel alone on a fresh Debian 12: a minimal bookworm root (debootstrap --variant=minbase,
# plus python3, python3-venv and g++, which the example's Python driver compiles with) that holds
# nothing of this checkout but the wheel and a copy of examples/cpu-saxpy. Inside it (chroot, a clean
# environment): `pip install cko-*.whl` into a venv from no index, `cko doctor`, the example's loop
# (freeze, baseline, experiment, screen, confirm: improved) with the wheel's cko and its cko_driver,
# then `cko self-check`. CI runs it after `make release` (.ci/run); needs root, debootstrap and a
# Debian mirror.
#   scripts/wheel-container-test.sh dist/cko-VERSION-py3-none-manylinux_2_36_x86_64.whl
# ROOTFS=DIR reuses (or keeps) the root there; MIRROR overrides http://deb.debian.org/debian.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
wheel=$(realpath "${1:?usage: scripts/wheel-container-test.sh WHEEL}")
[ -f "$wheel" ] || { echo "no wheel $wheel" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "wheel-container-test: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "wheel-container-test: needs debootstrap (scripts/deps.sh)" >&2; exit 2; }
start=$(date +%s)
keep=${ROOTFS:+1}
root=${ROOTFS:-$(mktemp -d "${TMPDIR:-/tmp}/cko-wheel-root.XXXXXX")}
cleanup() {
  for m in dev/pts dev proc; do umount "$root/$m" 2>/dev/null || true; done
  [ -n "$keep" ] || rm -rf --one-file-system "$root"
}
trap cleanup EXIT

if [ ! -x "$root/usr/bin/g++" ]; then
  debootstrap --variant=minbase --include=python3,python3-venv,g++ bookworm "$root" \
    "${MIRROR:-http://deb.debian.org/debian}" > "$root.debootstrap.log" 2>&1 ||
    { tail -n 30 "$root.debootstrap.log" >&2; exit 1; }
  rm -f "$root.debootstrap.log"
fi
echo "wheel-container: a bookworm root in $(( $(date +%s) - start )) s ($(du -sm --one-file-system "$root" | cut -f1) MB)"
for m in proc dev dev/pts; do mkdir -p "$root/$m"; done
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"

rm -rf "$root/work" && mkdir -p "$root/work"
cp "$wheel" "$root/work/"
cp -r "$repo/examples/cpu-saxpy" "$root/work/ex"
rm -rf "$root/work/ex/build"
# One case, and host load not let decide: a check of the installed packages on a shared CI host.
sed -i 's/^ids = \["small", "large"\]$/ids = ["small"]/' "$root/work/ex/cko.toml"
grep -q '^ids = \["small"\]$' "$root/work/ex/cko.toml" || { echo "the example's cases moved" >&2; exit 1; }
printf '\n[observation]\nmax_host_load_per_cpu = 1000\n' >> "$root/work/ex/cko.toml"

cat > "$root/work/loop.sh" <<'LOOP'
set -euo pipefail
cd /work
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INDEX=1 PIP_NO_CACHE_DIR=1
python3 -m venv /opt/cko
/opt/cko/bin/pip install -q /work/cko-*.whl
export PATH=/opt/cko/bin:$PATH
[ "$(command -v cko)" = /opt/cko/bin/cko ] || { echo "cko on PATH is $(command -v cko)"; exit 1; }
cko --version
cko doctor > /work/doctor.txt || { cat /work/doctor.txt; exit 1; }
echo "doctor: ok"
python3 -c 'import cko_driver, os; p = os.path.dirname(cko_driver.__file__); print("cko_driver from", p); assert p.startswith("/opt/cko/"), p'
cko target freeze --spec /work/ex/cko.toml --root /work/art > /dev/null
cko baseline --root /work/art --calls-per-case 2 > /dev/null
exp=$(cko experiment new --root /work/art --candidate /work/ex/candidate --json \
  --hypothesis "walking rows instead of columns uses whole cache lines" \
  --mechanism loop-order --failure-closes mechanism --no-falsifier-reason "the example's candidate is known" | field 'd["id"]')
cko screen "$exp" --root /work/art --json | field 'd["result"]["state"]' | grep -qx succeeded
verdict=$(cko confirm "$exp" --root /work/art --json | field 'd["result"]["outputs"]["verdict"]')
echo "confirm: $verdict"
[ "$verdict" = improved ]
cko self-check --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["ok"] is True and d["executable"] == "/opt/cko/bin/cko" and d["data_dir"] == "/opt/cko/share/cko", d'
echo "self-check: ok"
LOOP
env -i HOME=/root LANG=C.UTF-8 PATH=/usr/bin:/bin TMPDIR=/tmp "$(command -v chroot)" "$root" /bin/bash /work/loop.sh
echo "wheel-container: $(basename "$wheel") on a fresh bookworm root: doctor, loop (improved), self-check in $(( $(date +%s) - start )) s"
