"""End-to-end tests of the cpu-saxpy example: both drivers, smoke and paired requests, strict result checks."""
import json
import os
import subprocess
import sys

import pytest

EXAMPLE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPP_DRIVER = os.path.join(EXAMPLE, "build", "driver_cpp")


@pytest.fixture(scope="session")
def drivers():
    subprocess.run(["make", "-s", "-C", EXAMPLE], check=True)
    return {"python": [sys.executable, os.path.join(EXAMPLE, "driver.py")], "cpp": [CPP_DRIVER]}


def write_request(tmp_path, mode, case, samples, roles=("reference", "candidate"), order=None, paths=None):
    out = tmp_path / "out"
    paths = paths or {"reference": os.path.join(EXAMPLE, "original"), "candidate": os.path.join(EXAMPLE, "candidate")}
    req = {
        "format_version": "cko/driver-request-v1",
        "mode": mode,
        "case": {"id": case, "path": os.path.join(EXAMPLE, "cases", case + ".json")},
        "subjects": [{"role": r, "label": r, "path": paths[r]} for r in roles],
        "samples": samples,
        "seed": 912873,
        "objective": {"primary": {"name": "latency_us", "unit": "us"}, "constraints": []},
        "correctness": {"metrics": ["max_rel_err"]},
        "output_dir": str(out),
        "result_path": str(out / "result.json"),
        "deadline_unix_s": 4102444800.0,
    }
    if order:
        req["order"] = list(order)
    path = tmp_path / "request.json"
    path.write_text(json.dumps(req))
    return path, req


def run_driver(argv, request_path):
    return subprocess.run(argv + ["--request", str(request_path)], capture_output=True, text=True, timeout=300)


def validate(result, req):
    """The checks cko applies to a driver result (PROTOCOL.md), done strictly."""
    assert set(result) == {"format_version", "subjects", "environment", "artifacts"}
    assert result["format_version"] == "cko/driver-result-v1"
    assert sorted(s["role"] for s in result["subjects"]) == sorted(s["role"] for s in req["subjects"])
    for s in result["subjects"]:
        assert set(s) == {"role", "correctness", "measurements"}
        assert set(s["correctness"]) == {"status", "metrics"}
        assert set(s["measurements"]) == {"primary", "constraints"}
        primary = s["measurements"]["primary"]
        assert (primary["name"], primary["unit"]) == ("latency_us", "us")
        assert len(primary["samples"]) == req["samples"]
        assert all(isinstance(x, float) and x > 0 for x in primary["samples"])
        assert s["measurements"]["constraints"] == []
    assert result["artifacts"] == []
    assert os.listdir(req["output_dir"]) == ["result.json"]
    return {s["role"]: s for s in result["subjects"]}


@pytest.mark.parametrize("driver", ["python", "cpp"])
def test_smoke_request_measures_one_subject(tmp_path, drivers, driver):
    path, req = write_request(tmp_path, "smoke", "small", 2, roles=("reference",))
    proc = run_driver(drivers[driver], path)
    assert proc.returncode == 0, proc.stderr
    subjects = validate(json.load(open(req["result_path"])), req)
    assert subjects["reference"]["correctness"]["status"] == "passed"
    assert subjects["reference"]["correctness"]["metrics"]["max_rel_err"] <= 1e-6


@pytest.mark.parametrize("driver", ["python", "cpp"])
def test_paired_large_case_measures_both_subjects(tmp_path, drivers, driver):
    # Speed is not asserted here (tests are not timing claims); `make demo` and the README show it.
    path, req = write_request(tmp_path, "paired", "large", 7, order=("candidate", "reference"))
    proc = run_driver(drivers[driver], path)
    assert proc.returncode == 0, proc.stderr
    subjects = validate(json.load(open(req["result_path"])), req)
    for s in subjects.values():
        assert s["correctness"]["status"] == "passed"
        assert s["correctness"]["metrics"]["max_rel_err"] <= 1e-6
        assert len(s["measurements"]["primary"]["samples"]) == 7
        assert all(x > 0 for x in s["measurements"]["primary"]["samples"])


@pytest.mark.parametrize("driver", ["python", "cpp"])
def test_candidate_that_does_not_compile_is_an_error_not_a_crash(tmp_path, drivers, driver):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "saxpy.cpp").write_text("this is not C++\n")
    path, req = write_request(tmp_path, "paired", "small", 3, order=("reference", "candidate"),
                              paths={"reference": os.path.join(EXAMPLE, "original"), "candidate": str(broken)})
    proc = run_driver(drivers[driver], path)
    assert proc.returncode == 0, proc.stderr
    result = json.load(open(req["result_path"]))
    subjects = {s["role"]: s for s in result["subjects"]}
    assert subjects["candidate"]["correctness"]["status"] == "error"
    assert subjects["candidate"]["measurements"]["primary"]["samples"] == []
    assert subjects["reference"]["correctness"]["status"] == "passed"
    assert any("compiling" in n for n in result["environment"]["notes"])


@pytest.mark.parametrize("driver", ["python", "cpp"])
def test_invalid_request_exits_2_without_result(tmp_path, drivers, driver):
    path, req = write_request(tmp_path, "paired", "small", 3)  # paired without order
    proc = run_driver(drivers[driver], path)
    assert proc.returncode == 2
    assert "order" in proc.stderr
    assert not os.path.exists(req["output_dir"])
