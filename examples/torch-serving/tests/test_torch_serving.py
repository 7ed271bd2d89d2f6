"""CPU tests of torch-serving: the request loop, its throughput/p99 accounting and the output comparison
with a tiny causal nn.Module (no transformers needed), both servers on it, and the driver itself (it says
clearly that it needs transformers where that is missing, and serves the small case where it is not)."""
import importlib.util
import json
import math
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch", reason="needs PyTorch (Debian: apt-get install python3-torch)")

EXAMPLE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, EXAMPLE)
import serving_loop  # noqa: E402

CASE = json.load(open(os.path.join(EXAMPLE, "cases", "small.json")))


def load(subject):
    spec = importlib.util.spec_from_file_location(f"serve_{subject.replace('/', '_')}",
                                                  os.path.join(EXAMPLE, subject, "serve.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Server


class TinyCausalLM(torch.nn.Module):
    """Embedding, a causal running mean over positions, a linear head: `model(ids, attention_mask).logits`
    like a transformers causal LM, where position t sees only tokens <= t."""

    def __init__(self, vocab=CASE["vocab_size"], width=16):
        super().__init__()
        torch.manual_seed(0)
        self.embed = torch.nn.Embedding(vocab, width)
        self.head = torch.nn.Linear(width, vocab)

    def forward(self, ids, attention_mask=None):
        h = self.embed(ids)
        counts = torch.arange(1, ids.shape[1] + 1, dtype=h.dtype).reshape(1, -1, 1)
        return SimpleNamespace(logits=self.head(torch.tanh(h.cumsum(dim=1) / counts)))


def expected_for(model, requests):
    m64 = TinyCausalLM().to(torch.float64)
    m64.load_state_dict(model.state_dict())
    with torch.no_grad():
        return [m64(r.unsqueeze(0)).logits[0, -1].to(torch.float64) for r in requests]


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class ChargingServer:
    """Answers zeros; each call advances the fake clock by `cost`."""

    def __init__(self, clock, max_batch, cost):
        self.clock, self.max_batch, self.cost, self.calls = clock, max_batch, cost, 0

    def handle(self, requests):
        self.calls += 1
        self.clock.now += self.cost
        return [torch.zeros(3) for _ in requests]


def test_request_mix_is_fixed_by_the_case():
    a, b = serving_loop.request_mix(CASE), serving_loop.request_mix(CASE)
    assert len(a) == CASE["requests"]
    assert [len(r) for r in a] == [CASE["lengths"][i % len(CASE["lengths"])] for i in range(CASE["requests"])]
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert all(int(r.max()) < CASE["vocab_size"] for r in a)


def test_percentile_is_nearest_rank():
    values = list(range(1, 101))
    assert serving_loop.percentile(values, 99) == 99
    assert serving_loop.percentile(values, 100) == 100
    assert serving_loop.percentile([5.0, 1.0], 99) == 5.0
    assert serving_loop.percentile([7.0], 50) == 7.0
    with pytest.raises(ValueError):
        serving_loop.percentile([], 99)


def test_one_at_a_time_throughput_and_p99():
    clock = FakeClock()
    server = ChargingServer(clock, max_batch=1, cost=0.5)
    r = serving_loop.replay(server, [torch.tensor([1])] * 10, clock=clock)
    assert server.calls == 10
    assert r.latencies_s == [0.5 * (i + 1) for i in range(10)]
    assert r.total_s == 5.0 and r.requests_per_s == 2.0
    assert r.p99_latency_ms == 5000.0  # the last request waited for all others


def test_batches_take_up_to_max_batch_in_arrival_order():
    clock = FakeClock()
    server = ChargingServer(clock, max_batch=4, cost=1.5)
    r = serving_loop.replay(server, [torch.tensor([1])] * 10, clock=clock)
    assert server.calls == 3  # 4 + 4 + 2
    assert r.latencies_s == [1.5] * 4 + [3.0] * 4 + [4.5] * 2
    assert math.isclose(r.requests_per_s, 10 / 4.5)
    assert r.p99_latency_ms == 4500.0


def test_a_server_that_drops_requests_or_takes_no_time_is_refused():
    clock = FakeClock()

    class Dropping(ChargingServer):
        def handle(self, requests):
            return super().handle(requests)[:-1]

    with pytest.raises(RuntimeError, match="answered 1 of 2"):
        serving_loop.replay(Dropping(clock, 2, 1.0), [torch.tensor([1])] * 2, clock=clock)
    with pytest.raises(RuntimeError, match="no measurable time"):
        serving_loop.replay(ChargingServer(clock, 2, 0.0), [torch.tensor([1])] * 2, clock=clock)
    with pytest.raises(ValueError, match="max_batch"):
        serving_loop.replay(ChargingServer(clock, 0, 1.0), [torch.tensor([1])], clock=clock)


@pytest.mark.parametrize("subject", ["original", "candidates/batched"])
def test_both_servers_answer_every_request_like_the_float64_reference(subject):
    model = TinyCausalLM().eval()
    requests = serving_loop.request_mix(CASE)
    server = load(subject)(model, "cpu")
    r = serving_loop.replay(server, requests)
    assert len(r.outputs) == len(requests)
    assert serving_loop.max_abs_err(r.outputs, expected_for(model, requests)) <= 1e-5
    assert r.requests_per_s > 0 and r.p99_latency_ms > 0


def test_the_comparison_catches_a_server_that_reads_the_padding():
    model = TinyCausalLM().eval()
    requests = serving_loop.request_mix(CASE)
    batched = load("candidates/batched")

    class ReadsPadding(batched):
        @torch.no_grad()
        def handle(self, requests):
            longest = max(len(r) for r in requests)
            ids = torch.zeros(len(requests), longest, dtype=torch.long)
            for i, r in enumerate(requests):
                ids[i, :len(r)] = r
            return list(self.model(ids).logits[:, -1])  # the last *padded* position: wrong for short ones

    r = serving_loop.replay(ReadsPadding(model, "cpu"), requests)
    assert serving_loop.max_abs_err(r.outputs, expected_for(model, requests)) > 1e-2
    assert serving_loop.max_abs_err(r.outputs[:-1], expected_for(model, requests)) == math.inf


def test_the_driver_serves_the_small_case_or_says_it_needs_transformers(tmp_path):
    out = tmp_path / "out"
    req = {
        "format_version": "cko/driver-request-v1", "mode": "paired",
        "case": {"id": "small", "path": os.path.join(EXAMPLE, "cases", "small.json")},
        "subjects": [{"role": "reference", "label": "original", "path": os.path.join(EXAMPLE, "original")},
                     {"role": "candidate", "label": "batched",
                      "path": os.path.join(EXAMPLE, "candidates", "batched")}],
        "order": ["candidate", "reference"], "samples": 3, "seed": 1,
        "objective": {"primary": {"name": "requests_per_s", "unit": "req/s"},
                      "constraints": [{"name": "p99_latency_ms", "unit": "ms"}]},
        "correctness": {"metrics": ["max_abs_err"]},
        "output_dir": str(out), "result_path": str(out / "result.json"), "deadline_unix_s": 4102444800.0,
    }
    path = tmp_path / "request.json"
    path.write_text(json.dumps(req))
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLE, "driver.py"), "--request", str(path)],
                          capture_output=True, text=True, timeout=300, cwd=EXAMPLE)
    if importlib.util.find_spec("transformers") is None:
        assert proc.returncode == 3, proc.stderr[-2000:]
        assert "torch-serving needs the transformers package" in proc.stderr
        assert "no other model is used instead" in proc.stderr
        assert not (out / "result.json").exists()
        return
    assert proc.returncode == 0, proc.stderr[-3000:]
    subjects = {s["role"]: s for s in json.loads((out / "result.json").read_text())["subjects"]}
    for s in subjects.values():
        assert s["correctness"]["status"] == "passed" and s["correctness"]["metrics"]["max_abs_err"] <= 1e-3, s
        assert len(s["measurements"]["primary"]["samples"]) == 3
        assert len(s["measurements"]["constraints"][0]["samples"]) == 3


def test_profile_trace_writes_the_servers_trace_or_needs_transformers_like_the_driver(tmp_path):
    out = tmp_path / "t.json"
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLE, "profile_trace.py"), str(out), "--case", "small",
                           "--replays", "1"], capture_output=True, text=True, timeout=300)
    if importlib.util.find_spec("transformers") is None:
        assert proc.returncode == 1
        assert "torch-serving needs the transformers package" in proc.stderr
        assert not out.exists()
        return
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    assert {"subject:original", "subject:candidates/batched"} <= {e.get("name") for e in events}
