#!/usr/bin/env bash
# The suite's teeth, measured: applies each semantic mutant below to a scratch copy of the tree,
# rebuilds only what it touches (ccache keeps this incremental) and requires the relevant tests to
# FAIL. A surviving mutant fails this script, and so does a mutant whose anchor no longer occurs
# exactly once (the code moved: update the table, do not delete the row).
#   scripts/mutation-check.sh [--keep] [NAME...]   (default: every mutant; --keep leaves the scratch dir)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
keep=0
only=()
for a in "$@"; do
  if [ "$a" = --keep ]; then keep=1; else only+=("$a"); fi
done
start=$(date +%s)
jobs=$(nproc)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/cko-mutation-XXXXXX")
[ "$keep" -eq 1 ] || trap 'chmod -R u+w "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
export CCACHE_BASEDIR="$scratch"  # paths relative to the copy, so its objects hit the main build's cache

# Each row: NAME | FILE | ANCHOR (exact text, must occur once) | REPLACEMENT | BUILD TARGETS | CTEST REGEX
# Replacements are one line; \n in them becomes a newline.
mutants=(
  "kineto_event_count|src/cko/profile/kineto/trace_summary.cpp|    ++summary_.events;|    summary_.events += summary_.events == 0 ? 2 : 1;|profile_kineto_test cko|^(KinetoTrace|cli_trace)"
  "kineto_p99_as_p95|src/cko/profile/kineto/trace_summary.cpp|l.p99_ns = nearest_rank(latencies_, 99);|l.p99_ns = nearest_rank(latencies_, 95);|profile_kineto_test|^KinetoTrace"
  "ncu_metrics_cut_to_10|src/cko/profile/ncu/ncu_report_json.cpp|        for (std::size_t r = 0; r < launch.metric_rows.size(); ++r) {|        for (std::size_t r = 0; r < launch.metric_rows.size() && r < 10; ++r) {|cko|^cli_ncu$"
  "nsys_row_count_plus_one|src/cko/profile/nsys/stats_row.cpp|    row.count = static_cast<std::int64_t>(n);|    row.count = static_cast<std::int64_t>(n) + 1;|profile_nsys_test cko|^(NsysExport|StatsRow|cli_trace)"
  "champion_accepts_any_verdict|src/cko/eval/champion.cpp|    } else if (verdict != \"improved\") {|    } else if (verdict == \"no such verdict\") {|eval_test|^ChampionTest"
  "champion_ignores_staleness|src/cko/eval/champion.cpp|    if (out.at(\"reference\").at(\"digest\") != current.digest) {|    if (false && out.at(\"reference\").at(\"digest\") != current.digest) {|eval_test|^ChampionTest"
  "restore_accepts_passed_audit|src/cko/eval/champion.cpp|        if (verdict == \"improved\") {|        if (verdict == \"no such verdict\") {|eval_test|^ChampionTest"
  "screen_never_rejects_on_performance|src/cko/eval/judge.cpp|    return negative && !diagnostic_proxy ? ScreenDecision::rejected|    return false ? ScreenDecision::rejected|eval_test cko|^(ScreenDecision|cli_loop|cli_constraint)"
  "screen_decision_inverted|src/cko/eval/judge.cpp|    return negative && !diagnostic_proxy ? ScreenDecision::rejected|    return !(negative && !diagnostic_proxy) ? ScreenDecision::rejected|eval_test cko|^(ScreenDecision|cli_constraint|cli_loop)"
  "constraint_regression_ignored|src/cko/eval/judge.cpp|        if (status == stats::ConstraintStatus::regressed) {|        if (false) {|eval_test cko|^(Judge|cli_constraint)"
  "verdict_regressed_never|src/cko/stats/verdict.cpp|    if (high < 0.0) {\n        return Verdict::regressed;|    if (false) {\n        return Verdict::regressed;|stats_test|^Classify"
  "baseline_ignores_contamination|src/cko/eval/baseline.cpp|void require_clean(const Measurement& m) {|void require_clean(const Measurement& m) {\n    if (m.calls.size() < 1000000) { return; }|cko fake_nvml|^cli_gpu_target$"
  "mixed_reported_as_improved|src/cko/eval/judge.cpp|        j.verdict = stats::Verdict::mixed;|        (void)0;|eval_test|^Judge"
  "reference_is_current_champion|src/cko/eval/compare_context.cpp|    p.reference = store::load_snapshot(target.store(), base.digest);|    p.reference = store::load_snapshot(target.store(), read_champion(target.store()).digest);|cko|^cli_loop_cases$"
  "deciding_level_is_nominal|src/cko/eval/judge.cpp|        j.deciding = look.estimate;|        j.deciding = j.nominal;|eval_test|^Judge"
  "map_exposed_as_union|src/cko/timeline/window_sweep.hpp|            gpu_names_.expose_alone(w);|            for (const std::size_t id : gpu_names_.touched()) { if (gpu_names_.acc(id).active > 0) { gpu_names_.at(id).exposed_ns += w; } }|timeline_test|^ExecutionMap"
  "gpu_budget_unset_is_zero|src/cko/eval/session.cpp|spec.gpu_seconds_budget > 0 &&|true &&|cko fake_nvml|^cli_gpu_target$"
  "gpu_set_keeps_a_partial_set|src/cko/run/gpu_set_lock.cpp|        locks_.clear();  // all or none: never keep part of the set while waiting|        // (mutant: the GPUs taken so far are kept while waiting)|run_test|^GpuSetLockTest"
  "gpu_set_topology_nvlink_ignored|src/cko/env/nvml_reader.cpp|                    link.nvlink = status == nvml::kP2pStatusOk;|                    link.nvlink = false;|env_test fake_nvml|^GpuSet\."
)

