# Shared helpers for the CLI tests: sourced, never run.
# expect_rc RC CMD...  runs CMD, fails the test unless it exits with RC; output in $out/$err.
set -u
fail() { echo "  FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
expect_rc() {
  local want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  out=$(cat "$tmp/out"); err=$(cat "$tmp/err")
  [ "$got" -eq "$want" ] || fail "'$*' exited $got, expected $want; stderr: $err"
}
contains() { case "$1" in *"$2"*) ;; *) fail "expected to find '$2' in: $1";; esac; }
