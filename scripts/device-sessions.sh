#!/usr/bin/env bash
# GPU seconds to a verdict, one process per driver call against persistent driver sessions ([13]):
# for each example, the same Target (spec, original, cases, candidate) is frozen twice, once with the
# capability `session` removed and once with it, and the same confirm runs under both, one after the
# other in this one run. Prints, per example and mode: pairs to the verdict, GPU seconds per pair and
# to the verdict (outputs.to_verdict), driver-call seconds, and the process/session ratios.
#
# Usage (GPU host, portable binary, PyTorch installed):
#   CKO=build-portable/cko OUT=/tmp/cko-sessions bash scripts/device-sessions.sh
# CPU check of the script's logic (no GPU: the cpu-saxpy example, and torch-softmax on the CPU when
# torch imports; GPU seconds are 0 there, so the ratios are of driver-call seconds):
#   CKO=build/cko bash scripts/device-sessions.sh --cpu
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
cpu=0
[ "${1:-}" = --cpu ] && cpu=1
OUT=${OUT:-/tmp/cko-sessions}
CKO=${CKO:-$repo/build-portable/cko}
[ -x "$CKO" ] || { echo "device-sessions: no cko binary at $CKO (set CKO=...)" >&2; exit 2; }
CKO=$(cd "$(dirname "$CKO")" && pwd)/$(basename "$CKO")
export CKO_DATA_DIR=$repo
export PATH=$PATH:/usr/local/cuda/bin
# Only a folder this script made before is cleared (it holds summary.jsonl), never another one.
if [ -e "$OUT" ] && [ -n "$(ls -A "$OUT" 2>/dev/null)" ] && [ ! -e "$OUT/summary.jsonl" ]; then
  echo "device-sessions: $OUT exists and is not an earlier output of this script; set OUT=..." >&2; exit 2
fi
rm -rf "$OUT" && mkdir -p "$OUT/examples"
summary=$OUT/summary.jsonl
: > "$summary"

if [ "$cpu" -eq 1 ]; then
  examples=(cpu-saxpy)
  python3 -c 'import torch' 2>/dev/null && examples+=(torch-softmax) ||
    echo "device-sessions: \`import torch\` failed: torch-softmax left out of the CPU check"
else
  examples=(cuda-softmax torch-softmax)
fi

# prepare EXAMPLE MODE: a copy of the example whose spec is the example's, with `session` kept
# (MODE=session) or removed (MODE=process); on --cpu a CPU-only Target (gpus = []).
prepare() {
  local ex=$1 mode=$2 dir=$OUT/examples/$1-$2
  # The drivers find the SDK at ../../sdk from their folder: $OUT/examples/X -> $OUT/sdk.
  [ -e "$OUT/sdk" ] || cp -r "$repo/sdk" "$OUT/sdk"
  cp -r "$repo/examples/$ex" "$dir"
  rm -rf "$dir/art"
  python3 - "$dir/cko.toml" "$mode" "$cpu" "$repo" <<'PY'
import re, sys
path, mode, cpu, repo = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
text = open(path).read()
caps = '["single_subject", "paired_in_process", "session"]' if mode == "session" else \
       '["single_subject", "paired_in_process"]'
text, n = re.subn(r'^capabilities = \[.*\]$', f'capabilities = {caps}', text, flags=re.M)
assert n == 1, "no capabilities line in " + path
if cpu:
    text = re.sub(r'^gpus = .*$', 'gpus = []', text, flags=re.M)
open(path, "w").write(text)
PY
  if [ "$cpu" -eq 1 ] && [ -f "$dir/cases/main.json" ] && [ "$ex" = torch-softmax ]; then
    python3 - "$dir/cases/main.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c.update(device="cpu", rows=512, cols=1024); json.dump(c, open(sys.argv[1], "w"))
PY
  fi
  case "$ex" in
    cuda-softmax) make -s -C "$dir" >/dev/null || { echo "cannot build $dir"; return 1; } ;;
    cpu-saxpy) ;;
  esac
  echo "$dir"
}