echo "== copying the tree to $scratch"
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$repo" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$scratch")
else  # a tree without .git: everything but build outputs
  tar -C "$repo" --exclude='./build*' --exclude='./examples/*/build' -cf - . | tar -C "$scratch" -xf -
fi
cd "$scratch"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# The flags of `make build` (Makefile: -Werror under CI), so that ccache finds its objects.
werror=OFF
[ -z "${CI:-}" ] || werror=ON
echo "== configuring and building the unmutated targets"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCKO_WERROR="$werror" -DCKO_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
all_targets=$(printf '%s\n' "${mutants[@]}" | cut -d'|' -f5 | tr ' ' '\n' | sort -u | tr '\n' ' ')
# shellcheck disable=SC2086
cmake --build build -j "$jobs" --target $all_targets >/dev/null
make -s -C examples/cpu-saxpy build/driver_cpp >/dev/null

# apply FILE ANCHOR REPLACEMENT: replaces the one occurrence; exit 3 when not exactly one.
apply() {
  python3 - "$@" <<'PY'
import sys
path, anchor, repl = sys.argv[1], sys.argv[2].replace("\\n", "\n"), sys.argv[3].replace("\\n", "\n")
text = open(path).read()
n = text.count(anchor)
if n != 1:
    print(f"  anchor occurs {n} times in {path}: {anchor!r}")
    sys.exit(3)
open(path, "w").write(text.replace(anchor, repl))
PY
}

killed=0
applied=0
problems=()
for row in "${mutants[@]}"; do
  IFS='|' read -r name file anchor repl targets regex <<<"$row"
  if [ "${#only[@]}" -gt 0 ] && ! printf '%s\n' "${only[@]}" | grep -qx "$name"; then continue; fi
  cp "$file" "$file.orig"
  if ! apply "$file" "$anchor" "$repl"; then
    problems+=("$name: its anchor no longer applies in $file")
    mv "$file.orig" "$file"
    continue
  fi
  applied=$((applied + 1))
  t0=$(date +%s)
  rc=0
  # shellcheck disable=SC2086
  if ! cmake --build build -j "$jobs" --target $targets >"$scratch/$name.build.log" 2>&1; then
    result="killed (does not build)"
  else
    (cd build && ctest -j "$jobs" -R "$regex" --stop-on-failure >"$scratch/$name.test.log" 2>&1) || rc=$?
    n=$(grep -Ec 'Test +#[0-9]+:' "$scratch/$name.test.log" || true)
    if [ "$n" -eq 0 ]; then
      result="SURVIVED (no test matched $regex)"
    elif [ "$rc" -ne 0 ]; then
      result="killed by $(grep -m1 -Eo 'Test +#[0-9]+: [^ ]+ \.*\*+Failed' "$scratch/$name.test.log" | awk '{print $3}')"
    else
      result="SURVIVED ($n tests passed)"
    fi
  fi
  case "$result" in killed*) killed=$((killed + 1));; *) problems+=("$name: $result");; esac
  printf '  %-38s %-40s %4ss\n' "$name" "$result" "$(( $(date +%s) - t0 ))"
  mv "$file.orig" "$file"
done
# Leave the build as the tree is (a --keep'd copy stays usable).
# shellcheck disable=SC2086
cmake --build build -j "$jobs" --target $all_targets >/dev/null

echo "mutation check: $killed of $applied mutants killed in $(( $(date +%s) - start )) s"
if [ "${#problems[@]}" -gt 0 ]; then
  printf '  FAIL: %s\n' "${problems[@]}"
  exit 1
fi
[ "$applied" -gt 0 ] || { echo "  FAIL: no mutant applied"; exit 1; }
