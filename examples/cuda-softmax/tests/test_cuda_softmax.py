"""End-to-end test of the cuda-softmax driver on a GPU (skipped without one): smoke and paired requests.

With pytest: python3 -m pytest examples/cuda-softmax/tests
Without it:  python3 examples/cuda-softmax/tests/test_cuda_softmax.py   (also prints the measured medians)
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

EXAMPLE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVER = os.path.join(EXAMPLE, "build", "driver")

try:
    import pytest

    pytestmark = pytest.mark.skipif(shutil.which("nvidia-smi") is None, reason="needs an NVIDIA GPU")
except ImportError:  # runnable as a plain script on a GPU machine without pytest
    pytest = None


def build_driver():
    subprocess.run(["make", "-s", "-C", EXAMPLE], check=True)


def run_request(tmp, mode, case, samples, roles):
    out = os.path.join(tmp, f"{mode}-{case}")
    paths = {"reference": os.path.join(EXAMPLE, "original"), "candidate": os.path.join(EXAMPLE, "candidate")}
    req = {
        "format_version": "cko/driver-request-v1", "mode": mode,
        "case": {"id": case, "path": os.path.join(EXAMPLE, "cases", case + ".json")},
        "subjects": [{"role": r, "label": r, "path": paths[r]} for r in roles],
        "samples": samples, "seed": 5,
        "objective": {"primary": {"name": "latency_us", "unit": "us"}, "constraints": []},
        "correctness": {"metrics": ["max_rel_err"]},
        "output_dir": out, "result_path": os.path.join(out, "result.json"), "deadline_unix_s": 4102444800.0,
    }
    if mode == "paired":
        req["order"] = list(reversed(roles))
    path = os.path.join(tmp, f"{mode}-{case}.request.json")
    with open(path, "w") as f:
        json.dump(req, f)
    proc = subprocess.run([DRIVER, "--request", path], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with open(req["result_path"]) as f:
        result = json.load(f)
    assert result["format_version"] == "cko/driver-result-v1" and result["artifacts"] == []
    assert os.listdir(out) == ["result.json"]
    assert result["environment"]["gpu_uuids"] and result["environment"]["timer"] == "cuda_event_l2_flush"
    subjects = {s["role"]: s for s in result["subjects"]}
    for s in subjects.values():
        assert set(s) == {"role", "correctness", "measurements"}
        assert s["correctness"]["status"] == "passed", s
        assert s["correctness"]["metrics"]["max_rel_err"] <= 1e-4  # the Target's threshold (cko.toml)
        assert len(s["measurements"]["primary"]["samples"]) == samples
        assert all(x > 0 for x in s["measurements"]["primary"]["samples"])
    return subjects, result["environment"]


def test_smoke_and_paired(tmp_path=None):
    build_driver()
    tmp = str(tmp_path) if tmp_path else tempfile.mkdtemp()
    run_request(tmp, "smoke", "main", 2, ["reference"])
    report = []
    for case in ("main", "long_rows"):
        subjects, env = run_request(tmp, "paired", case, 15, ["reference", "candidate"])
        ref, cand = (statistics.median(subjects[r]["measurements"]["primary"]["samples"])
                     for r in ("reference", "candidate"))
        errs = [subjects[r]["correctness"]["metrics"]["max_rel_err"] for r in ("reference", "candidate")]
        report.append(f"{case}: original {ref:.1f} us, candidate {cand:.1f} us, speedup {ref / cand:.1f}x, "
                      f"max_rel_err {errs[0]:.2g}/{errs[1]:.2g} ({env['gpu_models'][0]})")
        assert ref / cand >= 1.5
    print("\n".join(report))


if __name__ == "__main__":
    test_smoke_and_paired()
    print("ok")
