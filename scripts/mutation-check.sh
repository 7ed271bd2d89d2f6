#!/usr/bin/env bash
# The suite's teeth, measured: applies each semantic mutant below to a scratch copy of the tree,
# rebuilds only what it touches (ccache keeps this incremental) and requires the relevant tests to
# FAIL: first the tests named in its row (the likeliest killers), then, only for a survivor, the
# whole suite. A mutant that survives both fails this script, and so does a mutant whose anchor no
# longer occurs exactly once (the code moved: update the table, do not delete the row).
#   scripts/mutation-check.sh [--keep] [NAME...]   (default: every mutant; --keep leaves the scratch dir)
#   MUTATION_LANES=N: copies of the tree working at once (default 2 on two cores or more)
#   scripts/mutation-check.sh --lint               (the table only: each row's shape and anchor; no build)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
keep=0
lint=0
only=()
for a in "$@"; do
  case "$a" in --keep) keep=1;; --lint) lint=1;; *) only+=("$a");; esac
done
start=$(date +%s)
jobs=$(nproc)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/cko-mutation-XXXXXX")
[ "$keep" -eq 1 ] || trap 'chmod -R u+w "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
export CCACHE_BASEDIR="$scratch"  # paths relative to the copy, so its objects hit the main build's cache

# Each row: NAME | FILE | ANCHOR (exact text, must occur once) | REPLACEMENT | BUILD TARGETS | CTEST REGEX
# Replacements are one line; \n in them becomes a newline and \p a literal | (a bare | ends the field).
mutants=(
  "kineto_event_count|src/cko/profile/kineto/trace_summary.cpp|    ++summary_.events;|    summary_.events += summary_.events == 0 ? 2 : 1;|profile_kineto_test cko|^(KinetoTrace|cli_trace)"
  "kineto_p99_as_p95|src/cko/profile/kineto/trace_summary.cpp|l.p99_ns = nearest_rank(latencies_, 99);|l.p99_ns = nearest_rank(latencies_, 95);|profile_kineto_test|^KinetoTrace"
  "ncu_metrics_cut_to_10|src/cko/profile/ncu/ncu_report_json.cpp|        for (std::size_t r = 0; r < launch.metric_rows.size(); ++r) {|        for (std::size_t r = 0; r < launch.metric_rows.size() && r < 10; ++r) {|cko|^cli_ncu$"
  "ncu_writers_out_of_turn|src/cko/profile/ncu/two_writers.cpp|turn_changed_.wait(lock, [&] { return turn_ == k \\p\\p stop_; });|turn_changed_.wait(lock, [&] { return true; });|profile_ncu_test|^NcuDocument\\.ManyLaunches"
  "ncu_tail_unmodeled_twice|src/cko/profile/ncu/ncu_csv_raw.cpp|        if (!builder_.listed_unmodeled(tail.unmodeled_keys[i])) {|        if (true) {|profile_ncu_test|^RowSplit\\."
  "ncu_tail_durations_dropped|src/cko/profile/ncu/ncu_csv_raw.cpp|    tail_without_duration_ = tail.without_duration;|    tail_without_duration_ = 0;|profile_ncu_test|^RowSplit\\."
  "ncu_tail_where_no_row_starts|src/cko/profile/ncu/row_split.cpp|    if (position == at) {|    if (position >= at) {|profile_ncu_test|^RowSplit\\."
  "nsys_row_count_plus_one|src/cko/profile/nsys/stats_row.cpp|    row.count = static_cast<std::int64_t>(n);|    row.count = static_cast<std::int64_t>(n) + 1;|profile_nsys_test cko|^(NsysExport|StatsRow|cli_trace)"
  "champion_accepts_any_verdict|src/cko/eval/champion.cpp|    } else if (verdict != \"improved\") {|    } else if (verdict == \"no such verdict\") {|eval_test|^ChampionTest"
  "champion_ignores_staleness|src/cko/eval/champion.cpp|    if (out.at(\"reference\").at(\"digest\") != current.digest) {|    if (false && out.at(\"reference\").at(\"digest\") != current.digest) {|eval_test|^ChampionTest"
  "restore_accepts_passed_audit|src/cko/eval/champion.cpp|        if (verdict == \"improved\") {|        if (verdict == \"no such verdict\") {|eval_test|^ChampionTest"
  "screen_never_rejects_on_performance|src/cko/eval/judge.cpp|    if (negative) {\n        return ScreenDecision::rejected;|    if (false) {\n        return ScreenDecision::rejected;|eval_test cko|^(ScreenDecision|cli_loop|cli_constraint)"
  "screen_decision_inverted|src/cko/eval/judge.cpp|    if (negative) {\n        return ScreenDecision::rejected;|    if (!negative) {\n        return ScreenDecision::rejected;|eval_test cko|^(ScreenDecision|cli_constraint|cli_loop)"
  "inconclusive_screen_passes_to_confirm|src/cko/eval/judge.cpp|    return verdict == stats::Verdict::inconclusive ? ScreenDecision::needs_judgement|    return false ? ScreenDecision::needs_judgement|eval_test|^ScreenDecision"
  "constraint_regression_ignored|src/cko/eval/judge.cpp|        if (cj.status == stats::ConstraintStatus::regressed) {|        if (false) {|eval_test cko|^(Judge|cli_constraint)"
  "constraint_judged_pooled_only|src/cko/eval/judge.cpp|!cj.regressed_cases.empty();|false;|eval_test|^Judge\."
  "instrument_bias_never_decides|src/cko/eval/judge.cpp|        j.bias_decides = with_bias != j.pooled_verdict;|        j.bias_decides = false;|eval_test|^Judge\."
  "verdict_regressed_never|src/cko/stats/verdict.cpp|    if (high < -m) {\n        return Verdict::regressed;|    if (false) {\n        return Verdict::regressed;|stats_test|^Classify"
  "regression_inside_the_minimum_effect|src/cko/stats/verdict.cpp|    if (high < -m) {|    if (high < 0.0) {|stats_test eval_test|^(Classify|Judge\.)"
  "baseline_ignores_contamination|src/cko/eval/baseline.cpp|void require_clean(const Measurement& m) {|void require_clean(const Measurement& m) {\n    if (m.calls.size() < 1000000) { return; }|cko fake_nvml|^cli_gpu_target$"
  "mixed_reported_as_improved|src/cko/eval/judge.cpp|        j.verdict = stats::Verdict::mixed;|        (void)0;|eval_test|^Judge"
  "reference_is_current_champion|src/cko/eval/compare_context.cpp|    p.reference = store::load_snapshot(target.store(), base.digest);|    p.reference = store::load_snapshot(target.store(), read_champion(target.store()).digest);|cko|^cli_loop_cases$"
  "deciding_level_is_nominal|src/cko/eval/judge.cpp|        j.deciding = look.estimate;|        j.deciding = j.nominal;|eval_test|^Judge"
  "map_exposed_as_union|src/cko/timeline/window_sweep.hpp|            gpu_names_.expose_alone(w);|            for (const std::size_t id : gpu_names_.touched()) { if (gpu_names_.acc(id).active > 0) { gpu_names_.at(id).exposed_ns += w; } }|timeline_test|^ExecutionMap"
  "gpu_budget_unset_is_zero|src/cko/eval/session.cpp|spec.gpu_seconds_budget > 0 &&|true &&|cko fake_nvml|^cli_gpu_target$"
  "gpu_set_keeps_a_partial_set|src/cko/run/gpu_set_lock.cpp|        locks_.clear();  // all or none: never keep part of the set while waiting|        // (mutant: the GPUs taken so far are kept while waiting)|run_test|^GpuSetLockTest"
  "gpu_set_topology_nvlink_ignored|src/cko/env/nvml_reader.cpp|                    link.nvlink = status == nvml::kP2pStatusOk;|                    link.nvlink = false;|env_test fake_nvml|^GpuSet\."
  # [22] round 3: each row names the test written to kill it (the commit that added it says how it failed).
  "gate_ignores_driver_status|src/cko/eval/session.cpp|    m.correct = s.status == driver::CorrectnessStatus::passed &&|    m.correct = true &&|cko|^cli_gate$"
  "failing_reference_not_infrastructure|src/cko/eval/compare.cpp|r.infrastructure_failure = ref.correct ? false : true;|r.infrastructure_failure = false;|cko|^cli_gate$"
  "two_cases_never_mixed|src/cko/eval/judge.cpp|    if (in.case_ids.size() > 1 && !j.regressed_cases.empty() &&|    if (in.case_ids.size() > 2 && !j.regressed_cases.empty() &&|eval_test|^Judge\."
  "case_intervals_at_nominal_level|src/cko/eval/judge.cpp|cj.estimate = stats::estimate_paired(column(in.d, c), j.deciding_level);|cj.estimate = stats::estimate_paired(column(in.d, c), in.confidence);|eval_test|^Judge\."
  "any_accepted_regression_selects_mixed|src/cko/eval/champion.cpp|        if (!missing.empty()) {|        if (!missing.empty() && accepted_regressions.empty()) {|eval_test|^ChampionTest"
  "request_minimum_never_exclusive|src/cko/verbs/request.cpp|(p.exclusive_minimum && v == *p.minimum)|(false)|verbs_test|^VerbsTest"
  "kineto_stream_busy_without_memsets|src/cko/profile/kineto/trace_summary.cpp|{\"busy_ns\", s.kernels.total_ns + s.memcpy.total_ns + s.memset.total_ns}|{\"busy_ns\", s.kernels.total_ns + s.memcpy.total_ns}|profile_kineto_test|^KinetoTrace"
  "map_idle_launch_before_sync|src/cko/timeline/window_sweep.hpp|        (sync_active_ > 0       ? m.idle.cpu_sync_ns\n         : api_active_ > 0      ? m.idle.cpu_launch_ns|        (api_active_ > 0       ? m.idle.cpu_launch_ns\n         : sync_active_ > 0      ? m.idle.cpu_sync_ns|timeline_test|^ExecutionMap"
  "knowledge_version_min_exclusive|src/cko/knowledge/query.cpp|    if (r.min && v < *r.min) {|    if (r.min && v <= *r.min) {|knowledge_test|^Query\."
  "knowledge_cc_min_exclusive|src/cko/knowledge/query.cpp|!(have < c.cc_min->version())|(c.cc_min->version() < have)|knowledge_test|^Query\."
  "sass_diff_ignores_opcodes_only_in_b|src/cko/compiler/sass_diff.cpp|        for (const auto& [op, n] : kb->opcode_counts) {\n            opcodes.insert(op);\n        }|        (void)kb;|compiler_test|^SassDiff"
  "report_gpu_cost_by_kind_from_wall|src/cko/report/report_model.cpp|k[\"gpu_s\"] = number_or(k, \"gpu_s\", 0) + number_or(e, \"gpu_s\", 0);|k[\"gpu_s\"] = number_or(k, \"gpu_s\", 0) + number_or(e, \"wall_s\", 0);|report_test|^ReportModelTest"
  "report_driver_calls_counted_per_invocation|src/cko/report/report_model.cpp|driver_calls += number_or(e, \"driver_calls\", 0);|driver_calls += 10;|report_test|^ReportModelTest"
  "kineto_zero_duration_dropped|src/cko/profile/kineto/trace_summary.cpp|    if (dur < 0) {\n        ++summary_.negative_durations;|    if (dur <= 0) {\n        ++summary_.negative_durations;|profile_kineto_test|^KinetoTrace"
  "map_zero_length_at_window_end_dropped|src/cko/timeline/window_sweep.hpp|(iv.start_ns >= ws_ && iv.start_ns <= we_)|(iv.start_ns >= ws_ && iv.start_ns < we_)|timeline_test|^ExecutionMap"
  "map_window_candidates_start_at_window|src/cko/timeline/window_sweep.hpp|const std::int64_t from = ws - in.max_duration;|const std::int64_t from = ws;|timeline_test|^ExecutionMap"
  "read_skips_the_ledger|src/cko/store/store.cpp|    check_ledgered(relative, sha256);\n    return HashedRecord|    return HashedRecord|store_test cko|^(ReadCheckTest|cli_trust$)"
  "failed_candidate_not_gated|src/cko/eval/failure_gate.cpp|    if (!override_reason.empty()) {\n        return Json{{\"reason\"|    if (true) {\n        return Json{{\"reason\"|cko|^(cli_trust|cli_loop)$"
  "champion_pointer_hashed_in_a_second_read|src/cko/eval/champion.cpp|    c.file_sha256 = std::move(current.sha256);|    c.file_sha256 = sha256_file_hex(store.path_of(kCurrent));|cko crash_quick_driver|^races$"
  # [18] item 4, evidence identity: each killed by ProfileIdentity* (eval_test) and cli_profile_identity.
  "identity_cpu_target_takes_gpu_exports|src/cko/eval/profile_identity.cpp|        if (!out.devices.empty() \p\p out.gpu_work) {|        if (false) {|eval_test cko|^(ProfileIdentity|cli_profile_identity$)"
  "identity_untested_version_binds|src/cko/eval/profile_identity.cpp|        if (status == \"tested\") {|        if (true) {|eval_test cko|^(ProfileIdentity|cli_profile_identity$)"
  "foreign_profile_citable|src/cko/eval/profile_evidence.cpp|    if (!profile.value(\"foreign\", false)) {|    if (true) {|eval_test cko|^(ProfileIdentity|cli_profile_identity$)"
  # [23] a claim cites only a profile of its own subjects; a hypothesis is settled once.
  "falsify_cites_any_subject|src/cko/eval/cited_evidence.cpp|    if (digest == experiment.candidate.digest \p\p digest == experiment.base.digest) {|    if (true) {|eval_test cko|^(CitedEvidenceTest|cli_hypotheses$)"
  "hypothesis_settled_twice|src/cko/eval/hypothesis.cpp|        if (s.hypothesis == o.hypothesis) {|        if (false) {|eval_test cko|^(HypothesisTest|cli_hypotheses$)"
  # [23] identity gaps lower the stated claim; a gain bound's map must have recorded its windows.
  "identity_container_caps_nothing|src/cko/eval/identity_claim.cpp|    if (id.in_container) {|    if (false) {|eval_test report_test|^(IdentityClaim|IdentityClaimReportTest)"
  "identity_gpu_gap_caps_at_kernel|src/cko/eval/identity_claim.cpp|            {IdentityGap::gpu_unverified, store::LoweredTo::unconfirmed,|            {IdentityGap::gpu_unverified, store::LoweredTo::kernel,|eval_test report_test|^(IdentityClaim|IdentityClaimReportTest)"
  "gain_bound_coverage_unchecked|src/cko/eval/cited_evidence.cpp|            if (recorded && *recorded >= kGainBoundMinCoveragePct) {|            if (true) {|eval_test|^ExperimentTest"
  # [23] bundles: the tar reader's refusals and what fsck --bundle checks.
  "tar_accepts_dotdot|src/cko/util/tar_reader.cpp|        if (part == \".\" \p\p part == \"..\") {|        if (part == \".\") {|util_test|^TarTest"
  "tar_accepts_symlinks|src/cko/util/tar_reader.cpp|        return \"a symbolic link\";|        return \"\";|util_test|^TarTest"
  "bundle_manifest_id_unchecked|src/cko/store/bundle_check.cpp|    if (content != m.id) {|    if (false) {|store_test cko|^(BundleTest|cli_bundle$)"
  "bundle_redaction_original_unchecked|src/cko/store/bundle_check.cpp|        } else if (!recorded_as(store, r.path, r.original_sha256)) {|        } else if (false) {|store_test|^BundleTest"
  "group_commit_skips_the_sync|src/cko/store/write_batch.cpp|        if (const int err = sync_filesystem_of(root()); err != 0) {|        if (const int err = 0; err != 0) {|run_test store_test|^(InvocationTest|WriteBatchTest)"
  "call_file_planted_anywhere_passes|src/cko/run/call_guard.cpp|    return !fs::exists(store.root() / store::layout::invocation_result(invocation));|    return true \p\p fs::exists(store.root() / store::layout::invocation_result(invocation));|run_test|^InvocationTest"
  "nsys_empty_gpu_side_unsaid|src/cko/profile/nsys/timeline_feeder.cpp|        if (gpu_intervals_ == 0) {|        if (false) {|profile_timeline_input_test|^TimelineInput"
  "listing_between_calls_not_carried|src/cko/run/invocation.cpp|    out.store_before = std::exchange(listing_after_last_call_, nullptr);|    out.store_before = nullptr;|run_test|^InvocationTest"
  # [21] the NCU tokenizer's block run: a wide row's cells 64 bytes at a time, the same cells.
  "tokenizer_block_opening_quote_ends_a_cell|src/cko/profile/ncu/byte_scan.hpp|(q65 << 63)) & ~std::uint64_t{1};|(q65 << 63));|profile_ncu_test|^(CsvTokenizer|PlainCellEnds)"
  "tokenizer_block_reads_through_a_comma_cell|src/cko/profile/ncu/byte_scan.hpp|        ends &= (overlap & -overlap) - 1;|        ends &= ~std::uint64_t{0};|profile_ncu_test|^(CsvTokenizer|PlainCellEnds)"
  "racy_window_one_second_again|src/cko/run/call_guard.cpp|    return stamped_here && fine ? kFine : kCoarse;|    return stamped_here && fine ? 50 * kFine : kCoarse;|run_test|^InvocationTest"
)

