#!/usr/bin/env bash
# The invocation runtime against fake drivers: each failure its own code, a complete record, no survivors.
. "$(dirname "$0")/lib.sh"
fake="$(cd "$(dirname "$0")" && pwd)/fake_driver.py"
root="$tmp/art"
mkdir -p "$tmp/src" && echo 'kernel' > "$tmp/src/k.cu"
echo '{"n": 4}' > "$tmp/case.json"
run() {  # run BEHAVIOUR [extra cko flags...]
  local b=$1; shift
  "$CKO" driver run --root "$root" --case-file "$tmp/case.json" --reference "$tmp/src" \
    --correctness-metric max_rel_err --env-allow FAKE_PIDS "$@" --json -- python3 "$fake" "$b"
}
state_of() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["result"]["state"], d["result"].get("error",{}).get("code",""))' "$1"; }
# A pid is alive while /proc says so and it is no zombie; its stat is read once (a process reaped
# between two reads was counted alive).
alive() {
  local p s
  for p in "$@"; do
    s=$(cat "/proc/$p/stat" 2>/dev/null) || continue
    [[ $s == *") Z "* ]] || return 0
  done
  return 1
}
# Killed processes may still be on their way out under load: wait up to 5 s before calling them survivors.
still_alive() { local i; for i in $(seq 50); do alive "$@" || return 1; sleep 0.1; done; return 0; }

# Success: a complete record, exit 0, samples read.
expect_rc 0 run ok --mode single --samples 3
echo "$out" > "$tmp/ok.json"
[ "$(state_of "$tmp/ok.json")" = "succeeded " ] || fail "ok: $(state_of "$tmp/ok.json")"
contains "$out" '"driver_calls": 1'

# The same call through --request: keys are option names, the driver argv is the positional "argv".
cat > "$tmp/req.json" <<JSON
{"root": "$root", "case_file": "$tmp/case.json", "reference": "$tmp/src", "mode": "single",
 "samples": 2, "json": true, "argv": ["python3", "$fake", "ok"]}
JSON
expect_rc 0 "$CKO" driver run --request "$tmp/req.json"
contains "$out" '"state": "succeeded"'
echo '{"root": "x", "argv": ["true"], "sample": 3}' > "$tmp/bad.json"
expect_rc 2 "$CKO" driver run --request "$tmp/bad.json"
contains "$err" 'request key "sample" is not a key of this verb'

# Each misbehaviour: its own error code, a terminal result, exit code of its class.
check() {  # check BEHAVIOUR WANT_RC WANT_STATE WANT_CODE [flags...]
  local b=$1 rc=$2 st=$3 code=$4; shift 4
  expect_rc "$rc" run "$b" "$@"
  echo "$out" > "$tmp/$b.json"
  [ "$(state_of "$tmp/$b.json")" = "$st $code" ] || fail "$b: got '$(state_of "$tmp/$b.json")', want '$st $code'"
}
check fail 3 failed driver_failed
contains "$out" "out of memory"
check no_result 3 failed missing_result
check nan 3 failed non_finite_sample
check wrong_count 3 failed sample_count_mismatch --mode single --samples 3
check extra_file 3 failed undeclared_output
check huge_stdout 0 succeeded ""
contains "$out" '"stdout_truncated": true'

# A hanging driver whose child hangs too, and one that ignores SIGTERM: killed at the deadline,
# whole group, nothing survives.
for b in hang ignore_term; do
  export FAKE_PIDS="$tmp/$b.pids"
  start=$(date +%s)
  check "$b" 4 timed_out timed_out --command-timeout 1 --cleanup-timeout 1
  [ $(( $(date +%s) - start )) -lt 15 ] || fail "$b took too long"
  read -r p1 p2 < "$FAKE_PIDS"
  still_alive "$p1" "$p2" && fail "$b: a driver process survived ($p1 $p2)"
  unset FAKE_PIDS
done

# Every invocation left a request, events and a terminal result, and the store is consistent.
n=$(ls "$root/invocations" | wc -l)
[ "$n" -eq 10 ] || fail "expected 10 invocations, found $n"
for d in "$root"/invocations/inv-*; do
  for f in request.json events.jsonl result.json; do [ -s "$d/$f" ] || fail "$d lacks $f"; done
done
expect_rc 0 "$CKO" fsck --root "$root"
expect_rc 0 "$CKO" ls --root "$root"
contains "$out" "timed_out"

# fsck finds a flipped byte in a record.
victim=$(ls "$root"/invocations/*/result.json | head -n1)
chmod u+w "$victim"; python3 - "$victim" <<'PY'
import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[5]^=1; open(p,'wb').write(b)
PY
expect_rc 1 "$CKO" fsck --root "$root"
contains "$out" "DAMAGE"
