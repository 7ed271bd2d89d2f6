#!/usr/bin/env python3
"""Records a real PyTorch profiler trace (Kineto JSON) of a small transformer's training steps on the
GPU, growing the step count until the file is at least --size-mb: the real-trace input for
bench_kineto (CKO_KINETO_BENCH_TRACE=FILE) on a GPU host, beside gen_kineto_trace.py's generated
ones. Prints the file's size, its event count and the torch version."""
import argparse
import json
import os

import torch


def record(path, steps):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024,
                                             batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=4).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(16, 128, 256, device="cuda")
    for _ in range(3):  # warm-up, outside the trace
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts, record_shapes=True) as prof:
        for _ in range(steps):
            with torch.profiler.record_function("train_step"):
                model(x).square().mean().backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
    prof.export_chrome_trace(path)
    return os.path.getsize(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=float, default=96)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    steps = 20
    size = record(a.out, steps)
    while size < a.size_mb * 1e6:
        steps = int(steps * a.size_mb * 1e6 / size * 1.05) + 1
        size = record(a.out, steps)
    with open(a.out) as f:
        events = len(json.load(f).get("traceEvents", []))
    print(f"{a.out}: {size / 1e6:.1f} MB, {events} events, {steps} steps, torch {torch.__version__}")


if __name__ == "__main__":
    main()
