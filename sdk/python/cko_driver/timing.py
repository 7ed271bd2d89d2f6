"""Timers for one timed call (CPU perf_counter, or CUDA events via torch) and time-unit conversion."""
from __future__ import annotations

import time
from typing import Callable, Optional

# Nanoseconds per unit of each time unit a primary metric may be requested in.
NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def ns_to_unit(elapsed_ns: float, unit: str) -> float:
    """Converts nanoseconds to `unit` (one of NS_PER_UNIT); KeyError for any other unit."""
    return elapsed_ns / NS_PER_UNIT[unit]


class CpuTimer:
    """Wall time of the call by time.perf_counter_ns. GPU work must be synchronized inside the call."""

    name = "cpu_perf_counter"

    def before_each(self) -> None:
        pass

    def time_ns(self, call: Callable[[], None]) -> float:
        start = time.perf_counter_ns()
        call()
        return float(time.perf_counter_ns() - start)


class CudaEventTimer:
    """Device time between two CUDA events recorded around the call on torch's current stream.

    With flush_l2, a buffer of twice the L2 size is zeroed before each timed call (outside the
    events), so every sample starts with a cold L2.
    """

    name = "cuda_event"

    def __init__(self, flush_l2: bool = False, torch_module=None):
        if torch_module is None:
            import torch as torch_module  # noqa: F811 - imported only when this timer is chosen
        if not torch_module.cuda.is_available():
            raise RuntimeError("timer 'cuda' needs torch with CUDA available")
        self._torch = torch_module
        self._flush: Optional[object] = None
        if flush_l2:
            props = torch_module.cuda.get_device_properties(torch_module.cuda.current_device())
            l2_bytes = int(getattr(props, "L2_cache_size", 0)) or 64 * 1024 * 1024
            self._flush = torch_module.empty(2 * l2_bytes, dtype=torch_module.uint8, device="cuda")

    def before_each(self) -> None:
        if self._flush is not None:
            self._flush.zero_()

    def time_ns(self, call: Callable[[], None]) -> float:
        cuda = self._torch.cuda
        start = cuda.Event(enable_timing=True)
        end = cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end)) * 1e6  # elapsed_time is in milliseconds


def make_timer(timer, flush_l2: bool = False):
    """'cpu', 'cuda', or any object with before_each() and time_ns(call) -> float."""
    if timer == "cpu":
        if flush_l2:
            raise ValueError("flush_l2 needs timer='cuda'")
        return CpuTimer()
    if timer == "cuda":
        return CudaEventTimer(flush_l2=flush_l2)
    if hasattr(timer, "time_ns") and hasattr(timer, "before_each"):
        return timer
    raise ValueError(f"unknown timer {timer!r}: use 'cpu', 'cuda' or an object with time_ns()")
