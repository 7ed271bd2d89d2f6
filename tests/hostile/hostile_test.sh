#!/usr/bin/env bash
# The hostile-driver catalogue (and two hostile specs): each attack ends in its own code or state, nothing outside the store
# changes, no process survives (checked in /proc). Usage: CKO=build/cko bash tests/hostile/hostile_test.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${CKO:?set CKO to the cko binary}"
fail() { echo "  FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d); trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
driver="$here/hostile_driver.py"
root="$tmp/art"
mkdir -p "$tmp/src" "$tmp/src2" "$tmp/outside" && echo 'kernel' > "$tmp/src/k.cu" && echo 'kernel 2' > "$tmp/src2/k.cu"
echo '{"n": 4}' > "$tmp/case.json"
# Outside the store: a file the hostile drivers aim at. Its bytes and mode must never change.
echo 'precious' > "$tmp/outside/victim.txt" && chmod 0600 "$tmp/outside/victim.txt"
export HOSTILE_VICTIM="$tmp/outside/victim.txt" HOSTILE_PIDS="$tmp/pids"
outside_state() { (cd "$tmp/outside" && stat -c '%n %a %s %Y' * && md5sum *); }
outside_before=$(outside_state)
cases=0

# hostile BEHAVIOUR WANT_RC WANT_STATE WANT_CODE [cko flags...]: one attack through `cko driver run`,
# in a store of its own. FSCK=damaged: the attack is one fsck must report (a root driver rewriting
# the store), not one cko can prevent.
hostile() {
  local b=$1 rc=$2 st=$3 code=$4 got; shift 4
  cases=$((cases + 1))
  root="$tmp/art-$b"
  : > "$HOSTILE_PIDS"
  "$CKO" driver run --root "$root" --case-file "$tmp/case.json" --reference "$tmp/src" \
    --correctness-metric max_rel_err --env-allow HOSTILE_PIDS --env-allow HOSTILE_VICTIM "$@" --json \
    -- python3 "$driver" "$b" >"$tmp/$b.json" 2>"$tmp/$b.err"
  got=$?
  [ "$got" -eq "$rc" ] || fail "$b: exited $got, want $rc; stderr: $(head -c 600 "$tmp/$b.err")"
  python3 - "$tmp/$b.json" "$st" "$code" <<'PY' || fail "$b: wrong record (see above)"
import json, sys
raw = open(sys.argv[1], "rb").read()
raw.decode("utf-8")  # strict: every printed document is valid UTF-8
d = json.loads(raw)
state, code = d["result"]["state"], d["result"].get("error", {}).get("code", "")
if (state, code) != (sys.argv[2], sys.argv[3]):
    sys.exit(f"got {state} {code}, want {sys.argv[2]} {sys.argv[3]}")
PY
  no_survivors "$b"
  outside_unchanged "$b"
  fsck_result "$b" "${FSCK:-clean}"
}

no_survivors() {
  local p
  sleep 0.2
  while read -r p; do
    [ -n "$p" ] || continue
    if [ -r "/proc/$p/stat" ] && ! grep -q ') Z ' "/proc/$p/stat"; then
      fail "$1: driver process $p survived: $(tr '\0' ' ' < "/proc/$p/cmdline")"
    fi
  done < "$HOSTILE_PIDS"
}

outside_unchanged() {
  [ "$(outside_state)" = "$outside_before" ] ||
    fail "$1: something outside the store changed: $(ls -la "$tmp/outside")"
}

fsck_result() {
  "$CKO" fsck --root "$root" --json >"$tmp/fsck.json" 2>"$tmp/fsck.err"
  local rc=$?
  python3 - "$tmp/fsck.json" "$2" <<'PY' || fail "$1: fsck --json: rc $rc, $(head -c 800 "$tmp/fsck.json") $(cat "$tmp/fsck.err")"
import json, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
assert d["damaged"] is (sys.argv[2] == "damaged"), d
PY
  if [ "$2" = clean ]; then [ "$rc" -eq 0 ] || fail "$1: fsck exited $rc"; else [ "$rc" -eq 1 ] || fail "$1: fsck exited $rc"; fi
}

hostile ok 0 succeeded ""
# Item 4: a stderr tail cut inside a character and raw invalid bytes; the message still shows the exit.
hostile bad_utf8_stderr 3 failed driver_failed
grep -q 'exited with status 1' "$tmp/bad_utf8_stderr.json" || fail "bad_utf8_stderr: exit status not shown"
hostile huge_stderr_then_fail 3 failed driver_failed
# Item 4: a non-UTF-8 file name in the output dir: refused as undeclared, and fsck --json still works.
hostile bad_utf8_name 3 failed undeclared_output
# Item 2: links and shared inodes: nothing is read, chmodded or ledgered through them.
hostile symlink_out_dir 2 failed symlink_refused
hostile symlink_result 3 failed invalid_driver_result
hostile symlink_extra 3 failed unsafe_output
hostile hardlink_victim 3 failed unsafe_output
hostile special_file 3 failed unsafe_output
# [18]: links declared as artifacts, and files planted in the store outside the output dir, refuse
# the call naming the path (they used to be accepted, left for fsck to note).
hostile symlink_artifact 3 failed unsafe_output
grep -q 'a symbolic link.*evidence.txt' "$tmp/symlink_artifact.json" || fail "symlink_artifact: path not named"
hostile hardlink_artifact 3 failed unsafe_output
grep -q 'a hard link.*evidence.txt' "$tmp/hardlink_artifact.json" || fail "hardlink_artifact: path not named"
hostile plant_in_call_dir 3 failed unsafe_output
grep -q 'driver/0001/planted.json' "$tmp/plant_in_call_dir.json" || fail "plant_in_call_dir: path not named"
hostile plant_in_root 3 failed unsafe_output
grep -q '"planted.json"' "$tmp/plant_in_root.json" || fail "plant_in_root: path not named"
# [18] item 6: a paired driver that reports the reference's samples as the candidate's.
hostile swap_roles 3 failed role_mismatch --mode paired --candidate "$tmp/src2" --capability paired_in_process
grep -q 'measured on the' "$tmp/swap_roles.json" || fail "swap_roles: the message does not say whose samples"
# The same swap in a v1 result (no loaded_digest): read, as v1 promises, with the call noting that
# nothing tied its samples to the roles (before: believed without a word).
hostile swap_roles_v1 0 succeeded "" --mode paired --candidate "$tmp/src2" --capability paired_in_process
grep -q '"roles unchecked: the driver reported no loaded digest' "$tmp/swap_roles_v1.json" ||
  fail "swap_roles_v1: the call does not note its roles unchecked"
# Malformed results, each its own code.
hostile nul_in_result 3 failed invalid_driver_result
hostile deep_json 3 failed invalid_driver_result
hostile duplicate_keys 3 failed invalid_driver_result
# Item 7: nothing outlives the call: daemons that left the group, hangs, SIGTERM ignored, stopped.
hostile setsid_daemon 0 succeeded ""
hostile double_fork_daemon 0 succeeded ""
# [18]: a daemon that also clears its environment (no marker) is found as an orphan of cko's.
hostile clean_env_double_fork_daemon 0 succeeded ""
hostile close_stdout_and_linger 0 succeeded ""
hostile hang 4 timed_out timed_out --command-timeout 1 --cleanup-timeout 1
hostile ignore_term 4 timed_out timed_out --command-timeout 1 --cleanup-timeout 1
hostile stop_self 4 timed_out timed_out --command-timeout 1 --cleanup-timeout 1
# A driver that signals cko itself: a clean cancel with a complete record.
hostile kill_parent 4 cancelled interrupted
# A driver editing the store around it: refused by permissions for a normal user; a root driver
# can write anyway, and then fsck must say so (docs/reliability.md: not guaranteed).
if [ "$(id -u)" -eq 0 ]; then
  FSCK=damaged hostile write_into_store 0 succeeded ""
else
  hostile write_into_store 0 succeeded ""
fi

# Item 3: a non-UTF-8 byte echoed in an error message: --json still prints one valid document.
"$CKO" fsck --root "$tmp/no-$(printf '\377')-such" --json >"$tmp/e.json" 2>/dev/null
[ $? -eq 2 ] || fail "non-UTF-8 root: wrong exit"
python3 - "$tmp/e.json" <<'PY' || fail "non-UTF-8 root: no valid JSON error document"
import json, sys
assert json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))["error"]["code"] == "not_a_store"
PY
cases=$((cases + 1))
# Item 11: a NUL inside a --request string is refused, naming the key (it used to truncate silently).
printf '{"root": "%s\\u0000/elsewhere", "json": true}' "$tmp/art-ok" > "$tmp/nul.json"
"$CKO" fsck --request "$tmp/nul.json" >"$tmp/nul.out" 2>"$tmp/nul.err"
[ $? -eq 2 ] || fail "NUL request: wrong exit"
grep -q 'request key "root".*NUL' "$tmp/nul.err" || fail "NUL request: $(cat "$tmp/nul.err")"
cases=$((cases + 1))

