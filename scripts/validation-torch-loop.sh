#!/usr/bin/env bash
# The evidence loop on one torch example (sourced by device-validation.sh; runnable alone, also on a CPU
# host where the GPU-only candidates come out invalid, saying why):
#   doctor, target freeze, baseline, experiment new per candidate (and the A/A control), screen, confirm
#   (when the screen passes it on, or to show an invalid one stays invalid), champion select (the first
#   improved confirm), audit, history, report, and a bundle of the root (OUTDIR/NAME/case.tar.zst). Every outcome JSON goes to OUTDIR/NAME/.
# Usage: CKO=<binary> bash scripts/validation-torch-loop.sh NAME EXAMPLE_DIR OUTDIR LABEL=CANDIDATE_DIR|control ...
# Budget: VALIDATION_MIN_PAIRS (6) and VALIDATION_MAX_PAIRS (10) replace the example's pairs;
# VALIDATION_CASE=small measures the example's small case as `main` (a quick dry run on a CPU host).
# VALIDATION_COLLECT="ncu torch" (either or both) then profiles one call of each subject of the first
# candidate's experiment (`cko profile collect`; ncu limited to VALIDATION_NCU_LAUNCHES, default 30,
# launches) and maps each torch trace per sample (`cko map --window 'cko:*'`).
torch_loop() {
  local name=$1 example=$2 outdir=$3; shift 3
  local dir=$outdir/$name work
  work=$(mktemp -d "${TMPDIR:-/tmp}/cko-loop-$name.XXXXXX")
  mkdir -p "$dir" "$work/examples"
  # A copy beside a link to the SDK (the drivers find it at ../../sdk/python), with the validation budget.
  ln -s "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/sdk" "$work/sdk"
  cp -r "$example" "$work/examples/$name"
  local ex=$work/examples/$name root=$work/art
  if [ -n "${VALIDATION_CASE:-}" ]; then cp "$ex/cases/$VALIDATION_CASE.json" "$ex/cases/main.json"; fi
  sed -i "s/^min_pairs = .*/min_pairs = ${VALIDATION_MIN_PAIRS:-6}/; s/^max_pairs = .*/max_pairs = ${VALIDATION_MAX_PAIRS:-10}/" "$ex/cko.toml"
  : > "$dir/steps.tsv"
  # step LABEL CMD...: runs CMD, stdout to LABEL.json, stderr to LABEL.err; one row in steps.tsv.
  step_json() {
    local label=$1; shift
    local t0 rc=0 ms
    t0=$(date +%s%N)
    "$@" > "$dir/$label.json" 2> "$dir/$label.err" || rc=$?
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    printf '%s\t%s\t%d.%03d\n' "$label" "$rc" $((ms / 1000)) $((ms % 1000)) >> "$dir/steps.tsv"
    echo "  $name $label: exit $rc"
    return 0
  }
  jfield() { python3 -c 'import json,sys
try: d=json.load(open(sys.argv[1]))
except Exception: sys.exit(0)
v=eval(sys.argv[2])
print("" if v is None else v)' "$1" "$2" 2>/dev/null; }

  step_json doctor "$CKO" doctor --json
  step_json freeze "$CKO" target freeze --spec "$ex/cko.toml" --root "$root" --json
  if [ ! -f "$root/target.json" ]; then
    echo "  $name: the Target did not freeze; the rest of its loop is skipped ($(tail -c 600 "$dir/freeze.err"))"
    rm -rf "$work"; return 0
  fi
  step_json baseline "$CKO" baseline --root "$root" --calls-per-case 2 --aa-pairs 6 --json
  local spec label path exp champion_done="" first_exp=""
  for spec in "$@"; do
    label=${spec%%=*}; path=${spec#*=}
    if [ "$path" = control ]; then
      step_json "new-$label" "$CKO" experiment new --root "$root" --control --hypothesis "A/A control" \
        --mechanism control --failure-closes mechanism --no-falsifier-reason "instrument check" --json
    else
      step_json "new-$label" "$CKO" experiment new --root "$root" --candidate "$ex/$path" --hypothesis "$label" \
        --mechanism "$label" --failure-closes mechanism --no-falsifier-reason "validation run" --json
    fi
    exp=$(jfield "$dir/new-$label.json" 'd["id"]')
    [ -n "$exp" ] || continue
    [ -n "$first_exp" ] || [ "$path" = control ] || first_exp=$exp
    step_json "screen-$label" "$CKO" screen "$exp" --root "$root" --json
    local decision verdict
    decision=$(jfield "$dir/screen-$label.json" 'd["result"]["outputs"].get("decision")')
    verdict=$(jfield "$dir/screen-$label.json" 'd["result"]["outputs"].get("verdict")')
    if [ "$decision" = pass_to_confirm ] || [ "$verdict" = invalid ]; then
      # An invalid screen stops what follows; the validation confirms it anyway, on the record, to
      # measure what an invalid confirm costs.
      local override=()
      [ "$verdict" != invalid ] || override=(--override-failure "validation: the cost of an invalid confirm is measured too")
      step_json "confirm-$label" "$CKO" confirm "$exp" --root "$root" "${override[@]}" --json
      if [ -z "$champion_done" ] && [ "$(jfield "$dir/confirm-$label.json" 'd["result"]["outputs"].get("verdict")')" = improved ]; then
        step_json "champion-$label" "$CKO" champion select --root "$root" --experiment "$exp" \
          --confirm "$(jfield "$dir/confirm-$label.json" 'd["id"]')" --json
        champion_done=$label
      fi
    fi
  done
  [ -z "$champion_done" ] || step_json audit "$CKO" audit --root "$root" --json
  local tool subject trace
  for tool in ${VALIDATION_COLLECT:-}; do
    [ -n "$first_exp" ] || break
    for subject in reference candidate; do
      if [ "$tool" = ncu ]; then
        step_json "collect-ncu-$subject" "$CKO" profile collect ncu --root "$root" --experiment "$first_exp" \
          --subject "$subject" --ncu-arg=--launch-count --ncu-arg="${VALIDATION_NCU_LAUNCHES:-30}" --json
      else
        step_json "collect-$tool-$subject" "$CKO" profile collect "$tool" --root "$root" \
          --experiment "$first_exp" --subject "$subject" --json
      fi
      if [ "$tool" = torch ]; then
        trace=$(jfield "$dir/collect-torch-$subject.json" 'd["stored"]["collection"]["files"][0]["path"]')
        if [ -n "$trace" ]; then
          step_json "map-$subject" "$CKO" map "$root/$trace" --window 'cko:*' --json
          "$CKO" map "$root/$trace" --window 'cko:*' > "$dir/map-$subject.txt" 2>&1 || true
        fi
      fi
    done
  done
  step_json history "$CKO" history --root "$root" --json
  "$CKO" report --root "$root" --out "$dir/report.html" > "$dir/report.out" 2>&1; echo "  $name report: exit $?"
  "$CKO" report --root "$root" --format md > "$dir/report.md" 2>&1 || true
  "$CKO" fsck --root "$root" > "$dir/fsck.txt" 2>&1 || true
  # The loop ends in a bundle ([23]): one file another machine verifies (cko fsck --bundle) and
  # renders (cko report --bundle) without the workload or a GPU.
  step_json bundle "$CKO" bundle --root "$root" --out "$dir/case.tar.zst" --json
  tar czf "$dir/store.tgz" -C "$work" art 2>/dev/null || true
  rm -rf "$work"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  CKO=${CKO:?set CKO to the cko binary}
  torch_loop "$@"
fi
