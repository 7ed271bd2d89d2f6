#!/usr/bin/env bash
# The torch examples on a CPU-only host through the real loop: torch-layernorm's bfloat16 candidate is
# `invalid`, its Triton candidate is `invalid` saying it needs triton or a GPU; torch-ddp runs torchrun
# with gloo; torch-serving says it needs transformers.
. "$(dirname "$0")/lib.sh"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
py=""
for cand in python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null && "$cand" -c 'import torch' 2>/dev/null; then py=$(command -v "$cand"); break; fi
done
[ -n "$py" ] || fail "no python3 with torch; run 'make deps' (installs python3-torch)"
export PATH="$(dirname "$py"):$PATH"  # the drivers' argv says python3: the one with torch

# A copy of an example beside a link to the SDK (drivers find it at ../../sdk/python), its case `main`
# replaced by the small CPU case so that a pair takes well under a second.
copy_example() {
  local name=$1
  mkdir -p "$tmp/ex/examples"; ln -sfn "$repo/sdk" "$tmp/ex/sdk"
  cp -r "$repo/examples/$name" "$tmp/ex/examples/$name"
  cp "$tmp/ex/examples/$name/cases/small.json" "$tmp/ex/examples/$name/cases/main.json"
  echo "$tmp/ex/examples/$name"
}

ln=$(copy_example torch-layernorm)
art="$tmp/ln-art"
expect_rc 0 "$CKO" target freeze --spec "$ln/cko.toml" --root "$art"
expect_rc 0 "$CKO" baseline --root "$art" --calls-per-case 1 --aa-pairs 6 --json
printf '%s' "$out" | python3 -c '
import json, sys
o = json.load(sys.stdin)["result"]["outputs"]
assert o["resolution"]["n"] == 6 and o["resolution"]["noise_sd"] > 0, o["resolution"]'

new_exp() {  # new_exp CANDIDATE_DIR HYPOTHESIS -> experiment id
  expect_rc 0 "$CKO" experiment new --root "$art" --candidate "$1" --hypothesis "$2" --mechanism precision \
    --failure-closes implementation --no-falsifier-reason "CPU test" --json
  printf '%s' "$out" | field 'd["id"]'
}
exp_half=$(new_exp "$ln/candidates/half_precision" "bfloat16 halves the bytes")
expect_rc 1 "$CKO" screen "$exp_half" --root "$art" --json
printf '%s' "$out" | python3 -c '
import json, sys
o = json.load(sys.stdin)["result"]["outputs"]
assert o["verdict"] == "invalid" and o["decision"] == "rejected", (o["verdict"], o["decision"])
assert "candidate failed correctness" in o["reason"], o["reason"]
assert "estimate" not in o, o'

exp_triton=$(new_exp "$ln/candidates/triton_fused" "one fused pass")
expect_rc 1 "$CKO" screen "$exp_triton" --root "$art" --json
printf '%s' "$out" | python3 -c '
import json, sys
o = json.load(sys.stdin)["result"]["outputs"]
assert o["verdict"] == "invalid", o["verdict"]
want = "needs a CUDA GPU" if sys.argv[1] == "triton" else "needs triton"  # this CPU host has triton or not
assert want in o["reason"], (want, o["reason"])' "$("$py" -c 'import triton, triton.language' 2>/dev/null && echo triton || echo none)"

# torch-serving: without transformers the driver measures nothing and says why (no substitute model);
# with it (a GPU host), the small case is served by both subjects.
sv="$repo/examples/torch-serving"
sv_run() {
  expect_rc "$1" "$CKO" driver run --root "$tmp/sv-art" --mode paired --capability paired_in_process \
    --case small --case-file "$sv/cases/small.json" --reference "$sv/original" --candidate "$sv/candidates/batched" \
    --samples 3 --primary requests_per_s:req/s --constraint p99_latency_ms:ms --correctness-metric max_abs_err \
    --json -- python3 "$sv/driver.py"
}
if "$py" -c 'import transformers' 2>/dev/null; then
  sv_run 0
  printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)["result"]
assert d["state"] == "succeeded", d
for s in d["outputs"]["result"]["subjects"]:
    assert s["correctness"]["status"] == "passed" and s["correctness"]["metrics"]["max_abs_err"] <= 1e-3, s'
else
  sv_run 3
  printf '%s' "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)["result"]
assert r["state"] == "failed" and r["error"]["code"] == "driver_failed", r["error"]
tail = r["error"]["details"]["stderr_tail"]
assert "torch-serving needs the transformers package" in tail and "no other model is used instead" in tail, tail'
  echo "torch-serving: transformers is not installed; the driver said so (checked)"
fi

# torch-ddp through cko: torchrun with 2 gloo ranks on the CPU, paired step times and the loss check.
dd="$repo/examples/torch-ddp"
expect_rc 0 env CUDA_VISIBLE_DEVICES= "$CKO" driver run --root "$tmp/dd-art" --mode paired --capability paired_in_process \
  --case small --case-file "$dd/cases/small.json" --reference "$dd/original" --candidate "$dd/candidates/big_buckets" \
  --samples 2 --primary step_time_ms:ms --correctness-metric loss_rel_err --json -- python3 "$dd/driver.py"
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)["result"]
assert d["state"] == "succeeded", d
for s in d["outputs"]["result"]["subjects"]:
    assert s["correctness"]["status"] == "passed" and s["correctness"]["metrics"]["loss_rel_err"] <= 1e-4, s
    assert len(s["primary"]) == 2, s'
