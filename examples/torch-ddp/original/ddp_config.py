"""The original: DistributedDataParallel with 1 MiB gradient buckets (one all-reduce per ~1 MiB of
gradients: many small collectives, each paying its launch and latency)."""
from torch.nn.parallel import DistributedDataParallel


def wrap(model, device_ids):
    return DistributedDataParallel(model, device_ids=device_ids, bucket_cap_mb=1)
