"""Tests of the Python driver SDK: request validation, sampling order, units, errors, atomic result."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import types

import pytest

SDK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, SDK)

import cko_driver  # noqa: E402
from cko_driver import Workload, run_driver  # noqa: E402


def make_request(tmp_path, mode="paired", samples=3, unit="us", constraints=(), order=("candidate", "reference"),
                 **overrides):
    out = tmp_path / "out"
    case = tmp_path / "case.json"
    case.write_text(json.dumps({"n": 4}))
    roles = ["reference", "candidate"] if mode == "paired" else ["reference"]
    req = {
        "format_version": "cko/driver-request-v1",
        "mode": mode,
        "case": {"id": "main", "path": str(case)},
        "subjects": [{"role": r, "label": r + "-label", "path": str(tmp_path / r)} for r in roles],
        "samples": samples,
        "seed": 7,
        "objective": {"primary": {"name": "latency_" + unit, "unit": unit},
                      "constraints": [{"name": c, "unit": "byte"} for c in constraints]},
        "correctness": {"metrics": ["max_rel_err"]},
        "output_dir": str(out),
        "result_path": str(out / "result.json"),
        "deadline_unix_s": 4102444800.0,
    }
    if mode == "paired":
        req["order"] = list(order)
    req.update(overrides)
    path = tmp_path / "request.json"
    path.write_text(json.dumps(req))
    return path, req


class FixedTimer:
    """Every timed call takes exactly `ns` nanoseconds; the call still happens."""
    name = "fixed"

    def __init__(self, ns):
        self.ns = ns

    def before_each(self):
        pass

    def time_ns(self, call):
        call()
        return self.ns


class Recording(Workload):
    def __init__(self, fail=None, metric=0.0, constraints=None):
        self.calls, self.fail, self.metric, self.constraint_values = [], fail or {}, metric, constraints

    def prepare(self, subject, request):
        if self.fail.get(subject.role) == "prepare":
            raise RuntimeError("cannot load " + subject.role)
        return {"role": subject.role, "case": request.case.load_json()}

    def run(self, state):
        self.calls.append(state["role"])
        if self.fail.get(state["role"]) == "run":
            raise ValueError("kernel crashed")

    def check(self, state):
        return {"max_rel_err": self.metric}

    def constraints(self, state):
        return dict(self.constraint_values or {})


def run(path, workload, **kw):
    kw.setdefault("timer", FixedTimer(1000))
    kw.setdefault("warmup_s", 0.0)
    kw.setdefault("min_warmup_calls", 0)
    return run_driver(workload, argv=["--request", str(path)], **kw)


def load_result(req):
    with open(req["result_path"]) as f:
        return json.load(f)


def test_smoke_mode_gives_two_samples_for_one_subject(tmp_path):
    path, req = make_request(tmp_path, mode="smoke", samples=2)
    assert run(path, Recording()) == 0
    result = load_result(req)
    assert result["format_version"] == "cko/driver-result-v1"
    [subject] = result["subjects"]
    assert set(subject) == {"role", "correctness", "measurements"}
    assert subject["role"] == "reference"
    assert subject["correctness"] == {"status": "passed", "metrics": {"max_rel_err": 0.0}}
    assert subject["measurements"]["primary"] == {"name": "latency_us", "unit": "us", "samples": [1.0, 1.0]}
    assert subject["measurements"]["constraints"] == []
    assert result["artifacts"] == []
    assert os.listdir(req["output_dir"]) == ["result.json"]


def test_paired_mode_alternates_subjects_in_request_order(tmp_path):
    path, req = make_request(tmp_path, samples=4, order=("candidate", "reference"))
    w = Recording()
    assert run(path, w) == 0
    assert w.calls == ["candidate", "reference"] * 4
    result = load_result(req)
    assert [s["role"] for s in result["subjects"]] == ["reference", "candidate"]
    for s in result["subjects"]:
        assert len(s["measurements"]["primary"]["samples"]) == 4


class Watching(Recording):
    """Reads, in every timed call, which subject the SDK says runs now."""

    def __init__(self, output_dir):
        super().__init__()
        self.marker, self.seen = os.path.join(output_dir, "cko-running-subject.txt"), []

    def run(self, state):
        with open(self.marker) as f:
            self.seen.append(f.read())
        super().run(state)


def test_the_running_subject_is_a_file_not_stderr_lines(tmp_path, capfd):
    # A paired request alternates subjects at every call: the running subject is kept in a file of
    # output_dir (exact at every call, removed before the result), and nothing goes to stderr (it
    # wrote `cko: subject ROLE case ID` at every change: ~2 000 lines a request).
    path, req = make_request(tmp_path, samples=5, order=("candidate", "reference"))
    w = Watching(req["output_dir"])
    assert run(path, w, min_warmup_calls=3) == 0
    assert len(w.seen) == len(w.calls) == 16
    assert w.seen == [f"cko: subject {role} case main\n" for role in w.calls]
    assert "cko: subject" not in capfd.readouterr().err
    assert os.listdir(req["output_dir"]) == ["result.json"]
    assert load_result(req)["artifacts"] == []


def test_a_crash_leaves_the_running_subject_named(tmp_path):
    # Killed while the candidate runs (its 4th call, after 3 of the reference): the file names the
    # candidate, which is what cko reads to attribute the crash.
    path, req = make_request(tmp_path, samples=5, order=("reference", "candidate"))
    script = tmp_path / "driver.py"
    script.write_text(textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {SDK!r})
        from cko_driver import Workload, run_driver
        calls = []
        def run(role):
            calls.append(role)
            if calls.count("candidate") == 4:
                os.kill(os.getpid(), signal.SIGKILL)
        w = Workload.from_functions(prepare=lambda subject, request: subject.role, run=run,
                                    check=lambda role: {{"max_rel_err": 0.0}})
        raise SystemExit(run_driver(w, warmup_s=0.0, min_warmup_calls=0))
    """))
    proc = subprocess.run([sys.executable, str(script), "--request", str(path)], capture_output=True, text=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with open(os.path.join(req["output_dir"], "cko-running-subject.txt")) as f:
        assert f.read() == "cko: subject candidate case main\n"
    assert "cko: subject" not in proc.stderr
    assert not os.path.exists(req["result_path"])


def test_without_the_file_each_change_of_subject_goes_to_stderr(tmp_path, capsys):
    # Where the file cannot be made, the line goes to stderr at every change of subject, as before
    # (cko reads the last one when there is no file).
    path, req = make_request(tmp_path, samples=3, order=("candidate", "reference"))
    os.makedirs(os.path.join(req["output_dir"], "cko-running-subject.txt"))  # a directory: open() fails
    assert run(path, Recording()) == 0
    err = capsys.readouterr().err
    # prepare, then 3 samples: 4 changes of subject each
    assert err.count("cko: subject candidate case main\n") == 4, err
    assert err.count("cko: subject reference case main\n") == 4, err
    assert err.endswith("cko: subject reference case main\n"), err


def test_each_subject_reports_the_digest_of_the_snapshot_it_was_measured_on(tmp_path):
    # cko names each subject's snapshot digest; the result is v2 and every entry carries the digest
    # of the subject whose samples it holds (cko refuses any other: role_mismatch).
    digests = {"reference": "a" * 64, "candidate": "b" * 64}
    subjects = [{"role": r, "label": r, "path": str(tmp_path / r), "digest": digests[r]}
                for r in ("reference", "candidate")]
    path, req = make_request(tmp_path, samples=2, subjects=subjects)
    assert run(path, Recording()) == 0
    result = load_result(req)
    assert result["format_version"] == "cko/driver-result-v2"
    assert {s["role"]: s["loaded_digest"] for s in result["subjects"]} == digests
    # An erroring subject still says which snapshot it was.
    path, req = make_request(tmp_path, samples=2, subjects=subjects)
    assert run(path, Recording(fail={"candidate": "prepare"})) == 0
    result = load_result(req)
    assert [s["loaded_digest"] for s in result["subjects"]] == [digests["reference"], digests["candidate"]]
    assert result["subjects"][1]["correctness"]["status"] == "error"


def test_a_request_without_digests_gets_a_v1_result_without_them(tmp_path):
    path, req = make_request(tmp_path, samples=2)
    assert run(path, Recording()) == 0
    result = load_result(req)
    assert result["format_version"] == "cko/driver-result-v1"
    assert all("loaded_digest" not in s for s in result["subjects"])


def test_the_result_is_written_whole_without_an_fsync(tmp_path, monkeypatch):
    # [21] cko makes result.json durable with the call's other files before it ledgers them; an
    # fsync per request here was about a millisecond of the SDK's share.
    def no_fsync(fd):
        raise AssertionError("the SDK fsynced")
    monkeypatch.setattr(os, "fsync", no_fsync)
    path, req = make_request(tmp_path, samples=2)
    assert run(path, Recording()) == 0
    assert load_result(req)["subjects"]
    assert [n for n in os.listdir(os.path.dirname(req["result_path"])) if n.endswith(".tmp")] == []


def test_a_digest_that_is_not_a_string_is_a_bad_request(tmp_path, capsys):
    subjects = [{"role": "reference", "label": "r", "path": str(tmp_path / "r"), "digest": 7}]
    path, req = make_request(tmp_path, mode="single", subjects=subjects)
    assert run(path, Recording()) == 2
    assert "request.subjects[0].digest" in capsys.readouterr().err
    assert not os.path.exists(req["result_path"])


def test_warm_up_is_interleaved_and_comes_before_samples(tmp_path):
    path, req = make_request(tmp_path, samples=2, order=("reference", "candidate"))
    w = Recording()
    assert run(path, w, min_warmup_calls=3) == 0
    assert w.calls == ["reference", "candidate"] * 5
    assert all(len(s["measurements"]["primary"]["samples"]) == 2 for s in load_result(req)["subjects"])


def test_warm_up_by_time_runs_until_the_time_is_spent(tmp_path):
    path, _ = make_request(tmp_path, mode="single", samples=1)
    w = Recording()
    assert run(path, w, timer="cpu", warmup_s=0.05, min_warmup_calls=1) == 0
    assert len(w.calls) > 2


@pytest.mark.parametrize("unit,expected", [("ns", 1_500_000.0), ("us", 1500.0), ("ms", 1.5), ("s", 0.0015)])
def test_primary_samples_are_converted_to_the_requested_unit(tmp_path, unit, expected):
    path, req = make_request(tmp_path, mode="single", samples=3, unit=unit)
    assert run(path, Recording(), timer=FixedTimer(1_500_000)) == 0
    primary = load_result(req)["subjects"][0]["measurements"]["primary"]
    assert primary == {"name": "latency_" + unit, "unit": unit, "samples": [pytest.approx(expected)] * 3}


def test_cpu_timer_measures_real_time(tmp_path):
    path, req = make_request(tmp_path, mode="single", samples=2, unit="ms")
    w = Workload.from_functions(prepare=lambda s, r: None, run=lambda st: __import__("time").sleep(0.01),
                                check=lambda st: {"max_rel_err": 0.0})
    assert run(path, w, timer="cpu") == 0
    samples = load_result(req)["subjects"][0]["measurements"]["primary"]["samples"]
    assert all(9.0 < x < 200.0 for x in samples)


def corrupt(req, key, value):
    req = dict(req)
    if value is KeyError:
        del req[key]
    else:
        req[key] = value
    return req


@pytest.mark.parametrize("change", [
    lambda r: corrupt(r, "format_version", "cko/driver-request-v0"),
    lambda r: corrupt(r, "mode", "baseline"),
    lambda r: corrupt(r, "subjects", r["subjects"][:1]),
    lambda r: corrupt(r, "order", ["candidate", "candidate"]),
    lambda r: corrupt(r, "order", KeyError),
    lambda r: corrupt(r, "samples", 0),
    lambda r: corrupt(r, "samples", True),
    lambda r: corrupt(r, "objective", {"primary": {"name": "lat", "unit": "cycles"}, "constraints": []}),
    lambda r: corrupt(r, "result_path", "/tmp/elsewhere/result.json"),
    lambda r: corrupt(r, "case", KeyError),
])
def test_invalid_request_exits_2_and_writes_nothing(tmp_path, capsys, change):
    path, req = make_request(tmp_path)
    path.write_text(json.dumps(change(req)))
    assert run(path, Recording()) == 2
    assert "invalid request" in capsys.readouterr().err
    assert not os.path.exists(req["output_dir"])


def test_unreadable_or_malformed_request_exits_2(tmp_path, capsys):
    assert run(tmp_path / "missing.json", Recording()) == 2
    bad = tmp_path / "bad.json"
    bad.write_text('{"format_version": NaN}')
    assert run(bad, Recording()) == 2
    assert run_driver(Recording(), argv=[]) == 2
    assert "usage" in capsys.readouterr().err


def test_user_code_exception_gives_status_error_and_a_note(tmp_path):
    path, req = make_request(tmp_path, samples=3)
    assert run(path, Recording(fail={"candidate": "run"})) == 0
    result = load_result(req)
    by_role = {s["role"]: s for s in result["subjects"]}
    assert by_role["candidate"]["correctness"] == {"status": "error", "metrics": {}}
    assert by_role["candidate"]["measurements"]["primary"]["samples"] == []
    assert by_role["reference"]["correctness"]["status"] == "passed"
    assert len(by_role["reference"]["measurements"]["primary"]["samples"]) == 3
    assert any("kernel crashed" in n for n in result["environment"]["notes"])
    assert os.listdir(req["output_dir"]) == ["result.json"]


def test_prepare_failure_gives_status_error(tmp_path):
    path, req = make_request(tmp_path, mode="single")
    assert run(path, Recording(fail={"reference": "prepare"})) == 0
    [s] = load_result(req)["subjects"]
    assert s["correctness"]["status"] == "error"


def test_non_finite_metric_fails_the_subject(tmp_path):
    path, req = make_request(tmp_path, mode="single")
    assert run(path, Recording(metric=float("nan"))) == 0
    [s] = load_result(req)["subjects"]
    assert s["correctness"]["status"] == "failed"
    assert s["correctness"]["metrics"]["max_rel_err"] == 1.7976931348623157e308


def test_constraints_are_sampled_per_call(tmp_path):
    path, req = make_request(tmp_path, samples=2, constraints=["peak_mem_bytes"])
    assert run(path, Recording(constraints={"peak_mem_bytes": 4096})) == 0
    for s in load_result(req)["subjects"]:
        assert s["measurements"]["constraints"] == [{"name": "peak_mem_bytes", "unit": "byte",
                                                     "samples": [4096.0, 4096.0]}]


def test_wrong_constraint_names_fail_the_driver_without_result(tmp_path, capsys):
    path, req = make_request(tmp_path, samples=2, constraints=["peak_mem_bytes"])
    assert run(path, Recording(constraints={"other": 1})) == 3
    assert not os.path.exists(req["result_path"])
    # No result; only which subject ran when the driver gave up (as after a crash).
    assert os.listdir(req["output_dir"]) == ["cko-running-subject.txt"]
    with open(os.path.join(req["output_dir"], "cko-running-subject.txt")) as f:
        assert f.read() == "cko: subject candidate case main\n"
    assert "no result written" in capsys.readouterr().err


def test_files_left_in_output_dir_are_listed_as_artifacts(tmp_path):
    path, req = make_request(tmp_path, mode="single")

    class WithTrace(Recording):
        def check(self, state):
            os.makedirs(os.path.join(req["output_dir"], "traces"), exist_ok=True)
            with open(os.path.join(req["output_dir"], "traces", "t.json"), "w") as f:
                f.write("{}")
            return {"max_rel_err": 0.0}

    assert run(path, WithTrace()) == 0
    assert load_result(req)["artifacts"] == ["traces/t.json"]


def fake_torch():
    """Just enough of torch for CudaEventTimer and the environment: events 2 ms apart, one GPU."""
    events = []

    class Event:
        def __init__(self, enable_timing):
            assert enable_timing

        def record(self):
            events.append("record")

        def synchronize(self):
            events.append("sync")

        def elapsed_time(self, end):
            return 2.0

    class Buffer:
        def __init__(self, n):
            self.n = n

        def zero_(self):
            events.append(("flush", self.n))

    props = types.SimpleNamespace(L2_cache_size=1024, uuid="1234-abcd", name="Fake GPU")
    cuda = types.SimpleNamespace(is_available=lambda: True, Event=Event, current_device=lambda: 0,
                                 device_count=lambda: 1, get_device_properties=lambda i: props)
    torch = types.SimpleNamespace(cuda=cuda, uint8="uint8", __version__="9.9.9",
                                  version=types.SimpleNamespace(cuda="13.0"),
                                  empty=lambda n, dtype, device: Buffer(n))
    return torch, events


def test_cuda_event_timer_flushes_l2_and_reports_the_gpu(tmp_path, monkeypatch):
    torch, events = fake_torch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    path, req = make_request(tmp_path, mode="smoke", samples=2, unit="ms")
    assert run(path, Recording(), timer="cuda", flush_l2=True) == 0
    result = load_result(req)
    assert result["subjects"][0]["measurements"]["primary"]["samples"] == [2.0, 2.0]
    assert events.count(("flush", 2048)) == 2
    assert events.count("sync") == 2
    env = result["environment"]
    assert env["timer"] == "cuda_event"
    assert env["gpu_uuids"] == ["GPU-1234-abcd"]
    assert env["software"]["torch"] == "9.9.9" and env["software"]["cuda"] == "13.0"


def test_driver_script_runs_as_a_subprocess(tmp_path):
    path, req = make_request(tmp_path, mode="paired", samples=5)
    script = tmp_path / "driver.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {SDK!r})
        from cko_driver import Workload, run_driver
        w = Workload.from_functions(prepare=lambda subject, request: sum(range(100)),
                                    run=lambda state: sum(range(1000)),
                                    check=lambda state: {{"max_rel_err": 0.0}})
        raise SystemExit(run_driver(w))
    """))
    proc = subprocess.run([sys.executable, str(script), "--request", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    result = load_result(req)
    assert [len(s["measurements"]["primary"]["samples"]) for s in result["subjects"]] == [5, 5]
    assert all(x > 0 for s in result["subjects"] for x in s["measurements"]["primary"]["samples"])
    assert result["environment"]["software"]["python"] == sys.version.split()[0]
    assert os.listdir(req["output_dir"]) == ["result.json"]


@pytest.mark.parametrize("order", [None, [], ["reference"]])
def test_single_subject_accepts_absent_empty_or_own_order(tmp_path, order):
    path, req = make_request(tmp_path, mode="single", samples=2)
    if order is not None:
        req["order"] = order
        path.write_text(json.dumps(req))
    assert run(path, Recording()) == 0


def test_cuda_event_timer_with_real_torch(tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    path, req = make_request(tmp_path, mode="paired", samples=3, unit="us")
    w = Workload.from_functions(prepare=lambda s, r: torch.randn(2048, 2048, device="cuda"),
                                run=lambda a: a @ a, check=lambda a: {"max_rel_err": 0.0})
    assert run(path, w, timer="cuda", flush_l2=True, warmup_s=0.05) == 0
    result = load_result(req)
    for s in result["subjects"]:
        assert all(1.0 < x < 1e5 for x in s["measurements"]["primary"]["samples"])
    env = result["environment"]
    assert env["timer"] == "cuda_event" and env["gpu_uuids"][0].startswith("GPU-")
    assert env["software"]["torch"] == torch.__version__


def test_a_v1_driver_serves_a_session_unchanged(tmp_path):
    """`--session`: the same run_driver() entry point answers every request over the FIFOs, in one
    process, one notice per request (a failing request is answered `failed` and the loop goes on)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, req1 = make_request(tmp_path / "a", mode="paired", samples=4)
    second, req2 = make_request(tmp_path / "b", mode="paired", samples=2)
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    script = tmp_path / "driver.py"
    script.write_text(textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {SDK!r})
        from cko_driver import Workload, run_driver
        w = Workload.from_functions(prepare=lambda subject, request: os.getpid(),
                                    run=lambda state: sum(range(1000)),
                                    check=lambda state: {{"max_rel_err": 0.0}})
        raise SystemExit(run_driver(w))
    """))
    requests, notices = tmp_path / "requests", tmp_path / "notices"
    os.mkfifo(requests)
    os.mkfifo(notices)
    # Both ends held read-write, as cko holds them: opening never blocks.
    rq = os.open(requests, os.O_RDWR)
    nt = os.open(notices, os.O_RDWR)
    env = dict(os.environ, CKO_SESSION_REQUESTS=str(requests), CKO_SESSION_NOTICES=str(notices))
    log = open(tmp_path / "stderr.txt", "w")
    proc = subprocess.Popen([sys.executable, str(script), "--session"], env=env, stderr=log)
    answers = os.fdopen(nt, "r")
    for n, path in ((1, first), (2, bad), (3, second)):
        os.write(rq, (json.dumps({"call": n, "request": str(path)}) + "\n").encode())
    assert json.loads(answers.readline()) == {"ready": True}  # first, before any request is read
    got = [json.loads(answers.readline()) for _ in range(3)]
    os.write(rq, b'{"exit": true}\n')
    assert proc.wait(timeout=30) == 0
    assert [(g["call"], g["status"], g["exit_code"]) for g in got] == [(1, "done", 0), (2, "failed", 2), (3, "done", 0)]
    assert [len(s["measurements"]["primary"]["samples"]) for s in load_result(req1)["subjects"]] == [4, 4]
    assert [len(s["measurements"]["primary"]["samples"]) for s in load_result(req2)["subjects"]] == [2, 2]
    log.close()
    assert "invalid request" in (tmp_path / "stderr.txt").read_text()
    os.close(rq)


def _serve_in_process(tmp_path, workload, request_paths):
    """Runs serve() here over plain files (a FIFO is not needed to read lines); returns the notices."""
    requests, notices = tmp_path / "requests.jsonl", tmp_path / "notices.jsonl"
    requests.write_text("".join(json.dumps({"call": n, "request": str(p)}) + "\n"
                                for n, p in enumerate(request_paths, 1)) + '{"exit": true}\n')
    assert cko_driver.serve(workload, timer="cpu", warmup_s=0.0, requests_path=str(requests),
                            notices_path=str(notices)) == 0
    lines = [json.loads(line) for line in notices.read_text().splitlines()]
    assert lines[0] == {"ready": True}, lines
    return lines[1:]


def _counting_workload(keep, fail_setup_on=()):
    calls = []

    class Counting(Workload):
        keep_setup_per_case = keep

        def setup(self, request):
            calls.append(request.case.path)
            if len(calls) in fail_setup_on:
                raise RuntimeError("setup broke")
            self.input = json.loads(open(request.case.path).read())
            self.case_path = request.case.path

        def prepare(self, subject, request):
            # True when the inputs the workload holds are this request's case's.
            return self.case_path == request.case.path and self.input == {"n": 4}

        def run(self, state):
            sum(range(100))

        def check(self, state):
            return {"max_rel_err": 0.0 if state else 1.0}

    return Counting(), calls


def test_a_session_keeps_setup_per_case_only_when_the_workload_says_so(tmp_path):
    for d in ("a", "b", "c"):
        (tmp_path / d).mkdir()
    same1, req_same = make_request(tmp_path / "a", mode="paired", samples=2)
    same2, _ = make_request(tmp_path / "a", mode="paired", samples=2)  # same case file as same1
    other, req_other = make_request(tmp_path / "b", mode="paired", samples=2)
    kept, calls = _counting_workload(keep=True)
    got = _serve_in_process(tmp_path / "c", kept, [same1, same2, same1, other, same1])
    assert [g["status"] for g in got] == ["done"] * 5
    # Setup once for case a and once for b; a coming back after b gets a's kept inputs.
    assert calls == [str(tmp_path / "a" / "case.json"), str(tmp_path / "b" / "case.json")]
    # The last request (case a, after b) ran on a's inputs, not b's.
    assert all(s["correctness"]["metrics"]["max_rel_err"] == 0.0 for s in load_result(req_same)["subjects"])
    every, calls = _counting_workload(keep=False)
    _serve_in_process(tmp_path / "c", every, [same1, same2, same1])
    assert len(calls) == 3


def test_a_failed_setup_is_never_kept(tmp_path):
    for d in ("a", "c"):
        (tmp_path / d).mkdir()
    path, _ = make_request(tmp_path / "a", mode="paired", samples=2)
    w, calls = _counting_workload(keep=True, fail_setup_on=(2,))
    # Case a, then case b whose setup() raises, then a again: the inputs may be half-rebuilt by b,
    # so a sets up again (3 setups, not 2).
    other = tmp_path / "a" / "other.json"
    other.write_text(path.read_text().replace("case.json", "case2.json"))
    (tmp_path / "a" / "case2.json").write_text(json.dumps({"n": 4}))
    got = _serve_in_process(tmp_path / "c", w, [path, other, path])
    assert [g["status"] for g in got] == ["done", "failed", "done"]
    assert len(calls) == 3


def test_serve_without_the_session_variables_is_a_usage_error(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CKO_SESSION_REQUESTS", raising=False)
    monkeypatch.delenv("CKO_SESSION_NOTICES", raising=False)
    w = Workload.from_functions(prepare=lambda s, r: None, run=lambda s: None, check=lambda s: {})
    assert run_driver(w, argv=["--session"]) == cko_driver.EXIT_BAD_REQUEST
    assert "CKO_SESSION_REQUESTS" in capsys.readouterr().err


def fake_profiler_torch(kineto=True, export=b'{"schemaVersion": 1, "traceEvents": []}'):
    """A torch whose profiler records what the SDK asks of it (no real torch needed)."""
    events = []

    class Profile:
        def __init__(self, activities):
            events.append(("profile", tuple(activities)))

        def start(self):
            events.append("start")

        def stop(self):
            events.append("stop")

        def export_chrome_trace(self, path):
            events.append(("export", path))
            with open(path, "wb") as f:
                f.write(export)

    class RecordFunction:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            events.append(("enter", self.name))

        def __exit__(self, *exc):
            events.append(("exit", self.name))

    profiler = types.ModuleType("torch.profiler")
    profiler.ProfilerActivity = types.SimpleNamespace(CPU="CPU", CUDA="CUDA")
    profiler.profile = Profile
    profiler.record_function = RecordFunction
    torch = types.ModuleType("torch")
    torch.__version__ = "9.9.9"
    torch.profiler = profiler
    torch.autograd = types.SimpleNamespace(kineto_available=lambda: kineto)
    torch.cuda = types.SimpleNamespace(is_available=lambda: False)
    return torch, profiler, events


class Counting(Recording):
    def run(self, state):
        super().run(state)
        events = getattr(self, "events", None)
        if events is not None:
            events.append(("run", state["role"]))


def profile_request(tmp_path, **overrides):
    out = tmp_path / "out"
    return make_request(tmp_path, mode="single", samples=3,
                        profile={"kind": "torch", "trace_path": str(out / "torch-trace.json")}, **overrides)


def test_a_profile_request_takes_a_torch_trace_of_the_samples_only(tmp_path, monkeypatch):
    torch, profiler, events = fake_profiler_torch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "torch.profiler", profiler)
    path, req = profile_request(tmp_path)
    work = Counting()
    work.events = events
    assert run(path, work, min_warmup_calls=2) == 0
    result = load_result(req)
    assert result["artifacts"] == ["torch-trace.json"]
    assert os.path.exists(req["profile"]["trace_path"])
    # The two warm-up calls come before the profiler starts; each sample is one cko:reference range.
    assert events[:2] == [("run", "reference"), ("run", "reference")]
    assert events[2] == ("profile", ("CPU",)) and events[3] == "start"
    assert events[4:-2] == [("enter", "cko:reference"), ("run", "reference"), ("exit", "cko:reference")] * 3
    assert events[-2:] == ["stop", ("export", req["profile"]["trace_path"])]
    assert cko_driver.load_request(str(path)).profile == cko_driver.Profile("torch", req["profile"]["trace_path"])


def test_a_call_without_a_profile_request_never_imports_torch(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` would raise
    path, req = make_request(tmp_path, mode="single", samples=2)
    assert run(path, Recording()) == 0
    assert load_result(req)["artifacts"] == []


@pytest.mark.parametrize("profile, message", [
    ({"kind": "nsys", "trace_path": "OUT/t.json"}, "request.profile.kind is 'nsys'"),
    ({"kind": "torch", "trace_path": "/elsewhere/t.json"}, "request.profile.trace_path must be a file"),
    ({"kind": "torch", "trace_path": "OUT/result.json"}, "request.profile.trace_path must be a file"),
    ({"kind": "torch"}, "request.profile.trace_path is missing"),
    ("torch", "request.profile has the wrong type"),
])
def test_a_bad_profile_request_exits_2_naming_the_field(tmp_path, capsys, profile, message):
    if isinstance(profile, dict) and "trace_path" in profile:
        profile = dict(profile, trace_path=profile["trace_path"].replace("OUT", str(tmp_path / "out")))
    path, req = make_request(tmp_path, mode="single", samples=2, profile=profile)
    assert run(path, Recording()) == 2
    assert message in capsys.readouterr().err
    assert not os.path.exists(req["output_dir"])


@pytest.mark.parametrize("kineto, export, message", [
    (False, b"{}", "was built without Kineto"),
    (True, b'[{"name": "aten::mm", "ph": "X"}]', "is not a Kineto Chrome trace"),
])
def test_a_torch_that_cannot_give_the_trace_fails_the_driver_clearly(tmp_path, capsys, monkeypatch, kineto, export,
                                                                     message):
    torch, profiler, _ = fake_profiler_torch(kineto=kineto, export=export)
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "torch.profiler", profiler)
    path, req = profile_request(tmp_path)
    assert run(path, Recording()) == 3
    assert message in capsys.readouterr().err
    assert not os.path.exists(req["result_path"])


def test_a_profile_request_with_this_hosts_torch(tmp_path, capsys):
    """The real torch.profiler when torch is installed: a Kineto trace, or (a torch built without Kineto,
    Debian's 1.13) the clear refusal; without torch, the refusal that names the import."""
    path, req = profile_request(tmp_path)
    code = run(path, Recording())
    err = capsys.readouterr().err
    try:
        import torch
    except Exception:
        assert code == 3 and "torch cannot be imported" in err, err
        return
    if not torch.autograd.kineto_available():
        assert code == 3 and "was built without Kineto" in err, err
        return
    assert code == 0, err
    with open(req["profile"]["trace_path"]) as f:
        trace = json.load(f)
    assert trace["schemaVersion"] == 1
    assert any(e.get("name") == "cko:reference" for e in trace["traceEvents"])
    assert load_result(req)["artifacts"] == ["torch-trace.json"]