# apply FILE ANCHOR REPLACEMENT: replaces the one occurrence; exit 3 when not exactly one.
apply() {
  python3 - "$@" <<'PY'
import sys
def unescape(s):
    return s.replace("\\n", "\n").replace("\\p", "|")
path, anchor, repl = sys.argv[1], unescape(sys.argv[2]), unescape(sys.argv[3])
text = open(path).read()
n = text.count(anchor)
if n != 1:
    print(f"  anchor occurs {n} times in {path}: {anchor!r}")
    sys.exit(3)
open(path, "w").write(text.replace(anchor, repl))
PY
}

# The table's shape, before anything is built: the fields in their places (the regex is the rest of
# the row and may hold |; a | in an anchor or a replacement is written \p), a unique name, a file
# that exists and an anchor that occurs exactly once in it.
lint_problems=()
declare -A seen=()
for row in "${mutants[@]}"; do
  IFS='|' read -r name file anchor repl targets regex <<<"$row"
  if ! [[ "$targets" =~ ^[A-Za-z0-9_]+( [A-Za-z0-9_]+)*$ && "$regex" == ^* ]]; then
    lint_problems+=("$name: its fifth field is not build targets or its sixth not a ^regex (got '$targets' and '$regex'): NAME|FILE|ANCHOR|REPLACEMENT|TARGETS|REGEX, with a | inside code written \\p")
    continue
  fi
  [ -z "${seen[$name]:-}" ] || lint_problems+=("$name: a second row of that name")
  seen[$name]=1
  if [ ! -f "$repo/$file" ]; then
    lint_problems+=("$name: no file $file")
  else
    printf '%s\0%s\0%s\0' "$name" "$file" "$anchor" >>"$scratch/lint.rows"
  fi
