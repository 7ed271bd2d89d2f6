#!/usr/bin/env python3
"""One rank of the torch-ddp measurement, started by torchrun (driver.py launches it).

Reads the job file (subjects in order, samples, the case), and for every subject: builds the same MLP
from the case's seed, wraps it with the subject's ddp_config.wrap(), trains check_steps steps on fixed
batches and keeps the loss (the correctness evidence), then takes `samples` timed samples, subject after
subject in the job's order (sample i of every subject back to back: pair i). A sample is the mean wall
time of steps_per_sample training steps between barriers (CUDA synchronized). Rank 0 writes the result; then every rank leaves at once (os._exit).
"""
import importlib.util
import json
import os
import sys
import time
import traceback

import torch
import torch.distributed as dist


def build_model(case, dtype, device):
    torch.manual_seed(int(case["seed"]))
    hidden, layers = int(case["hidden"]), int(case["layers"])
    mods = []
    for _ in range(layers):
        mods += [torch.nn.Linear(hidden, hidden), torch.nn.Tanh()]
    mods.append(torch.nn.Linear(hidden, 1))
    return torch.nn.Sequential(*mods).to(device=device, dtype=dtype)


def batches(case, world, dtype, device, count):
    """`count` global batches of (x, y): the same on every rank, each rank takes its slice."""
    gen = torch.Generator().manual_seed(int(case["seed"]) + 1)
    per, hidden = int(case["batch_per_rank"]), int(case["hidden"])
    out = []
    for _ in range(count):
        x = torch.randn(per * world, hidden, generator=gen, dtype=torch.float64)
        y = torch.tanh(x[:, :1] * 2.0)
        out.append((x.to(device, dtype), y.to(device, dtype)))
    return out


def train_steps(model, opt, data, rank, world):
    """One optimizer step per batch on this rank's slice; returns the last global loss (mean over ranks)."""
    loss = None
    for x, y in data:
        per = x.shape[0] // world
        xs, ys = x[rank * per:(rank + 1) * per], y[rank * per:(rank + 1) * per]
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(xs), ys)
        loss.backward()
        opt.step()
    value = loss.detach().clone()
    dist.all_reduce(value)
    return value.item() / world


def load_config(path):
    source = os.path.join(path, "ddp_config.py") if os.path.isdir(path) else path
    spec = importlib.util.spec_from_file_location(f"cko_ddp_subject_{abs(hash(source))}", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    job = json.load(open(sys.argv[1]))
    case = job["case"]
    cuda = torch.cuda.is_available() and job.get("device") != "cpu"
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    sync = torch.cuda.synchronize if cuda else (lambda: None)

    subjects, result = {}, {}
    check_data = batches(case, world, torch.float32, device, int(case["check_steps"]))
    for role in job["order"]:
        try:
            model = build_model(case, torch.float32, device)
            ddp = load_config(job["paths"][role]).wrap(model, [local] if cuda else None)
            opt = torch.optim.SGD(ddp.parameters(), lr=float(case["lr"]))
            loss = train_steps(ddp, opt, check_data, rank, world)
            subjects[role] = (ddp, opt)
            result[role] = {"loss": loss, "samples": []}
        except Exception as e:  # this subject's code failed; the other still runs
            result[role] = {"error": f"{type(e).__name__}: {e}"}
            traceback.print_exc()
    timing_data = batches(case, world, torch.float32, device, int(case["steps_per_sample"]))
    for role, (ddp, opt) in subjects.items():  # one untimed round each: allocator and buckets settle
        train_steps(ddp, opt, timing_data, rank, world)
    for _ in range(int(job["samples"])):
        for role in job["order"]:
            if role not in subjects:
                continue
            ddp, opt = subjects[role]
            sync()
            dist.barrier()
            start = time.perf_counter()
            train_steps(ddp, opt, timing_data, rank, world)
            sync()
            dist.barrier()
            result[role]["samples"].append((time.perf_counter() - start) * 1e3 / len(timing_data))
    if rank == 0:
        result["_world"] = world
        result["_backend"] = dist.get_backend()
        tmp = job["result"] + ".tmp"
        with open(tmp, "w") as f:
            json.dump(result, f)
        os.replace(tmp, job["result"])
    dist.barrier()  # the result is on disk before any rank leaves
    # The job is over; nothing a subject built is torn down in here. torch 1.13's gloo ProcessGroup can
    # deadlock in its destructor (its thread waits for the GIL to free a comm hook's tensor while the main
    # thread joins it), and a subject's atexit handler or non-daemon thread would hold the rank as well.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
