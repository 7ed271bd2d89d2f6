#!/usr/bin/env bash
# `cko mcp` over stdio with hostile input sizes (issue [19]): a line over the message cap is refused
# with a JSON-RPC error that does not echo it, the rest of the line is discarded without being
# held (100 MB in, peak RSS well under 100 MB, the refusal within a second), and serving goes on.
. "$(dirname "$0")/lib.sh"

python3 - "$CKO" <<'PY' || fail "cko mcp did not refuse an oversized line cheaply"
import json, os, subprocess, sys, threading, time

cko = sys.argv[1]
proc = subprocess.Popen([cko, "mcp", "--root", "/nonexistent/cko"], stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE)
replies = []
arrived = threading.Event()
def read():
    for line in proc.stdout:
        replies.append((time.monotonic(), line))
        arrived.set()
threading.Thread(target=read, daemon=True).start()

def wait_for(n, timeout):
    deadline = time.monotonic() + timeout
    while len(replies) < n and time.monotonic() < deadline:
        time.sleep(0.005)
    assert len(replies) >= n, f"{len(replies)} replies, expected {n}"

def peak_rss_kib():
    with open(f"/proc/{proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])

# A valid request first: the server serves.
proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
proc.stdin.flush()
wait_for(1, 10)

# 100 MB in one line (a ping whose params hold a huge string), then a ping.
big = b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"' + b"A" * (100 << 20) + b'"}}\n'
started = time.monotonic()
proc.stdin.write(big)
proc.stdin.write(b'{"jsonrpc":"2.0","id":3,"method":"ping"}\n')
proc.stdin.flush()
wait_for(3, 60)
refused_at, refusal = replies[1]
print(f"refused after {refused_at - started:.3f} s, reply {len(refusal)} bytes, "
      f"peak RSS {peak_rss_kib() / 1024:.1f} MiB")
assert len(refusal) < 1000 and b"AAAA" not in refusal, refusal[:300]
r = json.loads(refusal)
assert r["id"] is None and r["error"]["code"] == -32600, r
assert "16777216" in r["error"]["message"], r
assert json.loads(replies[2][1]) == {"jsonrpc": "2.0", "id": 3, "result": {}}, replies[2][1][:300]
# What the brief of the fix asks: refused within 1 s, memory bounded far below the input.
assert refused_at - started < 1.0, refused_at - started
assert peak_rss_kib() < 100 * 1024, peak_rss_kib()

# Under the cap, a long line that is not JSON: the parse error says where, and quotes nothing.
proc.stdin.write(b'{"jsonrpc":"2.0","id":4,"method":"' + b"B" * (1 << 20) + b"\n")
proc.stdin.flush()
wait_for(4, 30)
r = replies[3][1]
assert len(r) < 1000 and b"BBBB" not in r, r[:300]
assert json.loads(r)["error"]["code"] == -32700, r
proc.stdin.close()
assert proc.wait(30) == 0
PY

# The cap is a flag: one byte over it is refused, the cap itself is served.
line=$(printf '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"p":"%s"}}' "$(head -c 100 /dev/zero | tr '\0' x)")
n=${#line}
expect_rc 0 bash -c "printf '%s\n%s\n' '$line' '$line' | '$CKO' mcp --max-message-bytes $n; printf '%s\n' '$line' | '$CKO' mcp --max-message-bytes $((n - 1))"
python3 - "$out" <<'PY' || fail "--max-message-bytes was not the cap: $out"
import json, sys
r = [json.loads(l) for l in sys.argv[1].splitlines()]
assert [x.get("result") for x in r[:2]] == [{}, {}], r
assert r[2]["error"]["code"] == -32600 and r[2]["error"]["data"]["max_message_bytes"] > 0, r
PY
expect_rc 2 "$CKO" mcp --max-message-bytes 0

# SIGTERM or SIGINT to `cko mcp` cancels the calls it runs: the driver is ended, the invocation is
# `cancelled` (not left to be declared `lost`), the call is answered, and the server exits 4.
mkdir -p "$tmp/ref"
echo "// kernel" > "$tmp/ref/k.cu"
echo '{}' > "$tmp/case.json"
for sig in TERM INT; do
  python3 - "$CKO" "$tmp" "$sig" <<'PY' || fail "SIG$sig to cko mcp did not cancel its running call"
import json, os, signal, subprocess, sys, time

cko, tmp, sig = sys.argv[1], sys.argv[2], sys.argv[3]
root, pidfile = os.path.join(tmp, "art-" + sig), os.path.join(tmp, "driver-" + sig + ".pid")
proc = subprocess.Popen([cko, "mcp", "--root", root], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(m):
    proc.stdin.write((json.dumps(m) + "\n").encode())
    proc.stdin.flush()
send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
      "params": {"name": "driver_run", "_meta": {"progressToken": "p"},
                 "arguments": {"case_file": os.path.join(tmp, "case.json"),
                               "reference": os.path.join(tmp, "ref"),
                               "argv": ["sh", "-c", f"echo $$ > {pidfile}; exec sleep 120"]}}})
inv = None
while inv is None:
    m = json.loads(proc.stdout.readline())
    text = m.get("params", {}).get("message", "")
    if text.startswith("invocation "):
        inv = text.split()[1]
