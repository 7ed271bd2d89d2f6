#!/usr/bin/env bash
# Runs the Python tests (SDK and examples) with whichever python3 has pytest (Debian's python3-pytest
# lives under /usr/bin even where another python3 comes first on PATH).
set -u
cd "$(dirname "$0")/.."
py=""
for cand in python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null && "$cand" -c 'import pytest' 2>/dev/null; then py=$cand; break; fi
done
[ -n "$py" ] || { echo "no python3 with pytest; run 'make deps' (installs python3-pytest)"; exit 1; }
"$py" -m pytest -q -p no:cacheprovider sdk/python/tests examples "$@"
rc=$?
# pytest's 5 means it collected nothing: for us that is a broken test tree, not a pass.
[ "$rc" -eq 5 ] && echo "pytest collected no tests" && exit 1
exit "$rc"
