#!/usr/bin/env python3
"""torch-ddp driver (Python SDK): one DistributedDataParallel training job per request, launched with
`python3 -m torch.distributed.run --nproc_per_node N` on a free local port (spellings torch 1.13 and 2.x
both accept; N from the case; NCCL on GPUs, gloo on the CPU).

The ranks (ddp_worker.py) time every subject's training steps, paired in the request's order, and train
each subject check_steps steps from the same initial weights on fixed batches; the driver compares that
loss with a float64 single-process reference (same weights, the whole global batch: what DDP's gradient
averaging computes) as loss_rel_err. The SDK records the ranks' step times through primary_value.

Usage (by cko): python3 driver.py --request <request.json>
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

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


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Once rank 0 has written the result, the ranks get this long to leave before they are killed.
EXIT_GRACE_S = 30.0


def adopt_orphans():
    """Makes this process the Linux child subreaper: a rank's child left behind when its rank exits comes
    back to the driver, not to init, so end_ranks() can still find it (Linux only; False elsewhere)."""
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def descendants(root):
    """The pids below `root` now, read from /proc (empty where /proc cannot be read)."""
    children = {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            found.append(pid)
            todo.append(pid)
    return found


def end_ranks(proc):
    """Ends torchrun, its ranks and whatever they started. torch 2.x starts every rank in a session of
    its own, so torchrun's process group is not enough: every process below the driver goes (after the
    torchrun call only leftovers are there; adopt_orphans() brings back those whose parent has exited)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()
    for _ in range(10):  # a process may fork while it is being killed: sweep until nothing is left
        left = descendants(os.getpid())
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for pid in left:
            try:
                os.waitpid(pid, 0)  # our own children (adopted ones included); others are not ours to reap
            except ChildProcessError:
                pass
        time.sleep(0.05)


def run_ranks(argv, scratch, env, result_path, timeout_s):
    """One torchrun: returns (exit code or None when killed after the result, its output).

    torchrun runs in a process group of its own with its output in a file, not a pipe: a rank that never
    exits (torch 1.13's gloo ProcessGroup deadlocks in its destructor when a Python comm hook left tensors
    for its thread to free) or a subject's leftover child holding the pipe would otherwise hold the driver
    past the result. They are ended on the deadline, EXIT_GRACE_S after the result, and at the end."""
    adopt_orphans()
    log_path = os.path.join(scratch, "torchrun.log")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(argv, cwd=scratch, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    deadline, result_seen, code, late = time.monotonic() + timeout_s, None, None, False
    try:
        while True:
            try:
                code = proc.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            if result_seen is None and os.path.exists(result_path):
                result_seen = now
            if result_seen is not None and now - result_seen > EXIT_GRACE_S:
                sys.stderr.write(f"torch-ddp: the ranks had not exited {EXIT_GRACE_S:.0f} s after rank 0 "
                                 "wrote the result; killed them and kept the result\n")
                break
            if now > deadline:
                late = True
                break
    finally:
        end_ranks(proc)  # ranks or their children left behind go as well
    with open(log_path, errors="replace") as f:
        output = f.read()
    if late:
        raise RuntimeError(f"torchrun did not finish within {timeout_s:.0f} s: {output[-3000:]}")
    sys.stderr.write(output[-20000:])
    return code, output


def launch(job, scratch, nproc, timeout_s, attempts=3):
    """Runs the ranks; returns rank 0's result. Raises with the launcher's output when it fails.

    The ranks meet at a port chosen here, not torchrun's --standalone: torch 1.13 spells that as the fixed
    localhost:29400, so a second job on the host (two drivers at once, another user's torchrun) joined the
    first one's rendezvous and waited for ever. A static rendezvous on a free port fails fast instead when
    the port is taken between choosing and binding it; that is retried with another port."""
    job_path = os.path.join(scratch, "job.json")
    with open(job_path, "w") as f:
        json.dump(job, f)
    env = dict(os.environ, **CHILD_ENV)
    for attempt in range(attempts):
        # --redirects/--tee 2 (stderr to a log and the console, stdout untouched): torch 1.13 under Python
        # 3.11 (Debian's python3-torch) cannot parse its own default "0" (Std.from_str gives None for 0).
        argv = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--node_rank", "0",
                "--master_addr", "127.0.0.1", "--master_port", str(free_port()),
                "--nproc_per_node", str(nproc), "--redirects", "2", "--tee", "2",
                "--log_dir", os.path.join(scratch, f"logs-{attempt}"),
                os.path.join(HERE, "ddp_worker.py"), job_path]
        code, output = run_ranks(argv, scratch, env, job["result"], timeout_s)
        if code in (0, None) and os.path.exists(job["result"]):
            with open(job["result"]) as f:
                return json.load(f)
        if "address already in use" not in output.lower() or attempt + 1 == attempts:
            raise RuntimeError(f"torchrun exited {code}: {output[-3000:]}")


class DdpStep(Workload):
    """Each timed call hands the SDK the next step time the ranks measured (primary_value)."""

    def setup(self, request):
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
