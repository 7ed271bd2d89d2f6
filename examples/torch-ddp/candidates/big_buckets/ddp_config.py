"""The candidate: 64 MiB buckets (a few large all-reduces, overlapped with the rest of backward) and
gradients that are views into the buckets (no copy into and out of them)."""
from torch.nn.parallel import DistributedDataParallel


def wrap(model, device_ids):
    return DistributedDataParallel(model, device_ids=device_ids, bucket_cap_mb=64, gradient_as_bucket_view=True)
