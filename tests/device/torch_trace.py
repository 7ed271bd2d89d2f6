"""Writes a PyTorch profiler (Kineto) trace of a small GPU workload: `python3 torch_trace.py OUT.json`."""
import sys

import torch
from torch.profiler import ProfilerActivity, profile, record_function

torch.manual_seed(0)
x = torch.randn(2048, 2048, device="cuda")
w = torch.randn(2048, 2048, device="cuda")
for _ in range(3):  # warm-up outside the trace
    torch.relu(x @ w)
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for step in range(5):
        with record_function(f"step_{step}"):
            y = torch.relu(x @ w)
            z = torch.softmax(y, dim=-1).sum()
            host = z.item()  # a device-to-host copy and a sync per step
    torch.cuda.synchronize()
prof.export_chrome_trace(sys.argv[1])
print("wrote", sys.argv[1], host)
