"""The in-driver request loop of torch-serving: a fixed request mix replayed against a subject's server,
with throughput, latency percentiles and the output comparison. Needs only torch (tests use a tiny
nn.Module; the driver uses a transformers model).

A server is any object with `max_batch` (int >= 1) and `handle(list of 1-D LongTensor token ids) ->
list of 1-D float Tensor` (the logits of each request's last token), one output per input, in order.
"""
import math
import time
from typing import Callable, List, Sequence

import torch


def request_mix(case: dict) -> List[torch.Tensor]:
    """The case's requests: `requests` prompts with lengths cycling through `lengths`, token ids drawn
    from the case's seed (the same mix on every call and every machine)."""
    gen = torch.Generator().manual_seed(int(case["seed"]))
    lengths = [int(n) for n in case["lengths"]]
    vocab = int(case["vocab_size"])
    return [torch.randint(0, vocab, (lengths[i % len(lengths)],), generator=gen)
            for i in range(int(case["requests"]))]


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (the smallest value with at least pct % of the values at or below it)."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100.0 * len(ordered)))
    return ordered[rank - 1]


class Replay:
    """What one replay of the mix measured."""

    def __init__(self, outputs, latencies_s, total_s):
        self.outputs, self.latencies_s, self.total_s = outputs, latencies_s, total_s

    @property
    def requests_per_s(self) -> float:
        return len(self.outputs) / self.total_s

    @property
    def p99_latency_ms(self) -> float:
        return percentile(self.latencies_s, 99.0) * 1e3


def replay(server, requests: Sequence[torch.Tensor], clock: Callable[[], float] = time.perf_counter,
           sync: Callable[[], None] = lambda: None) -> Replay:
    """Every request arrives at the start (an offline burst); the server takes them in arrival order, up
    to max_batch at a time. A request's latency is from the start to the end of the call that answered
    it (after `sync`, e.g. torch.cuda.synchronize)."""
    batch = int(server.max_batch)
    if batch < 1:
        raise ValueError(f"server.max_batch must be >= 1, got {batch}")
    outputs: List[torch.Tensor] = []
    latencies: List[float] = []
    start = clock()
    for first in range(0, len(requests), batch):
        chunk = list(requests[first:first + batch])
        answers = server.handle(chunk)
        sync()
        done = clock()
        if len(answers) != len(chunk):
            raise RuntimeError(f"server.handle answered {len(answers)} of {len(chunk)} requests")
        outputs.extend(answers)
        latencies.extend([done - start] * len(chunk))
    total = clock() - start
    if total <= 0:
        raise RuntimeError("the replay took no measurable time")
    return Replay(outputs, latencies, total)


def max_abs_err(outputs: Sequence[torch.Tensor], expected: Sequence[torch.Tensor]) -> float:
    """The largest |output - expected| over every request (inf when a shape or the count differs)."""
    if len(outputs) != len(expected):
        return math.inf
    worst = 0.0
    for out, exp in zip(outputs, expected):
        out = out.detach().to("cpu", torch.float64).reshape(-1)
        if out.shape != exp.shape:
            return math.inf
        worst = max(worst, (out - exp).abs().max().item())
    return worst
