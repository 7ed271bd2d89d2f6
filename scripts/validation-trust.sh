#!/usr/bin/env bash
# [18] and [19] on a GPU host (docs/validation.md, "The trust boundary on the H200"):
#   1. the wheel (dist/cko-*.whl from `make release`) installed into a fresh virtual environment of the
#      machine's Python (with its PyTorch), the torch-layernorm loop run with that cko and that SDK;
#   2. A/A controls of a three-case PyTorch workload (torch-layernorm at 1024x1024, 4096x4096 and
#      8192x4096, minimum effect 1 %): every control confirmed, each pooled and per-case verdict kept;
#   3. an A/A control and a real speedup (candidates/triton_fused) confirmed under a foreign GPU process
#      (a matmul loop started outside cko) and under host CPU load (one busy loop per core).
# Usage: CKO=<binary> OUT=<dir> bash scripts/validation-trust.sh   (AA_CONTROLS=10; SKIP_WHEEL=1,
#   SKIP_AA=1, SKIP_DISTURBED=1, SKIP_COST=1 leave parts out; part 4 screens torch-softmax and prints
#   where each request's held GPU time went, outputs.to_verdict.held). What comes back in $OUT: trust.log, trust.json
#   (one row per confirm: part, label, verdict, pooled verdict, per-case verdicts, effect, reason) and
#   trust-outcomes.tgz (every outcome JSON).
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
FINAL=${OUT:-/tmp/cko-trust}
mkdir -p "$FINAL"
CKO=${CKO:-$REPO/build-portable/cko}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cko-trust.XXXXXX")
OUTC=$WORK/outcomes
mkdir -p "$OUTC"
exec > >(tee "$FINAL/trust.log") 2>&1
: > "$WORK/rows.jsonl"

# row PART LABEL FILE: one line of trust.json from a confirm's outcome document.
row() {
  python3 - "$1" "$2" "$3" >> "$WORK/rows.jsonl" <<'EOF'
import json, sys
part, label, path = sys.argv[1:4]
try:
    d = json.load(open(path))
except Exception as e:
    print(json.dumps({"part": part, "label": label, "error": f"no outcome: {e}"})); sys.exit(0)
r = d.get("result") or {}
o = r.get("outputs") or {}
est = o.get("estimate") or {}
print(json.dumps({
    "part": part, "label": label, "state": d.get("state") or r.get("state"),
    "verdict": o.get("verdict"), "pooled_verdict": o.get("pooled_verdict"),
    "effect_pct": est.get("hl_pct"),
    "ci_pct": [est.get("ci_low_pct"), est.get("ci_high_pct")],
    "pairs": (o.get("to_verdict") or {}).get("pairs"),
    "cases": {c.get("case_id"): [c.get("verdict"), round((c.get("estimate") or {}).get("hl_pct") or 0, 3)]
              for c in o.get("per_case", [])},
    "reason": (r.get("reason") or o.get("reason") or "")[:300],
    "gpu_s": (o.get("to_verdict") or {}).get("gpu_s"),
    "held_ms_per_request": ((o.get("to_verdict") or {}).get("held") or {}).get("per_request_ms"),
    "instrument_bias": o.get("instrument_bias"),
    "error": (d.get("error") or {}).get("code") if isinstance(d.get("error"), dict) else None}))
EOF
  tail -n1 "$WORK/rows.jsonl"
}

# target NAME CKO_BIN SDK_LINK(0|1): a copy of torch-layernorm with three cases and a 1 % minimum.
make_target() {
  local name=$1 link=$2 ex=$WORK/$1/examples/torch-layernorm
  mkdir -p "$WORK/$name/examples"
  cp -r "$REPO/examples/torch-layernorm" "$ex"
  [ "$link" = 0 ] || ln -s "$REPO/sdk" "$WORK/$name/sdk"
  echo '{"rows": 1024, "cols": 1024, "seed": 11, "eps": 1e-5}' > "$ex/cases/small3.json"
  echo '{"rows": 4096, "cols": 4096, "seed": 7, "eps": 1e-5}' > "$ex/cases/medium3.json"
  echo '{"rows": 8192, "cols": 4096, "seed": 5, "eps": 1e-5}' > "$ex/cases/large3.json"
  sed -i 's/^ids = .*/ids = ["small3", "medium3", "large3"]/; s/^minimum_effect_pct = .*/minimum_effect_pct = 1.0/;
          s/^min_pairs = .*/min_pairs = 6/; s/^max_pairs = .*/max_pairs = 12/' "$ex/cko.toml"
  echo "$ex"
}

