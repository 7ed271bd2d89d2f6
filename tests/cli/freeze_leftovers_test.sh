#!/usr/bin/env bash
# Issue [18]: what earlier freezes leave behind is reclaimed by the next freeze, once their process is
# gone, and the freeze says so: a killed freeze's hidden staging root beside --root (and its store
# staging), a failed freeze's kept smoke logs (cko-failed-freeze-<name>-*) and a killed identity
# probe's scratch folder (cko-env-<pid>-*) in the temp dir. A leftover whose process still runs is
# left alone. (Before, all stayed until removed by hand.)
. "$(dirname "$0")/lib.sh"
ex="$(cd examples/cpu-saxpy && pwd)"
export TMPDIR="$tmp/tmpdir"; mkdir -p "$TMPDIR"

# A failed freeze (its smoke fails) keeps its driver's logs in the temp dir, as its message says.
saxpy_target "$tmp/bad" "$ex/original"
sed -i "s#argv = \[.*\]#argv = [\"/bin/false\"]#" "$tmp/bad/cko.toml"
expect_rc 3 "$CKO" target freeze --spec "$tmp/bad/cko.toml" --root "$tmp/art"
kept=$(ls -d "$TMPDIR"/cko-failed-freeze-saxpy-small-* )
contains "$err" "$kept"
# A freeze killed while its smoke ran: its staging root and the store staging inside it, named by
# a pid that is gone; and one of a freeze still running (this shell's pid).
sleep 0 & gone=$!; wait "$gone"
mkdir -p "$tmp/.art.freeze-$gone/objects" "$tmp/..art.freeze-$gone.staging-Ab12Cd" "$tmp/.art.freeze-$$"
# Another Target's failed freeze is not this one's to reclaim.
mkdir -p "$TMPDIR/cko-failed-freeze-other-$gone-1700000000"
# The identity probe's scratch folder of a cko killed while a tool ran (tests/crash found it left),
# and one of a cko still running.
mkdir -p "$TMPDIR/cko-env-$gone-Zx9Yw8" "$TMPDIR/cko-env-$$-Qr7St6"

saxpy_target "$tmp/good" "$ex/original"
expect_rc 0 "$CKO" target freeze --spec "$tmp/good/cko.toml" --root "$tmp/art"
contains "$out" "reclaimed what earlier freezes left (their process is gone):"
contains "$out" "$kept"
contains "$out" "$tmp/.art.freeze-$gone"
[ ! -e "$kept" ] || fail "the failed freeze's logs were not reclaimed"
[ ! -e "$tmp/.art.freeze-$gone" ] || fail "the killed freeze's staging root was not reclaimed"
[ ! -e "$tmp/..art.freeze-$gone.staging-Ab12Cd" ] || fail "the killed freeze's store staging was not reclaimed"
[ -d "$tmp/.art.freeze-$$" ] || fail "a running freeze's staging root was removed"
[ -d "$TMPDIR/cko-failed-freeze-other-$gone-1700000000" ] || fail "another Target's logs were removed"
contains "$out" "$TMPDIR/cko-env-$gone-Zx9Yw8"
[ ! -e "$TMPDIR/cko-env-$gone-Zx9Yw8" ] || fail "a killed identity probe's scratch folder was not reclaimed"
[ -d "$TMPDIR/cko-env-$$-Qr7St6" ] || fail "a running cko's scratch folder was removed"
expect_rc 0 "$CKO" fsck --root "$tmp/art"
echo "freeze_leftovers_test: ok"
