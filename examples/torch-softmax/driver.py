#!/usr/bin/env python3
"""torch-softmax driver (Python SDK): loads each subject's softmax.py from its snapshot, times
softmax(x) on an 8192x8192 fp32 CUDA tensor with CUDA events, and checks it against float64 torch.

Its cost is mostly `import torch` and the CUDA context (seconds) against milliseconds of measuring:
the example for persistent driver sessions (capability `session` in cko.toml; PROTOCOL.md).
Usage (by cko): python3 driver.py --request <request.json>   or   python3 driver.py --session
"""
import importlib.util
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sdk", "python"))
from cko_driver import Workload, run_driver  # noqa: E402

import torch  # noqa: E402  (after the SDK path; a driver without torch cannot run at all)


def load_subject(path: str):
    source = os.path.join(path, "softmax.py") if os.path.isdir(path) else path
    spec = importlib.util.spec_from_file_location(f"subject_{abs(hash(source))}", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.softmax


class TorchSoftmax(Workload):
    # setup() reads only the case and softmax does not write into x: a session builds it once.
    keep_setup_per_case = True

    def setup(self, request):
        case = request.case.load_json()
        g = torch.Generator(device="cpu").manual_seed(int(case.get("seed", 0)))
        # "device" (default cuda) lets the tests run the same driver on a CPU-only host.
        self.x = torch.randn(int(case["rows"]), int(case["cols"]), generator=g).to(case.get("device", "cuda"))
        self.expected = torch.softmax(self.x.double(), dim=-1)

    def prepare(self, subject, request):
        return {"fn": load_subject(subject.path), "out": None}

    def run(self, state):
        state["out"] = state["fn"](self.x)

    def check(self, state):
        err = ((state["out"].double() - self.expected).abs() / self.expected.abs().clamp_min(1e-30)).max().item()
        return {"max_rel_err": err}


if __name__ == "__main__":
    cuda = torch.cuda.is_available()
    raise SystemExit(run_driver(TorchSoftmax(), timer="cuda" if cuda else "cpu", flush_l2=cuda))
