#!/usr/bin/env bash
# Runs the Python tests (SDK and examples) with whichever python3 has pytest (Debian's python3-pytest
# lives under /usr/bin even where another python3 comes first on PATH).
#   run_pytest.sh cpu   every test that needs no GPU; a skip here is a failure (nothing may hide)
#   run_pytest.sh gpu   the tests that need a GPU (and torch); exit 77 when any was skipped, which
#                       ctest reports as "Skipped" (SKIP_RETURN_CODE), never as "Passed"
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: run_pytest.sh cpu|gpu}
shift
# The GPU tests, by node id / folder; cpu mode runs everything else.
gpu_tests=(sdk/python/tests/test_cko_driver.py::test_cuda_event_timer_with_real_torch examples/cuda-softmax
           examples/torch-softmax)
py=""
for cand in python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null && "$cand" -c 'import pytest' 2>/dev/null; then py=$cand; break; fi
done
[ -n "$py" ] || { echo "no python3 with pytest; run 'make deps' (installs python3-pytest)"; exit 1; }
report=$(mktemp); trap 'rm -f "$report"' EXIT
case "$mode" in
  cpu) args=(sdk/python/tests examples --deselect "${gpu_tests[0]}" --ignore examples/cuda-softmax --ignore examples/torch-softmax) ;;
  gpu) args=("${gpu_tests[@]}") ;;
  *) echo "run_pytest.sh: mode must be cpu or gpu, not '$mode'"; exit 2 ;;
esac
"$py" -m pytest -q -rs -p no:cacheprovider --junitxml="$report" "${args[@]}" "$@"
rc=$?
# pytest's 5 means it collected nothing: for us that is a broken test tree, not a pass.
[ "$rc" -eq 5 ] && echo "pytest collected no tests" && exit 1
[ "$rc" -eq 0 ] || exit "$rc"
skipped=$("$py" -c 'import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
print(sum(int(s.get("skipped", 0)) for s in ([r] if r.tag == "testsuite" else r.iter("testsuite"))))' "$report")
if [ "$skipped" -gt 0 ]; then
  if [ "$mode" = gpu ]; then echo "$skipped GPU test(s) skipped: reported to ctest as skipped"; exit 77; fi
  echo "$skipped test(s) skipped in cpu mode: a test that needs a GPU belongs in gpu_tests of $0"; exit 1
fi
