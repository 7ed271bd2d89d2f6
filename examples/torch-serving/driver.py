#!/usr/bin/env python3
"""torch-serving driver (Python SDK): a small GPT-2 from transformers with random weights (built from the
case's config and seed; nothing is downloaded) behind each subject's server, the case's fixed request mix
replayed as one timed call. Primary: requests/s (higher is better); constraint: p99 latency in ms;
correctness: max_abs_err of every request's last-token logits against a float64 eager run on the host.

Without transformers the driver measures nothing and says so (exit 3): it never substitutes another model.
Usage (by cko): python3 driver.py --request <request.json>
"""
import copy
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "sdk", "python"))
sys.path.insert(0, HERE)
from cko_driver import Workload, run_driver  # noqa: E402

try:
    import torch
except ImportError:
    sys.stderr.write("torch-serving: this driver needs PyTorch (Debian: apt-get install python3-torch)\n")
    raise SystemExit(3)

import serving_loop  # noqa: E402

NEEDS_TRANSFORMERS = ("torch-serving needs the transformers package for its model (GPT2LMHeadModel with "
                      "random weights); it is not installed here (Debian has no package: use a machine with "
                      "transformers, e.g. the GPU host). Nothing was measured; no other model is used instead")


def build_model(case: dict):
    try:
        import transformers
    except ImportError as e:
        raise RuntimeError(f"{NEEDS_TRANSFORMERS} ({e})") from None
    config = transformers.GPT2Config(vocab_size=int(case["vocab_size"]), n_positions=int(case["n_positions"]),
                                     n_embd=int(case["n_embd"]), n_layer=int(case["n_layer"]),
                                     n_head=int(case["n_head"]))
    torch.manual_seed(int(case["seed"]))
    return transformers.GPT2LMHeadModel(config).eval()


def load_server_class(path: str):
    source = os.path.join(path, "serve.py") if os.path.isdir(path) else path
    spec = importlib.util.spec_from_file_location(f"cko_serving_subject_{abs(hash(source))}", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Server


class Serving(Workload):
    # In a session the case's model, request mix and float64 reference are built once, and each
    # subject's server once (a warm server, as a serving process keeps it: torch.compile compiles on
    # its first untimed warm-up call, not on every request). setup() reads only the case.
    keep_setup_per_case = True

    def __init__(self, device: str):
        self.device = device
        self.sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def setup(self, request):
        case = request.case.load_json()
        self.requests = serving_loop.request_mix(case)
        self.model = build_model(case)
        reference = copy.deepcopy(self.model).to(torch.float64)
        with torch.no_grad():
            self.expected = [reference(ids.unsqueeze(0)).logits[0, -1].reshape(-1) for ids in self.requests]
        self.model.to(self.device)
        self.servers = {}  # subject path -> its server, for this case

    def prepare(self, subject, request):
        # Each subject serves its own copy of the same weights: one cannot change the other's model.
        server = self.servers.get(subject.path)
        if server is None:
            server = load_server_class(subject.path)(copy.deepcopy(self.model), self.device)
            self.servers[subject.path] = server
        return {"server": server, "last": None}

    def run(self, state):
        state["last"] = serving_loop.replay(state["server"], self.requests, sync=self.sync)

    def primary_value(self, state, elapsed_ns):
        return state["last"].requests_per_s

    def constraints(self, state):
        return {"p99_latency_ms": state["last"].p99_latency_ms}

    def check(self, state):
        return {"max_abs_err": serving_loop.max_abs_err(state["last"].outputs, self.expected)}


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda":  # full float32 matmuls: the tolerance below assumes them
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    raise SystemExit(run_driver(Serving(device), timer="cpu", warmup_s=0.5))