# Item 9: spec paths that escape the spec's folder through a link: refused naming the field, no root made.
for how in via cases; do
  d="$tmp/spec-$how"
  mkdir -p "$d/original" "$d/cases" "$tmp/outside-$how/src"
  echo 'k' > "$d/original/k.cu"; echo 'k' > "$tmp/outside-$how/src/k.cu"; echo '{}' > "$d/cases/c.json"
  if [ "$how" = via ]; then
    ln -s "$tmp/outside-$how" "$d/via"; orig="via/src"; cases_dir="cases"; field="target.original"
  else
    mkdir -p "$tmp/outside-$how/cases"; echo '{}' > "$tmp/outside-$how/cases/c.json"
    ln -s "$tmp/outside-$how/cases" "$d/linked"; orig="original"; cases_dir="linked"; field="cases.dir"
  fi
  cat > "$d/cko.toml" <<TOML
[target]
name = "escape"
claim_layer = "kernel"
original = "$orig"
change_scope = ["$orig/k.cu"]
[cases]
dir = "$cases_dir"
ids = ["c"]
[driver]
argv = ["/bin/true"]
capabilities = ["single_subject"]
[objective]
primary = { name = "latency_us", unit = "us", direction = "lower", aggregation = "median" }
minimum_effect_pct = 5.0
[correctness]
metric = "max_rel_err"
operator = "<="
threshold = 1e-6
TOML
  "$CKO" target freeze --spec "$d/cko.toml" --root "$d/art" --json >"$tmp/esc.json" 2>"$tmp/esc.err"
  rc=$?
  [ "$rc" -eq 2 ] || fail "spec escape ($how): exited $rc; $(cat "$tmp/esc.err")"
  grep -q "$field.*outside the spec" "$tmp/esc.err" || fail "spec escape ($how): $(cat "$tmp/esc.err")"
  [ ! -e "$d/art" ] || fail "spec escape ($how): a root was made"
  cases=$((cases + 1))
done

echo "hostile: $cases cases passed"
