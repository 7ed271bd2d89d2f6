#!/usr/bin/env python3
"""torch-layernorm driver (Python SDK): imports each subject's layernorm.py, times layernorm(x, w, b, eps)
on the case's tensors (CUDA events on a GPU, the CPU clock otherwise) and reports max_abs_err against a
float64 reference.

Usage (by cko): python3 driver.py --request <request.json>
"""
import importlib.util
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sdk", "python"))
from cko_driver import Workload, run_driver  # noqa: E402

try:
    import torch
except ImportError:
    sys.stderr.write("torch-layernorm: this driver needs PyTorch (Debian: apt-get install python3-torch)\n")
    raise SystemExit(3)


def load_subject(path: str):
    """The subject's layernorm module: its snapshot directory holding layernorm.py, or the file itself."""
    source = os.path.join(path, "layernorm.py") if os.path.isdir(path) else path
    name = f"cko_subject_{abs(hash(os.path.abspath(source)))}"
    spec = importlib.util.spec_from_file_location(name, source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class LayerNorm(Workload):
    keep_setup_per_case = True  # setup() reads only the case; no subject writes into x, w or b

    def __init__(self, device: str):
        self.device = device

    def setup(self, request):
        case = request.case.load_json()
        rows, cols, self.eps = int(case["rows"]), int(case["cols"]), float(case["eps"])
        gen = torch.Generator().manual_seed(int(case["seed"]))
        x = torch.randn(rows, cols, generator=gen, dtype=torch.float64) * 2.0 + 0.5
        w = 1.0 + 0.1 * torch.randn(cols, generator=gen, dtype=torch.float64)
        b = 0.1 * torch.randn(cols, generator=gen, dtype=torch.float64)
        # The reference in float64 on the host: what every subject's float32 output is compared with.
        self.expected = torch.nn.functional.layer_norm(x, (cols,), w, b, self.eps)
        self.x, self.w, self.b = (t.to(self.device, torch.float32) for t in (x, w, b))

    def prepare(self, subject, request):
        return {"fn": load_subject(subject.path).layernorm, "out": None}

    def run(self, state):
        state["out"] = state["fn"](self.x, self.w, self.b, self.eps)

    def check(self, state):
        out = state["out"]
        if out is None or tuple(out.shape) != tuple(self.expected.shape):
            return "failed", {"max_abs_err": float("inf")}
        err = (out.detach().to("cpu", torch.float64) - self.expected).abs().max().item()
        return {"max_abs_err": err}


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    raise SystemExit(run_driver(LayerNorm(device), timer="cuda" if device == "cuda" else "cpu", warmup_s=0.2))
