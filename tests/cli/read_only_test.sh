#!/usr/bin/env bash
# Reads never write: on a store that holds a whole loop and an invocation whose owner was killed
# (a `lost` waiting to be declared), every reading verb leaves every file, directory, size, mode,
# mtime and byte as it was. Declaring `lost` is the explicit step `status` (and ls, wait, cancel,
# operations) takes: `status` of the orphan then writes its result, and nothing else.
. "$(dirname "$0")/lib.sh"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
ex="$repo/examples/cpu-saxpy"
fake="$repo/tests/cli/fake_driver.py"
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

t="$tmp/t"; A="$t/art"
saxpy_target "$t" "$ex/original"
expect_rc 0 "$CKO" target freeze --spec "$t/cko.toml" --root "$A"
expect_rc 0 "$CKO" baseline --root "$A" --calls-per-case 1 --aa-pairs 6 --json
expect_rc 0 "$CKO" experiment new --root "$A" --candidate "$ex/candidate" --hypothesis "rows are contiguous" \
  --mechanism loop-order --failure-closes mechanism --no-falsifier-reason "known" --json
exp=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 0 "$CKO" screen "$exp" --root "$A" --json
expect_rc 0 "$CKO" confirm "$exp" --root "$A" --json
conf=$(printf '%s' "$out" | field 'd["id"]')
expect_rc 0 "$CKO" champion select --root "$A" --experiment "$exp" --confirm "$conf" --json
sel=$(printf '%s' "$out" | field 'd["id"]')

# An orphan: a driver call whose owner (cko itself) is killed mid-call.
mkdir -p "$tmp/src" && echo 'kernel' > "$tmp/src/k.cu" && echo '{"n": 4}' > "$tmp/case.json"
export FAKE_PIDS="$tmp/orphan.pids"
"$CKO" driver run --root "$A" --case-file "$tmp/case.json" --reference "$tmp/src" --correctness-metric max_rel_err \
  --env-allow FAKE_PIDS --command-timeout 60 -- python3 "$fake" hang >/dev/null 2>&1 &
