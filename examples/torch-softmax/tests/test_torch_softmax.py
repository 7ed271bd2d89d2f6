"""The torch-softmax driver, end to end through cko's protocol: a paired request in one process and
two requests served by one session. Needs PyTorch (on the GPU when it sees one, else on the CPU);
skipped, saying why, when `import torch` fails.

With pytest: python3 -m pytest examples/torch-softmax/tests
"""
import json
import os
import subprocess
import sys

import pytest

EXAMPLE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVER = os.path.join(EXAMPLE, "driver.py")

try:
    import torch
    HAVE_TORCH, CUDA, WHY = True, torch.cuda.is_available(), ""
except ImportError as e:
    HAVE_TORCH, CUDA, WHY = False, False, f"`import torch` failed ({e}): install PyTorch to run this example"
pytestmark = pytest.mark.skipif(not HAVE_TORCH, reason=WHY)


def request(tmp_path, name, rows=256, cols=512):
    case = tmp_path / f"{name}-case.json"
    case.write_text(json.dumps({"rows": rows, "cols": cols, "seed": 3, "device": "cuda" if CUDA else "cpu"}))
    out = tmp_path / name
    req = {
        "format_version": "cko/driver-request-v1", "mode": "paired",
        "case": {"id": "main", "path": str(case)},
        "subjects": [{"role": "reference", "label": "original", "path": os.path.join(EXAMPLE, "original")},
                     {"role": "candidate", "label": "candidate", "path": os.path.join(EXAMPLE, "candidate")}],
        "order": ["reference", "candidate"], "samples": 5, "seed": 1,
        "objective": {"primary": {"name": "latency_us", "unit": "us"}, "constraints": []},
        "correctness": {"metrics": ["max_rel_err"]},
        "output_dir": str(out), "result_path": str(out / "result.json"), "deadline_unix_s": 4102444800.0,
    }
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(req))
    return path, out / "result.json"


def check(result_path):
    result = json.loads(result_path.read_text())
    for s in result["subjects"]:
        assert s["correctness"]["status"] == "passed" and s["correctness"]["metrics"]["max_rel_err"] <= 1e-4, s
        assert len(s["measurements"]["primary"]["samples"]) == 5
    if CUDA:
        assert result["environment"]["gpu_uuids"], result["environment"]


def test_one_paired_request_in_its_own_process(tmp_path):
    path, result = request(tmp_path, "one")
    proc = subprocess.run([sys.executable, DRIVER, "--request", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    check(result)


def test_a_session_serves_two_requests_in_one_process(tmp_path):
    requests, notices = tmp_path / "requests", tmp_path / "notices"
    os.mkfifo(requests)
    os.mkfifo(notices)
    rq, nt = os.open(requests, os.O_RDWR), os.open(notices, os.O_RDWR)
    env = dict(os.environ, CKO_SESSION_REQUESTS=str(requests), CKO_SESSION_NOTICES=str(notices))
    log = open(tmp_path / "stderr.txt", "w")
    proc = subprocess.Popen([sys.executable, DRIVER, "--session"], env=env, stderr=log)
    answers = os.fdopen(nt, "r")
    assert json.loads(answers.readline()) == {"ready": True}  # torch imported: cko may take the GPU now
    results = []
    for n in (1, 2):
        path, result = request(tmp_path, f"s{n}")
        results.append(result)
        os.write(rq, (json.dumps({"call": n, "request": str(path)}) + "\n").encode())
        assert json.loads(answers.readline()) == {"call": n, "status": "done", "exit_code": 0}
    os.write(rq, b'{"exit": true}\n')
    assert proc.wait(timeout=60) == 0
    for r in results:
        check(r)
