"""CPU test of the torch-ddp driver: torchrun starts 2 gloo ranks, both subjects are timed in pairs and
their loss after the check steps matches the float64 single-process reference."""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="needs PyTorch (Debian: apt-get install python3-torch)")

EXAMPLE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
THRESHOLD = 1e-4  # cko.toml [correctness]


def request(tmp_path, candidate_path, samples=3):
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
                          capture_output=True, text=True, timeout=300, cwd=EXAMPLE, env=env)
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
