"""CPU tests of the torch-layernorm driver: the eager original and the bfloat16 candidate run on the CPU;
the Triton candidate needs a GPU and triton, and the driver reports it as an `error` saying so."""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="needs PyTorch (Debian: apt-get install python3-torch)")

EXAMPLE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
THRESHOLD = 1e-4  # cko.toml [correctness]


def run_request(tmp_path, candidate=None, mode="paired", samples=3):
    out = tmp_path / "out"
    subjects = [{"role": "reference", "label": "original", "path": os.path.join(EXAMPLE, "original")}]
    if candidate:
        subjects.append({"role": "candidate", "label": candidate,
                         "path": os.path.join(EXAMPLE, "candidates", candidate)})
    req = {
        "format_version": "cko/driver-request-v1", "mode": mode,
        "case": {"id": "small", "path": os.path.join(EXAMPLE, "cases", "small.json")},
        "subjects": subjects, "order": [s["role"] for s in reversed(subjects)], "samples": samples, "seed": 5,
        "objective": {"primary": {"name": "latency_us", "unit": "us"}, "constraints": []},
        "correctness": {"metrics": ["max_abs_err"]},
        "output_dir": str(out), "result_path": str(out / "result.json"), "deadline_unix_s": 4102444800.0,
    }
    path = tmp_path / "request.json"
    path.write_text(json.dumps(req))
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLE, "driver.py"), "--request", str(path)],
                          capture_output=True, text=True, timeout=300, cwd=EXAMPLE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads((out / "result.json").read_text())
    assert result["format_version"] == "cko/driver-result-v1" and result["artifacts"] == []
    assert os.listdir(out) == ["result.json"]
    return {s["role"]: s for s in result["subjects"]}, result["environment"]


def test_original_matches_the_float64_reference(tmp_path):
    subjects, env = run_request(tmp_path, mode="smoke", samples=2)
    ref = subjects["reference"]
    assert ref["correctness"]["status"] == "passed"
    assert ref["correctness"]["metrics"]["max_abs_err"] <= THRESHOLD / 10
    assert len(ref["measurements"]["primary"]["samples"]) == 2
    assert env["software"]["torch"] == torch.__version__


def test_lower_precision_candidate_breaks_the_threshold(tmp_path):
    subjects, _ = run_request(tmp_path, "half_precision", samples=4)
    cand, ref = subjects["candidate"], subjects["reference"]
    # The driver measures it; cko's rule (max_abs_err <= 1e-4) is what makes it invalid.
    assert cand["correctness"]["metrics"]["max_abs_err"] > 10 * THRESHOLD
    assert ref["correctness"]["metrics"]["max_abs_err"] <= THRESHOLD / 10
    assert all(len(s["measurements"]["primary"]["samples"]) == 4 for s in (cand, ref))


def test_triton_candidate_runs_on_a_gpu_or_says_what_it_needs(tmp_path):
    subjects, env = run_request(tmp_path, "triton_fused")
    cand = subjects["candidate"]
    assert subjects["reference"]["correctness"]["status"] == "passed"
    try:
        import triton  # noqa: F401
        import triton.language  # noqa: F401
        has_triton = True
    except ImportError:
        has_triton = False
    runnable = has_triton and torch.cuda.is_available()
    if runnable:
        assert cand["correctness"]["status"] == "passed", env["notes"]
        assert cand["correctness"]["metrics"]["max_abs_err"] <= THRESHOLD
        return
    # CPU-only (or no triton): the subject errors with a message saying which is missing here.
    assert cand["correctness"]["status"] == "error"
    assert cand["measurements"]["primary"]["samples"] == []
    want = "needs a CUDA GPU" if has_triton else "needs triton"
    assert any(want in n for n in env["notes"]), (want, env["notes"])


def test_profile_trace_writes_a_chrome_trace_of_each_runnable_subject(tmp_path):
    out = tmp_path / "trace.json"
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLE, "profile_trace.py"), str(out), "--case", "small",
                           "--calls", "2", "--subjects", "original,candidates/half_precision"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    events = doc["traceEvents"] if isinstance(doc, dict) else doc  # Kineto object, or torch 1.13's CPU list
    names = {e.get("name") for e in events}
    assert {"subject:original", "subject:candidates/half_precision"} <= names, sorted(n for n in names if n)[:20]
