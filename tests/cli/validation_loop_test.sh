#!/usr/bin/env bash
# The torch loop of scripts/device-validation.sh, dry-run on the CPU: torch-layernorm's small case through
# freeze, baseline, experiments, screen and confirm; the summary reports each verdict with its pairs and
# GPU seconds; torch-serving's missing transformers stops its loop at freeze, said in the summary.
. "$(dirname "$0")/lib.sh"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
py=""
for cand in python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null && "$cand" -c 'import torch' 2>/dev/null; then py=$(command -v "$cand"); break; fi
done
[ -n "$py" ] || fail "no python3 with torch; run 'make deps' (installs python3-torch)"
export PATH="$(dirname "$py"):$PATH"
export VALIDATION_CASE=small VALIDATION_MAX_PAIRS=6 TMPDIR="$tmp"
expect_rc 0 bash "$repo/scripts/validation-torch-loop.sh" torch-layernorm "$repo/examples/torch-layernorm" "$tmp/vout" \
  half=candidates/half_precision triton=candidates/triton_fused
contains "$out" "torch-layernorm screen-half: exit 1"
contains "$out" "torch-layernorm confirm-half: exit 1"
expect_rc 0 bash "$repo/scripts/validation-torch-loop.sh" torch-serving "$repo/examples/torch-serving" "$tmp/vout" \
  batched=candidates/batched
expect_rc 0 python3 "$repo/scripts/validation_summary.py" "$tmp/vout"
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
ln = d["torch-layernorm"]
assert ln["steps"]["freeze"]["exit"] == 0 and ln["baseline"]["resolution"]["n"] == 6, ln["baseline"]
for label in ("half", "triton"):
    c = ln["candidates"][label]
    assert c["screen"]["verdict"] == "invalid" and c["screen"]["pairs"] == 1, c["screen"]
    assert c["confirm"]["verdict"] == "invalid", c["confirm"]
    assert c["gpu_s_to_screen_verdict"] == 0.0 and c["gpu_s_to_confirm_verdict"] == 0.0, c  # no GPU here
    assert c["screen"]["gpu_s_per_pair"] == 0.0 and c["screen"]["wall_s"] > 0, c["screen"]
assert "needs triton" in ln["candidates"]["triton"]["screen"]["reason"], ln["candidates"]["triton"]["screen"]
assert isinstance(ln["history_entries"], int) and ln["history_entries"] >= 4, ln["history_entries"]  # history ran
sv = d["torch-serving"]
assert "needs the transformers package" in sv["freeze_error"], sv
assert sv["candidates"] == {}, sv'
[ -s "$tmp/vout/torch-layernorm/report.html" ] || fail "no report written"
tar tzf "$tmp/vout/torch-layernorm/store.tgz" > "$tmp/store.list"
grep -qx 'art/target.json' "$tmp/store.list" || fail "the store was not packed"
# The loop ends in a bundle that verifies and renders with the loop's root gone (the script removed it).
expect_rc 0 "$CKO" fsck --bundle "$tmp/vout/torch-layernorm/case.tar.zst"
contains "$out" "the bundle is consistent"
expect_rc 0 "$CKO" report --bundle "$tmp/vout/torch-layernorm/case.tar.zst" --format md
contains "$out" "torch-layernorm"