# measure EXAMPLE MODE: freeze, one experiment with the example's candidate, the confirm.
measure() {
  local ex=$1 mode=$2 dir root exp started
  dir=$(prepare "$ex" "$mode") || return 1
  root=$dir/art
  "$CKO" target freeze --spec "$dir/cko.toml" --root "$root" > "$dir/freeze.txt" 2>&1 ||
    { echo "$ex/$mode: freeze failed: $(tail -n 5 "$dir/freeze.txt")"; return 1; }
  "$CKO" experiment new --root "$root" --candidate "$dir/candidate" --hypothesis "the example's candidate" \
    --mechanism example --failure-closes mechanism --no-falsifier-reason "a measurement of cko itself" --json \
    > "$dir/experiment.json" 2>"$dir/experiment.err" || { echo "$ex/$mode: experiment failed: $(cat "$dir/experiment.err")"; return 1; }
  exp=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$dir/experiment.json")
  started=$(date +%s.%N)
  "$CKO" confirm "$exp" --root "$root" --json > "$dir/confirm.json" 2>"$dir/confirm.err"
  local rc=$?
  python3 - "$dir/confirm.json" "$root" "$ex" "$mode" "$rc" "$started" "$(date +%s.%N)" >> "$summary" <<'PY'
import json, os, sys
path, root, ex, mode, rc, t0, t1 = sys.argv[1:8]
d = json.load(open(path))
r = d["result"]
o = r["outputs"]
tv = o.get("to_verdict", {})
call_s, sessions, call_walls = 0.0, 0, []
for line in open(os.path.join(root, "invocations", d["id"], "events.jsonl")):
    e = json.loads(line)
    if e["type"] == "call_finished":
        call_walls.append(e["data"]["process"]["wall_ns"] / 1e9)
        call_s += call_walls[-1]
    sessions += e["type"] == "driver_session_started"
# Without the first call (in a session it holds the driver's start): what each later call costs.
later_call_s = sum(call_walls[1:]) / (len(call_walls) - 1) if len(call_walls) > 1 else 0.0
pairs = tv.get("pairs", 0)
print(json.dumps({"example": ex, "mode": mode, "rc": int(rc), "verdict": o.get("verdict", r["state"]), "pairs": pairs,
                  "calls": r["cost"]["driver_calls"], "sessions": sessions, "gpu_s": tv.get("gpu_s", 0.0),
                  "call_s": call_s, "first_call_s": call_walls[0] if call_walls else 0.0,
                  "later_call_s": later_call_s, "wall_s": tv.get("wall_s", 0.0), "command_s": float(t1) - float(t0)}))
PY
}

for ex in "${examples[@]}"; do
  for mode in process session; do
    echo "== $ex, $mode" >&2
    measure "$ex" "$mode" || echo "{\"example\": \"$ex\", \"mode\": \"$mode\", \"failed\": true}" >> "$summary"
  done
done

python3 - "$summary" "$cpu" <<'PY' | tee "$OUT/summary.txt"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
cpu = sys.argv[2] == "1"
key = "call_s" if cpu else "gpu_s"
unit = "driver-call s" if cpu else "GPU s"
print(f"{'example':14} {'mode':8} {'verdict':13} {'pairs':>5} {'calls':>5} {'sessions':>8} "
      f"{unit + '/pair':>16} {unit + ' to verdict':>20} {'wall s':>8} {'first call s':>12} {'later call s':>12}")
by = {}
for r in rows:
    if r.get("failed"):
        print(f"{r['example']:14} {r['mode']:8} FAILED (see examples/{r['example']}-{r['mode']}/)")
        continue
    per_pair = r[key] / r["pairs"] if r["pairs"] else float("nan")
    by[(r["example"], r["mode"])] = (per_pair, r[key], r.get("later_call_s", 0.0))
    print(f"{r['example']:14} {r['mode']:8} {r['verdict']:13} {r['pairs']:5d} {r['calls']:5d} {r['sessions']:8d} "
          f"{per_pair:16.3f} {r[key]:20.2f} {r['wall_s']:8.1f} {r.get('first_call_s', 0.0):12.3f} "
          f"{r.get('later_call_s', 0.0):12.3f}")
print()
ok = True
for ex in sorted({e for e, _ in by}):
    if (ex, "process") in by and (ex, "session") in by:
        (pp, pv, pl), (sp, sv, sl) = by[(ex, "process")], by[(ex, "session")]
        print(f"{ex}: one process per call / sessions = {pp / sp:.1f}x {unit} per pair, {pv / sv:.1f}x to the verdict, "
              f"{pl / sl if sl else float('nan'):.1f}x per call after the first (driver-call seconds)")
    else:
        ok = False
sys.exit(0 if ok and by else 1)
PY