owner=$!
for _ in $(seq 100); do [ -s "$FAKE_PIDS" ] && break; sleep 0.1; done
[ -s "$FAKE_PIDS" ] || { kill -KILL "$owner"; fail "the hanging driver never started"; }
kill -KILL "$owner"; wait "$owner" 2>/dev/null || true
unset FAKE_PIDS
orphan=$(grep -l '"hang"' "$A"/invocations/*/request.json | xargs -n1 dirname | xargs -n1 basename)
[ -n "$orphan" ] && [ ! -e "$A/invocations/$orphan/result.json" ] || fail "no orphan without a result"
cleanup_orphan() {  # the hanging driver and its child must not outlive the test
  local p; for p in $(cat "$tmp/orphan.pids" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
}
trap 'cleanup_orphan; rm -rf "$tmp"' EXIT

state() {  # every entry's path, type, size, mode and mtime, and every file's bytes
  (cd "$A" && find . -printf '%p|%y|%s|%m|%T@\n' | LC_ALL=C sort && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
}
state > "$tmp/before"
digest=$(ls "$A/objects/sha256" | grep -v '^\.' | head -n1)
reads=(
  "history" "history --json" "report" "report --json" "report --out $tmp/report.html" "handoff"
  "handoff --out $tmp/handoff.md"
  "champion show" "champion show --json" "fsck" "fsck --json" "bundle --out $tmp/case.tar.zst"
  "show target" "show champion" "show $exp" "show $conf" "show $sel" "show $orphan" "show ${digest:0:12}"
  "status $conf" "status $conf --json" "hypotheses list" "hypotheses list --json"
)
for r in "${reads[@]}"; do
  # shellcheck disable=SC2086
  "$CKO" $r --root "$A" >/dev/null 2>"$tmp/err" || fail "cko $r failed: $(cat "$tmp/err")"
  state > "$tmp/after"
  diff "$tmp/before" "$tmp/after" > "$tmp/diff" || fail "cko $r wrote to the store: $(cat "$tmp/diff")"
done
[ ! -e "$A/invocations/$orphan/result.json" ] || fail "a read declared the orphan lost"
# show of the orphan read its state without declaring it: still running, owner gone.
expect_rc 0 "$CKO" show "$orphan" --root "$A" --json
[ "$(printf '%s' "$out" | field 'd["state"]')" = running ] || fail "show changed the orphan's state: $out"
[ "$(printf '%s' "$out" | field 'd["owner_alive"]')" = False ] || fail "the orphan's owner is alive: $out"

# `cko mcp --read-only` offers ls, status and wait; through it they report the orphan as it stands
# (running, owner gone) and declare nothing: they wrote its result before.
python3 - "$CKO" "$A" "$orphan" > "$tmp/mcp.out" <<'PY'
import json, subprocess, sys, time
cko, root, orphan = sys.argv[1:]
msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
         "capabilities": {}, "clientInfo": {"name": "read-only-test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ls", "arguments": {"root": root}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "status", "arguments": {"root": root, "id": orphan}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "wait", "arguments": {"root": root, "id": orphan, "timeout": 20}}},
        {"jsonrpc": "2.0", "id": 5, "method": "resources/list", "params": {}}]
p = subprocess.Popen([cko, "mcp", "--read-only", "--root", root], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
for m in msgs:
    p.stdin.write(json.dumps(m) + "\n")
p.stdin.flush()
got, t0 = {}, time.time()
while len(got) < 5:
    line = p.stdout.readline()
    if not line:
        break
    r = json.loads(line)
    if "id" in r:
        got[r["id"]] = r
p.stdin.close()
p.wait(timeout=30)
assert sorted(got) == [1, 2, 3, 4, 5], got
ls = got[2]["result"]["structuredContent"]
mine = [i for i in ls["invocations"] if i["id"] == orphan]
assert mine and mine[0]["state"] == "running" and mine[0]["owner_alive"] is False, mine
st = got[3]["result"]["structuredContent"]
assert st.get("state") == "running" and st.get("owner_alive") is False, got[3]
w = got[4]["result"]
assert w["isError"] and w["structuredContent"]["error"]["code"] == "still_running", w
assert "its owner process is gone" in w["structuredContent"]["error"]["message"], w
assert w["structuredContent"]["error"]["details"]["owner_alive"] is False, w
assert time.time() - t0 < 15, "wait under --read-only waited for an owner that is gone"
print("ok")
PY
[ "$(cat "$tmp/mcp.out")" = ok ] || fail "mcp --read-only: $(cat "$tmp/mcp.out")"
state > "$tmp/after"
diff "$tmp/before" "$tmp/after" > "$tmp/diff" || fail "cko mcp --read-only wrote to the store: $(cat "$tmp/diff")"

# The explicit step: status declares it lost, writing its result (and ledger line), nothing else.
expect_rc 3 "$CKO" status "$orphan" --root "$A" --json
[ "$(field 'd["state"]' < "$A/invocations/$orphan/result.json")" = lost ] || fail "status did not record lost"
state > "$tmp/after"
changed=$({ diff "$tmp/before" "$tmp/after" || true; } | grep '^>' | cut -d'|' -f1 | sed 's/^> //' | grep -v '^[0-9a-f]\{64\} ' | LC_ALL=C sort -u | tr '\n' ' ')
[ "$changed" = "./invocations/$orphan ./invocations/$orphan/result.json ./ledger.jsonl " ] \
  || [ "$changed" = ". ./invocations/$orphan ./invocations/$orphan/result.json ./ledger.jsonl " ] \
  || fail "status changed more than the orphan's result and the ledger: $changed"
# Once declared, a read (and ls: nothing left to declare) changes nothing again.
state > "$tmp/before"
for r in "ls" "ls --json" "history" "status $orphan"; do
  # shellcheck disable=SC2086
  "$CKO" $r --root "$A" >/dev/null 2>&1 || [ $? -eq 3 ]
  state > "$tmp/after"
  diff "$tmp/before" "$tmp/after" > "$tmp/diff" || fail "cko $r wrote to the store: $(cat "$tmp/diff")"
done
