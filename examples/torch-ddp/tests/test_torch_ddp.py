"""CPU test of the torch-ddp driver: torchrun starts 2 gloo ranks, both subjects are timed in pairs and
their loss after the check steps matches the float64 single-process reference."""
import json
import os
import socket
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="needs PyTorch (Debian: apt-get install python3-torch)")

EXAMPLE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
THRESHOLD = 1e-4  # cko.toml [correctness]


def request(tmp_path, candidate_path, samples=3, timeout=300):
    out = tmp_path / "out"
    req = {
        "format_version": "cko/driver-request-v1", "mode": "paired",
        "case": {"id": "small", "path": os.path.join(EXAMPLE, "cases", "small.json")},
        "subjects": [{"role": "reference", "label": "original", "path": os.path.join(EXAMPLE, "original")},
                     {"role": "candidate", "label": "cand", "path": candidate_path}],
        "order": ["candidate", "reference"], "samples": samples, "seed": 3,
        "objective": {"primary": {"name": "step_time_ms", "unit": "ms"}, "constraints": []},
        "correctness": {"metrics": ["loss_rel_err"]},
        "output_dir": str(out), "result_path": str(out / "result.json"), "deadline_unix_s": 4102444800.0,
    }
    path = tmp_path / "request.json"
    path.write_text(json.dumps(req))
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")  # gloo on the CPU even on a GPU host
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLE, "driver.py"), "--request", str(path)],
                          capture_output=True, text=True, timeout=timeout, cwd=EXAMPLE, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "2 ranks, backend gloo" in proc.stderr
    result = json.loads((out / "result.json").read_text())
    assert result["artifacts"] == [] and os.listdir(out) == ["result.json"]
    return {s["role"]: s for s in result["subjects"]}, result["environment"]


def test_two_gloo_ranks_time_both_subjects_and_match_the_reference_loss(tmp_path):
    subjects, _ = request(tmp_path, os.path.join(EXAMPLE, "candidates", "big_buckets"))
    for s in subjects.values():
        assert s["correctness"]["status"] == "passed", s
        assert s["correctness"]["metrics"]["loss_rel_err"] <= THRESHOLD, s
        samples = s["measurements"]["primary"]["samples"]
        assert len(samples) == 3 and all(x > 0 for x in samples), samples
    # Bucket size changes when gradients are reduced, not what they are: the same loss to the bit on gloo.
    assert subjects["candidate"]["correctness"]["metrics"]["final_loss"] == \
        subjects["reference"]["correctness"]["metrics"]["final_loss"]


def test_a_candidate_that_breaks_the_training_is_wrong_and_one_that_raises_is_an_error(tmp_path):
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    # Every gradient scaled by 2 on the way through the all-reduce hook: the loss drifts off the reference.
    (wrong / "ddp_config.py").write_text(
        "from torch.nn.parallel import DistributedDataParallel\n"
        "import torch.distributed as dist\n"
        "def _double(state, bucket):\n"
        "    t = bucket.buffer().mul_(2.0 / dist.get_world_size())\n"
        "    return dist.all_reduce(t, async_op=True).get_future().then(lambda f: f.value()[0])\n"
        "def wrap(model, device_ids):\n"
        "    ddp = DistributedDataParallel(model, device_ids=device_ids)\n"
        "    ddp.register_comm_hook(None, _double)\n"
        "    return ddp\n")
    subjects, _ = request(tmp_path, str(wrong), samples=2)
    assert subjects["candidate"]["correctness"]["metrics"]["loss_rel_err"] > THRESHOLD
    assert subjects["reference"]["correctness"]["metrics"]["loss_rel_err"] <= THRESHOLD

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "ddp_config.py").write_text("def wrap(model, device_ids):\n    raise ValueError('no wrap today')\n")
    (tmp_path / "b").mkdir()
    subjects, env = request(tmp_path / "b", str(broken), samples=2)
    assert subjects["candidate"]["correctness"]["status"] == "error"
    assert subjects["candidate"]["measurements"]["primary"]["samples"] == []
    assert any("no wrap today" in n for n in env["notes"]), env["notes"]
    assert subjects["reference"]["correctness"]["status"] == "passed"


