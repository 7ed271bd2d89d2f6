#!/usr/bin/env python3
"""torch-ddp driver (Python SDK): one DistributedDataParallel training job per request, launched with
`python3 -m torch.distributed.run --nproc_per_node N` (the spelling torch 1.13 and 2.x both accept) (N from the case; NCCL on GPUs, gloo on the CPU).

The ranks (ddp_worker.py) time every subject's training steps, paired in the request's order, and train
each subject check_steps steps from the same initial weights on fixed batches; the driver compares that
loss with a float64 single-process reference (same weights, the whole global batch: what DDP's gradient
averaging computes) as loss_rel_err. The SDK records the ranks' step times through primary_value.

Usage (by cko): python3 driver.py --request <request.json>
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "sdk", "python"))
from cko_driver import Workload, run_driver  # noqa: E402

try:
    import torch
except ImportError:
    sys.stderr.write("torch-ddp: this driver needs PyTorch (Debian: apt-get install python3-torch)\n")
    raise SystemExit(3)

sys.path.insert(0, HERE)
import ddp_worker  # noqa: E402  (the model and batches, shared with the reference)

# NVLink SHARP multicast stays off on the lent machines (KINDS.md); the rest of NCCL's defaults are kept.
CHILD_ENV = {"NCCL_NVLS_ENABLE": "0", "OMP_NUM_THREADS": "1"}


def reference_loss(case, world):
    """The loss after check_steps steps of plain (non-distributed) SGD in float64 on the global batches."""
    model = ddp_worker.build_model(case, torch.float64, "cpu")
    opt = torch.optim.SGD(model.parameters(), lr=float(case["lr"]))
    loss = None
    for x, y in ddp_worker.batches(case, world, torch.float64, "cpu", int(case["check_steps"])):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    return loss.item()


def launch(job, scratch, nproc, timeout_s):
    """Runs the ranks; returns rank 0's result. Raises with the launcher's output when it fails."""
    job_path = os.path.join(scratch, "job.json")
    with open(job_path, "w") as f:
        json.dump(job, f)
    # --redirects/--tee 2 (stderr to a log and the console, stdout untouched): torch 1.13 under Python 3.11
    # (Debian's python3-torch) cannot parse its own default "0" (Std.from_str gives None for a zero flag).
    argv = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(nproc),
            "--redirects", "2", "--tee", "2", "--log_dir", os.path.join(scratch, "logs"),
            os.path.join(HERE, "ddp_worker.py"), job_path]
    env = dict(os.environ, **CHILD_ENV)
    proc = subprocess.run(argv, cwd=scratch, env=env, capture_output=True, text=True, timeout=timeout_s)
    if proc.returncode != 0 or not os.path.exists(job["result"]):
        raise RuntimeError(f"torchrun exited {proc.returncode}: {(proc.stdout + proc.stderr)[-3000:]}")
    with open(job["result"]) as f:
        return json.load(f)


class DdpStep(Workload):
    """Each timed call hands the SDK the next step time the ranks measured (primary_value)."""

    def setup(self, request):
        import time
        case = request.case.load_json()
        nproc = int(case["nproc"])
        if torch.cuda.is_available() and torch.cuda.device_count() < nproc:
            raise RuntimeError(f"the case needs {nproc} GPUs, this host shows {torch.cuda.device_count()}")
        scratch = tempfile.mkdtemp(prefix="cko-torch-ddp-")  # outside output_dir: nothing left there
        try:
            job = {"case": case, "order": request.order, "samples": request.samples,
                   "paths": {s.role: s.path for s in request.subjects},
                   "result": os.path.join(scratch, "result.json")}
            left = (request.deadline_unix_s - time.time()) if request.deadline_unix_s else 3600
            self.measured = launch(job, scratch, nproc, min(max(10.0, left - 5), 24 * 3600.0))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        self.reference = reference_loss(case, int(self.measured["_world"]))
        sys.stderr.write(f"torch-ddp: {self.measured['_world']} ranks, backend {self.measured['_backend']}\n")

    def prepare(self, subject, request):
        got = self.measured[subject.role]
        if "error" in got:
            raise RuntimeError(got["error"])
        return {"samples": list(got["samples"]), "loss": got["loss"], "next": 0}

    def run(self, state):
        state["next"] += 1

    def primary_value(self, state, elapsed_ns):
        return state["samples"][state["next"] - 1]

    def check(self, state):
        return {"loss_rel_err": abs(state["loss"] - self.reference) / abs(self.reference),
                "final_loss": state["loss"]}


if __name__ == "__main__":
    # No warm-up calls: warming up happens in the ranks; every value they measured is one sample.
    raise SystemExit(run_driver(DdpStep(), warmup_s=0.0, min_warmup_calls=0))