# loop CKO_BIN EX ROOT PART: freeze, baseline; then confirm_one calls.
freeze_and_baseline() {
  local bin=$1 ex=$2 root=$3 part=$4
  "$bin" target freeze --spec "$ex/cko.toml" --root "$root" --json > "$OUTC/$part-freeze.json" 2> "$OUTC/$part-freeze.err"
  local rc=$?; echo "  $part freeze: exit $rc"
  [ "$rc" = 0 ] || tail -c 1500 "$OUTC/$part-freeze.err"
  local t0=$SECONDS
  "$bin" baseline --root "$root" --calls-per-case 2 --aa-pairs 6 --json > "$OUTC/$part-baseline.json" 2> "$OUTC/$part-baseline.err"
  rc=$?; echo "  $part baseline: exit $rc in $((SECONDS - t0)) s ($(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); o=d["result"]["outputs"]; print(json.dumps(o.get("instrument_check", {}).get("statement")))' "$OUTC/$part-baseline.json" 2>/dev/null))"
}

confirm_one() {  # BIN ROOT PART LABEL control|CANDIDATE_DIR
  local bin=$1 root=$2 part=$3 label=$4 what=$5 exp
  if [ "$what" = control ]; then
    "$bin" experiment new --root "$root" --control --hypothesis "A/A control $label" --mechanism control \
      --failure-closes mechanism --no-falsifier-reason "instrument check" --json > "$OUTC/$part-new-$label.json" 2>&1
  else
    "$bin" experiment new --root "$root" --candidate "$what" --hypothesis "$label" --mechanism "$label" \
      --failure-closes mechanism --no-falsifier-reason "validation run" --json > "$OUTC/$part-new-$label.json" 2>&1
  fi
  exp=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$OUTC/$part-new-$label.json" 2>/dev/null)
  [ -n "$exp" ] || { echo "  $part $label: experiment new failed: $(tail -c 300 "$OUTC/$part-new-$label.json")"; return; }
  local t0=$SECONDS
  "$bin" confirm "$exp" --root "$root" --json > "$OUTC/$part-confirm-$label.json" 2> "$OUTC/$part-confirm-$label.err"
  echo "  $part $label confirm: exit $? in $((SECONDS - t0)) s"
  row "$part" "$label" "$OUTC/$part-confirm-$label.json"
}

echo "### identity"; "$CKO" --version; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
python3 -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__)'