def test_another_job_on_torchruns_standalone_port_does_not_hang_the_ranks(tmp_path):
    # torch 1.13's --standalone is the fixed localhost:29400: with another job listening there (in CI, the
    # other torch-ddp test running at the same time) the ranks joined its rendezvous and waited for ever.
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        holder.bind(("127.0.0.1", 29400))
        holder.listen(8)
    except OSError:
        pass  # somebody else holds it already: the same condition
    try:
        subjects, _ = request(tmp_path, os.path.join(EXAMPLE, "candidates", "big_buckets"), samples=2, timeout=120)
    finally:
        holder.close()
    assert all(s["correctness"]["status"] == "passed" for s in subjects.values()), subjects


def test_a_subject_that_keeps_its_rank_alive_or_leaves_a_child_does_not_hold_the_job(tmp_path):
    # A non-daemon thread keeps a rank's interpreter from exiting (as torch 1.13's gloo destructor deadlock
    # did in CI), and a child holding the ranks' output kept the driver's pipe open: both held the driver
    # until its caller's timeout. Now the ranks leave at once after the result and everything below the
    # driver is ended.
    marker = f"cko-ddp-straggler-{os.getpid()}"
    lingering = tmp_path / "lingering"
    lingering.mkdir()
    (lingering / "ddp_config.py").write_text(
        "import subprocess, threading, time\n"
        "from torch.nn.parallel import DistributedDataParallel\n"
        "def wrap(model, device_ids):\n"
        "    threading.Thread(target=time.sleep, args=(3600,)).start()\n"
        # In a session of its own, as torch 2.x starts every rank: killing torchrun's group misses it.
        f"    subprocess.Popen(['/bin/sh', '-c', 'sleep 3600; : {marker}'], start_new_session=True)\n"
        "    return DistributedDataParallel(model, device_ids=device_ids)\n")
    try:
        subjects, _ = request(tmp_path, str(lingering), samples=2, timeout=120)
        assert all(s["correctness"]["status"] == "passed" for s in subjects.values()), subjects
        left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
        assert left == [], f"the subject's children outlived the job: {left}"
    finally:
        subprocess.run(["pkill", "-9", "-f", marker])


def test_a_port_taken_between_choosing_and_binding_it_is_retried_with_another(tmp_path, monkeypatch):
    import importlib.util
    spec = importlib.util.spec_from_file_location("cko_torch_ddp_driver", os.path.join(EXAMPLE, "driver.py"))
    driver = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(driver)
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(8)
    ports = [holder.getsockname()[1]]
    chosen = []

    def first_the_taken_one():
        chosen.append(ports.pop() if ports else real())
        return chosen[-1]
    real = driver.free_port
    monkeypatch.setattr(driver, "free_port", first_the_taken_one)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    case = json.load(open(os.path.join(EXAMPLE, "cases", "small.json")))
    job = {"case": case, "order": ["candidate", "reference"], "samples": 1,
           "paths": {"reference": os.path.join(EXAMPLE, "original"),
                     "candidate": os.path.join(EXAMPLE, "candidates", "big_buckets")},
           "result": str(tmp_path / "result.json")}
    try:
        measured = driver.launch(job, str(tmp_path), 2, 120)
    finally:
        holder.close()
    assert len(chosen) == 2 and chosen[0] != chosen[1], chosen
    assert measured["_world"] == 2 and len(measured["reference"]["samples"]) == 1, measured


def test_ranks_past_the_deadline_are_ended_with_everything_they_started(tmp_path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("cko_torch_ddp_driver", os.path.join(EXAMPLE, "driver.py"))
    driver = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(driver)
    marker = f"cko-ddp-late-{os.getpid()}"
    argv = ["/bin/sh", "-c", f"echo started; setsid sh -c 'sleep 300; : {marker}' & sleep 300"]
    try:
        with pytest.raises(RuntimeError, match="did not finish within 1 s: started"):
            driver.run_ranks(argv, str(tmp_path), dict(os.environ), str(tmp_path / "result.json"), 1.0)
        left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
        assert left == [], f"outlived the deadline: {left}"
    finally:
        subprocess.run(["pkill", "-9", "-f", marker])
