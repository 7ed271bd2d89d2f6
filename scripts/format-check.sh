#!/usr/bin/env bash
# Fails when a C++ file of the tree differs from what clang-format-14 (the repo's .clang-format)
# makes of it, naming the files; `scripts/format-check.sh --fix` formats them in place.
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=$(command -v clang-format-14 || command -v clang-format || true)
[ -n "$fmt" ] || { echo "format-check: clang-format-14 is missing (scripts/deps.sh installs it)" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cc' '*.h' | grep -v '^scripts/\|/third_party/')
if [ "${1:-}" = "--fix" ]; then
  "$fmt" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  if ! "$fmt" --dry-run --Werror "$f" >/dev/null 2>&1; then
    bad+=("$f")
  fi
done
if [ ${#bad[@]} -gt 0 ]; then
  printf 'format-check: %d file(s) differ from clang-format:\n' "${#bad[@]}" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "run: scripts/format-check.sh --fix" >&2
  exit 1
fi
echo "format-check: ${#files[@]} files formatted"