done
# Each anchor once in its file: one python3 for the table (a process per row took 27 s).
if [ -f "$scratch/lint.rows" ]; then
  while IFS= read -r line; do lint_problems+=("$line"); done < <(python3 - "$repo" "$scratch/lint.rows" <<'PY'
import sys
repo, rows = sys.argv[1], open(sys.argv[2], encoding="utf-8").read().split("\0")[:-1]
for name, path, anchor in zip(rows[0::3], rows[1::3], rows[2::3]):
    anchor = anchor.replace("\\n", "\n").replace("\\p", "|")
    n = open(f"{repo}/{path}", encoding="utf-8").read().count(anchor)
    if n != 1:
        print(f"{name}: anchor occurs {n} times in {path}: {anchor!r}")
PY
  )
fi
if [ "${#lint_problems[@]}" -gt 0 ]; then
  printf '  FAIL: %s\n' "${lint_problems[@]}"
  exit 1
fi
if [ "$lint" -eq 1 ]; then
  echo "mutation table: ${#mutants[@]} rows, each with six fields and an anchor that occurs once"
  exit 0
fi

# Lanes: the rows dealt round-robin to MUTATION_LANES copies of the tree (default 2 where there are
# two cores or more), each building with a share of the cores: a mutant's one-file compile, its
# links and its tests leave a core idle most of the time, and two lanes fill it.
lanes=${MUTATION_LANES:-$(( jobs >= 2 ? 2 : 1 ))}
lane_jobs=$(( jobs / lanes > 0 ? jobs / lanes : 1 ))
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# The flags of `make build` (Makefile: -Werror under CI), so that ccache finds its objects.
werror=OFF
[ -z "${CI:-}" ] || werror=ON
all_targets=$(printf '%s\n' "${mutants[@]}" | cut -d'|' -f5 | tr ' ' '\n' | sort -u | tr '\n' ' ')