deadline = time.monotonic() + 30
while not os.path.exists(pidfile) or not open(pidfile).read().strip():
    assert time.monotonic() < deadline, "the driver never started"
    time.sleep(0.05)
driver = int(open(pidfile).read())
proc.send_signal(getattr(signal, "SIG" + sig))
rest = proc.stdout.read()
rc = proc.wait(60)
assert rc == 4, f"cko mcp ended with {rc} (a negative rc is the signal that killed it)"
reply = [json.loads(l) for l in rest.splitlines() if b'"id":1' in l]
assert reply and reply[0]["result"]["isError"] is True, rest[-500:]
assert reply[0]["result"]["structuredContent"]["state"] == "cancelled", reply[0]["result"]
st = json.loads(subprocess.run([cko, "status", inv, "--root", root, "--json"],
                               capture_output=True).stdout)
assert st["state"] == "cancelled", st["state"]
try:
    os.kill(driver, 0)
    raise AssertionError(f"the driver {driver} still runs")
except ProcessLookupError:
    pass
PY
done

# SIGTERM mid-confirm: the confirm's invocation records `cancelled` (its result.json, not `lost`),
# no driver process of it survives, and the server exits 4. A one-case Target on the synthetic
# workload (cases_driver.py) whose candidate sleeps 0.4 s a timed call, so the confirm is measuring.
C="$tmp/confirm"
mkdir -p "$C/original" "$C/slow" "$C/cases"
echo '{"factor": {}}' > "$C/original/model.json"
echo '{"factor": {"a": 2.0}, "sleep_s": 0.4}' > "$C/slow/model.json"
echo '{"case": "a"}' > "$C/cases/a.json"
cp "$(dirname "$0")/cases_driver.py" "$C/driver.py"
cat > "$C/cko.toml" <<TOML
[target]
name = "slow-confirm"
claim_layer = "kernel"
original = "original"
change_scope = ["original/model.json"]
[cases]
dir = "cases"
ids = ["a"]
[driver]
argv = ["python3", "$C/driver.py"]
capabilities = ["single_subject", "paired_in_process"]
identity_paths = ["driver.py"]
env_allow = ["PATH", "PYTHONPATH"]
[objective]
primary = { name = "latency_us", unit = "us", direction = "lower", aggregation = "median" }
minimum_effect_pct = 5.0
[observation]
max_host_load_per_cpu = 1000
max_host_steal_pct = 100
[correctness]
metric = "max_rel_err"
operator = "<="
threshold = 1e-6
[statistics]
min_pairs = 6
max_pairs = 40
samples_per_call = 3
TOML
export PYTHONPATH="$(cd "$(dirname "$0")/../../sdk/python" && pwd)"
expect_rc 0 "$CKO" target freeze --spec "$C/cko.toml" --root "$C/art"
expect_rc 0 "$CKO" baseline --root "$C/art" --calls-per-case 1 --aa-pairs 6
expect_rc 0 "$CKO" experiment new --root "$C/art" --candidate "$C/slow" --hypothesis "h" --mechanism m \
  --failure-closes mechanism --no-falsifier-reason r --json
exp=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
python3 - "$CKO" "$C" "$exp" <<'PY' || fail "SIGTERM mid-confirm did not leave the confirm cancelled"
import json, os, signal, subprocess, sys, time

cko, C, exp = sys.argv[1:4]
driver = os.path.join(C, "driver.py")

def drivers():
    """The pids of the processes running this Target's driver."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if driver.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found

proc = subprocess.Popen([cko, "mcp", "--root", os.path.join(C, "art")], stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE)
proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": "confirm", "_meta": {"progressToken": "p"}, "arguments": {"experiment": exp}}}) + "\n").encode())
proc.stdin.flush()
inv, measuring = None, False
while not measuring:  # until the first pair is under way
    m = json.loads(proc.stdout.readline())
    assert m.get("method") == "notifications/progress", m
    text = m["params"].get("message", "")
    if text.startswith("invocation "):
        inv = text.split()[1]
    measuring = m["params"].get("_meta", {}).get("cko/unit") == "pairs"
deadline = time.monotonic() + 30
while not drivers():
    assert time.monotonic() < deadline, "no driver process started"
    time.sleep(0.05)
proc.send_signal(signal.SIGTERM)
rest = proc.stdout.read()
rc = proc.wait(60)
assert rc == 4, f"cko mcp ended with {rc} (a negative rc is the signal that killed it)"
reply = [json.loads(l) for l in rest.splitlines() if b'"id":1' in l]
assert reply and reply[0]["result"]["isError"] is True, rest[-500:]
assert reply[0]["result"]["structuredContent"]["state"] == "cancelled", reply[0]["result"]["structuredContent"]
with open(os.path.join(C, "art", "invocations", inv, "result.json")) as f:
    stored = json.load(f)
assert stored["state"] == "cancelled" and stored["error"]["code"] == "interrupted", stored
assert not drivers(), f"driver processes survive: {drivers()}"
st = json.loads(subprocess.run([cko, "status", inv, "--root", os.path.join(C, "art"), "--json"],
                               capture_output=True).stdout)
assert st["state"] == "cancelled", st["state"]
PY
echo "ok"