if [ -z "${SKIP_WHEEL:-}" ]; then
  echo "### 1. the wheel in a fresh virtual environment"
  whl=$(ls "$REPO"/dist/cko-*.whl 2>/dev/null | head -n1)
  if [ -z "$whl" ]; then echo "  no wheel under dist/ (run make release first)"; else
    python3 -m venv --system-site-packages "$WORK/venv" && "$WORK/venv/bin/pip" install --no-index --no-deps -q "$whl"
    echo "  pip install: exit $?"
    # The H200 host's torch lives in a virtual environment of its own (/opt/torch/.venv), which a
    # new venv's system site does not include (run of 2026-12-04: the driver found no torch): the
    # new venv sees it through a .pth file, and its own cko_driver (the wheel's) comes first.
    torch_site=$(python3 -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' 2>/dev/null)
    [ -z "$torch_site" ] || echo "$torch_site" > "$("$WORK/venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')/host-torch.pth"
    VCKO=$WORK/venv/bin/cko
    "$VCKO" --version; "$VCKO" self-check | tail -n 3
    "$VCKO" doctor > "$OUTC/wheel-doctor.txt" 2>&1; echo "  cko doctor: exit $?"
    "$WORK/venv/bin/python" -c 'import cko_driver, os; print("cko_driver from", os.path.dirname(cko_driver.__file__))'
    ex=$(make_target wheel 0)   # no sdk link: the driver imports the wheel's cko_driver
    sed -i 's/^ids = .*/ids = ["main"]/; s/^argv = .*/argv = ["'"${WORK//\//\\/}"'\/venv\/bin\/python3", "driver.py"]/' "$ex/cko.toml"
    PATH=$WORK/venv/bin:$PATH freeze_and_baseline "$VCKO" "$ex" "$WORK/wheel/art" wheel
    PATH=$WORK/venv/bin:$PATH confirm_one "$VCKO" "$WORK/wheel/art" wheel triton_fused "$ex/candidates/triton_fused"
    "$VCKO" history --root "$WORK/wheel/art" | tail -n 12
  fi
fi

if [ -z "${SKIP_AA:-}" ]; then
  echo "### 2. A/A controls of a three-case workload"
  ex=$(make_target aa 1)
  freeze_and_baseline "$CKO" "$ex" "$WORK/aa/art" aa
  for i in $(seq 1 "${AA_CONTROLS:-10}"); do confirm_one "$CKO" "$WORK/aa/art" aa "control$i" control; done
fi

if [ -z "${SKIP_DISTURBED:-}" ]; then
  echo "### 3. under a foreign GPU process, then under host CPU load"
  ex=$(make_target disturbed 1)
  freeze_and_baseline "$CKO" "$ex" "$WORK/disturbed/art" disturbed
  python3 -c '
import torch, time
a = torch.randn(8192, 8192, device="cuda"); t = time.time()
while time.time() - t < 240: a = (a @ a).clamp_(-1, 1)
' & foreign=$!
  sleep 5; echo "  foreign GPU process: pid $foreign"
  confirm_one "$CKO" "$WORK/disturbed/art" gpu_foreign control_gpu control
  confirm_one "$CKO" "$WORK/disturbed/art" gpu_foreign triton_gpu "$ex/candidates/triton_fused"
  kill "$foreign" 2>/dev/null; wait "$foreign" 2>/dev/null
  # One formal confirm per candidate and base: the same candidate under host load and quiet is
  # confirmed in stores of its own (each frozen and baselined quiet).
  ex2=$(make_target loaded 1); freeze_and_baseline "$CKO" "$ex2" "$WORK/loaded/art" loaded
  ex3=$(make_target quiet 1); freeze_and_baseline "$CKO" "$ex3" "$WORK/quiet/art" quiet
  burners=()
  for _ in $(seq 1 "$(nproc)"); do (while :; do :; done) & burners+=($!); done
  sleep 3; echo "  host load: $(cut -d' ' -f1-3 /proc/loadavg) with ${#burners[@]} busy loops"
  confirm_one "$CKO" "$WORK/loaded/art" cpu_load control_cpu control
  confirm_one "$CKO" "$WORK/loaded/art" cpu_load triton_cpu "$ex2/candidates/triton_fused"
  kill "${burners[@]}" 2>/dev/null; wait 2>/dev/null
  confirm_one "$CKO" "$WORK/quiet/art" quiet triton_quiet "$ex3/candidates/triton_fused"
fi

if [ -z "${SKIP_COST:-}" ]; then
  echo "### 4. what a request costs: torch-softmax screened, outputs.to_verdict.held per request"
  mkdir -p "$WORK/cost/examples"; cp -r "$REPO/examples/torch-softmax" "$WORK/cost/examples/"; ln -s "$REPO/sdk" "$WORK/cost/sdk"
  cex=$WORK/cost/examples/torch-softmax
  freeze_and_baseline "$CKO" "$cex" "$WORK/cost/art" cost
  "$CKO" experiment new --root "$WORK/cost/art" --candidate "$cex/candidate" --hypothesis cost --mechanism cost \
    --failure-closes mechanism --no-falsifier-reason "validation run" --json > "$OUTC/cost-new.json" 2>&1
  cexp=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$OUTC/cost-new.json" 2>/dev/null)
  "$CKO" screen "$cexp" --root "$WORK/cost/art" --json > "$OUTC/cost-screen.json" 2> "$OUTC/cost-screen.err"
  echo "  cost screen: exit $?"
  row cost screen "$OUTC/cost-screen.json"
  python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["result"]["outputs"]["to_verdict"]["held"]; print("  held per request (ms):", {k: round(v, 2) if v is not None else None for k, v in h["per_request_ms"].items()}, "calls", h["calls"])' "$OUTC/cost-screen.json"
fi

python3 - "$WORK/rows.jsonl" "$FINAL/trust.json" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
json.dump(rows, open(sys.argv[2], "w"), indent=1)
print(f"\n{'part':12} {'label':14} {'verdict':13} {'pooled':13} {'effect %':>9}  cases")
for r in rows:
    eff = r.get("effect_pct")
    print(f"{r['part']:12} {r['label']:14} {str(r.get('verdict')):13} {str(r.get('pooled_verdict')):13} "
          f"{eff if eff is None else round(eff, 3)!s:>9}  {r.get('cases')} {r.get('error') or ''}")
EOF
tar czf "$FINAL/trust-outcomes.tgz" -C "$WORK" outcomes 2>/dev/null
rm -rf "$WORK"
