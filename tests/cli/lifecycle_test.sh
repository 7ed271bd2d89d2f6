#!/usr/bin/env bash
# Detached invocations: status/wait/cancel; an owner killed with SIGKILL becomes `lost` with no
# process left; two cko processes wanting one GPU are serialized.
. "$(dirname "$0")/lib.sh"
fake="$(cd "$(dirname "$0")" && pwd)/fake_driver.py"
root="$tmp/art"
mkdir -p "$tmp/src" && echo 'kernel' > "$tmp/src/k.cu"
echo '{}' > "$tmp/case.json"
drv() { "$CKO" driver run --root "$root" --case-file "$tmp/case.json" --reference "$tmp/src" --env-allow FAKE_PIDS --env-allow FAKE_STAMPS "$@"; }
alive() { for p in "$@"; do if [ -r "/proc/$p/stat" ] && ! grep -q ') Z ' "/proc/$p/stat"; then return 0; fi; done; return 1; }

# --detach prints the id at once; wait returns the terminal state.
expect_rc 0 drv --detach -- python3 "$fake" ok
id=$out
case "$id" in inv-*) ;; *) fail "detach printed '$id'";; esac
expect_rc 0 "$CKO" wait "$id" --root "$root" --timeout 30
contains "$out" "succeeded"

# cancel: the owner kills the driver's group and records `cancelled`.
export FAKE_PIDS="$tmp/cancel.pids"
expect_rc 0 drv --detach -- python3 "$fake" hang
id=$out
for _ in $(seq 100); do [ -s "$FAKE_PIDS" ] && break; sleep 0.05; done
expect_rc 0 "$CKO" status "$id" --root "$root"
contains "$out" "running"
expect_rc 0 "$CKO" cancel "$id" --root "$root" --json
contains "$out" '"state": "cancelled"'
read -r p1 p2 < "$FAKE_PIDS"; sleep 0.2
alive "$p1" "$p2" && fail "cancel left a driver process ($p1 $p2)"

# SIGKILL of the owning cko mid-call: its watchdog kills the driver at once (it does not run on
# until someone looks), and status says lost.
export FAKE_PIDS="$tmp/lost.pids"
"$CKO" driver run --root "$root" --case-file "$tmp/case.json" --reference "$tmp/src" --env-allow FAKE_PIDS -- python3 "$fake" hang >/dev/null 2>&1 &
owner=$!
for _ in $(seq 100); do [ -s "$FAKE_PIDS" ] && break; sleep 0.05; done
read -r p1 p2 < "$FAKE_PIDS"
kill -9 "$owner"; wait "$owner" 2>/dev/null || true  # 137: killed, as intended
for _ in $(seq 60); do alive "$p1" "$p2" || break; sleep 0.05; done
alive "$p1" "$p2" && fail "the driver outlived its SIGKILLed owner ($p1 $p2)"
id=$(ls -t "$root/invocations" | head -n1)
expect_rc 3 "$CKO" status "$id" --root "$root" --json
contains "$out" '"state": "lost"'
sleep 0.2
alive "$p1" "$p2" && fail "lost invocation left processes ($p1 $p2)"
unset FAKE_PIDS

# Two cko processes asking for the same GPU lock: the driver calls never overlap.
export FAKE_STAMPS="$tmp/stamps"
drv --gpu GPU-fake-lock-test -- python3 "$fake" sleep_then_ok >/dev/null 2>&1 &
a=$!
drv --gpu GPU-fake-lock-test -- python3 "$fake" sleep_then_ok >/dev/null 2>&1 &
b=$!
wait "$a" || fail "first locked run failed"
wait "$b" || fail "second locked run failed"
python3 - "$FAKE_STAMPS" <<'PY' || fail "GPU lock did not serialize the calls"
import sys
ev = [l.split() for l in open(sys.argv[1])]
assert [e[0] for e in ev] == ["start", "end", "start", "end"], ev
PY
expect_rc 0 "$CKO" fsck --root "$root"