# lane K: copies the tree to $scratch/laneK, builds the unmutated targets there, then applies, builds
# and tests each K-th row; one line per mutant on stdout, and its tally in $scratch/laneK.tally
# ("applied", "killed", or "problem: ...").
lane() {
  local k=$1 dir="$scratch/lane$1" i=0
  mkdir -p "$dir"
  if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$repo" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$dir")
  else  # a tree without .git: everything but build outputs
    tar -C "$repo" --exclude='./build*' --exclude='./examples/*/build' -cf - . | tar -C "$dir" -xf -
  fi
  cd "$dir"
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCKO_WERROR="$werror" -DCKO_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
  # shellcheck disable=SC2086
  cmake --build build -j "$lane_jobs" --target $all_targets >"$scratch/lane$k.build.log" 2>&1 ||
    { echo "problem: lane $k: the unmutated tree does not build (see $scratch/lane$k.build.log)" >>"$scratch/lane$k.tally"; return; }
  make -s -C examples/cpu-saxpy build/driver_cpp >/dev/null
  for row in "${mutants[@]}"; do
    i=$((i + 1))
    [ $(( (i - 1) % lanes )) -eq "$k" ] || continue
    mutant "$row" "$scratch/lane$k.tally"
  done
  # Leave the build as the tree is (a --keep'd copy stays usable).
  # shellcheck disable=SC2086
  cmake --build build -j "$lane_jobs" --target $all_targets >/dev/null
  echo "lane done" >>"$scratch/lane$k.tally"
}

