# Shared helpers for the CLI tests: sourced, never run.
# Any command that fails outside a condition (`if`, `||`, `&&`) fails the script at once, naming its
# line: a python assert block, a pipeline (pipefail) or a $(...) assignment needs no `|| fail` to
# count. A command expected to fail goes through expect_rc, or is written `cmd || true`.
# expect_rc RC CMD...  runs CMD, fails the test unless it exits with RC; output in $out/$err.
set -Eeuo pipefail
trap 'rc=$?; echo "  FAIL: ${BASH_SOURCE[0]##*/}:$LINENO: \`$BASH_COMMAND\` exited $rc" >&2; exit "$rc"' ERR
fail() { echo "  FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
expect_rc() {
  local want=$1 got=0; shift
  "$@" >"$tmp/out" 2>"$tmp/err" || got=$?
  out=$(cat "$tmp/out"); err=$(cat "$tmp/err")
  [ "$got" -eq "$want" ] || fail "'$*' exited $got, expected $want; stderr: $err"
}
contains() { case "$1" in *"$2"*) ;; *) fail "expected to find '$2' in: $1";; esac; }

# saxpy_target DIR ORIGINAL_SRC_DIR: a one-case cpu-saxpy Target folder (spec + original + case) driven
# by the example's C++ driver; extra spec lines may be appended to DIR/cko.toml afterwards.
saxpy_target() {
  local dir=$1 src=$2 ex
  ex="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../examples/cpu-saxpy" && pwd)"
  make -s -C "$ex" build/driver_cpp >/dev/null || fail "cannot build the cpu-saxpy C++ driver"
  mkdir -p "$dir/original" "$dir/cases"
  cp "$src/saxpy.cpp" "$dir/original/"
  cp "$ex/cases/small.json" "$dir/cases/"
  cat > "$dir/cko.toml" <<TOML
[target]
name = "saxpy-small"
claim_layer = "kernel"
original = "original"
change_scope = ["original/saxpy.cpp"]
[cases]
dir = "cases"
ids = ["small"]
[driver]
argv = ["$ex/build/driver_cpp"]
capabilities = ["single_subject", "paired_in_process"]
env_allow = ["PATH", "TMPDIR"]
[objective]
primary = { name = "latency_us", unit = "us", direction = "lower", aggregation = "median" }
minimum_effect_pct = 5.0
[correctness]
metric = "max_rel_err"
operator = "<="
threshold = 1e-6
[statistics]
min_pairs = 6
max_pairs = 12
samples_per_call = 3
[limits]
command_timeout_s = 60
operation_timeout_s = 600
TOML
}