# mutant ROW TALLY, in a lane's tree: appends its outcome to TALLY and prints its line.
mutant() {
  local name file anchor repl targets regex result rc n full_rc t0 tally=$2
  IFS='|' read -r name file anchor repl targets regex <<<"$1"
  if [ "${#only[@]}" -gt 0 ] && ! printf '%s\n' "${only[@]}" | grep -qx "$name"; then return; fi
  cp "$file" "$file.orig"
  if ! apply "$file" "$anchor" "$repl"; then
    echo "problem: $name: its anchor no longer applies in $file" >>"$tally"
    mv "$file.orig" "$file"
    return
  fi
  echo applied >>"$tally"
  t0=$(date +%s)
  rc=0
  # shellcheck disable=SC2086
  if ! cmake --build build -j "$lane_jobs" --target $targets >"$scratch/$name.build.log" 2>&1; then
    result="killed (does not build)"
  else
    (cd build && ctest -j "$lane_jobs" -R "$regex" --stop-on-failure >"$scratch/$name.test.log" 2>&1) || rc=$?
    n=$(grep -Ec 'Test +#[0-9]+:' "$scratch/$name.test.log" || true)
    if [ "$n" -eq 0 ]; then
      result="SURVIVED (no test matched $regex)"
    elif [ "$rc" -ne 0 ]; then
      # A test that fails, crashes (***Exception: SegFault) or times out: its name (a crash once
      # stopped the lane here, the grep finding no "Failed").
      result="killed by $( (grep -m1 -Eo 'Test +#[0-9]+: [^ ]+ \.*\*+(Failed|Exception|Timeout)' "$scratch/$name.test.log" || true) | awk '{print $3}')"
    else
      result="SURVIVED ($n tests passed)"
    fi
    # A survivor of its targeted tests gets the whole suite before it counts as surviving: the row's
    # regex is a speed-up, not the definition of which test may kill it.
    case "$result" in SURVIVED*)
      full_rc=0
      if ! cmake --build build -j "$lane_jobs" >"$scratch/$name.full-build.log" 2>&1; then
        result="killed (the whole tree does not build; widen the row's targets)"
      else
        (cd build && ctest -j "$lane_jobs" >"$scratch/$name.full.log" 2>&1) || full_rc=$?
        if [ "$full_rc" -ne 0 ]; then
          result="killed by the whole suite: $( (grep -m1 -Eo 'Test +#[0-9]+: [^ ]+ \.*\*+(Failed|Exception|Timeout)' "$scratch/$name.full.log" || true) | awk '{print $3}') (widen the row's regex)"
        else
          result="$result; the whole suite passed too"
        fi
      fi
    ;; esac
  fi
  case "$result" in killed*) echo killed >>"$tally";; *) echo "problem: $name: $result" >>"$tally";; esac
  printf '  %-38s %-40s %4ss\n' "$name" "$result" "$(( $(date +%s) - t0 ))"
  mv "$file.orig" "$file"
}

echo "== $lanes lanes of $lane_jobs jobs under $scratch: copying the tree, building the unmutated targets, then the mutants"
pids=()
for ((k = 0; k < lanes; k++)); do
  lane "$k" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || true; done
tallies=$(cat "$scratch"/lane*.tally 2>/dev/null || true)
# A lane that stopped early (a failed copy, configure or build) has not written "lane done".
for ((k = 0; k < lanes; k++)); do
  grep -qx "lane done" "$scratch/lane$k.tally" 2>/dev/null ||
    tallies+=$'\n'"problem: lane $k stopped before its last mutant (logs under $scratch; --keep keeps them)"
done
applied=$(grep -cx applied <<<"$tallies" || true)
killed=$(grep -cx killed <<<"$tallies" || true)
echo "mutation check: $killed of $applied mutants killed in $(( $(date +%s) - start )) s"
if grep -q '^problem: ' <<<"$tallies"; then
  grep '^problem: ' <<<"$tallies" | sed 's/^problem: /  FAIL: /'
  exit 1
fi
[ "$applied" -gt 0 ] || { echo "  FAIL: no mutant applied"; exit 1; }
