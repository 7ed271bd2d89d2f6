"""torch.profiler around a call's timed samples, when the request asks for a trace (request.profile,
`cko profile collect torch`): CPU activities always, CUDA ones when torch sees a GPU; each sample of a
subject is annotated `cko:<role>`; the Chrome trace is exported to the request's trace_path (inside
output_dir, so the result lists it among its artifacts)."""
from __future__ import annotations


class ProfileError(Exception):
    """The requested trace cannot be taken (no torch, a torch without Kineto, a trace of another shape)."""


class TorchTrace:
    def __init__(self, trace_path: str):
        self.trace_path = trace_path
        try:
            import torch
            import torch.profiler
        except Exception as e:  # ImportError, or a torch that fails while loading
            raise ProfileError(f"request.profile asks for a torch trace, but torch cannot be imported "
                               f"({type(e).__name__}: {e})") from e
        self.torch = torch
        kineto = getattr(torch.autograd, "kineto_available", None)
        if callable(kineto) and not kineto():
            raise ProfileError(f"request.profile asks for a torch trace, but this torch ({torch.__version__}) "
                               "was built without Kineto (torch.autograd.kineto_available() is False): its "
                               "profiler cannot export the Chrome trace cko reads; use a torch build with "
                               "Kineto (the PyTorch wheels have it)")
        activities = [torch.profiler.ProfilerActivity.CPU]
        self.cuda = bool(torch.cuda.is_available())
        if self.cuda:
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        self.profiler = torch.profiler.profile(activities=activities)
        self.profiler.start()

    def annotate(self, role: str):
        """A record_function range named cko:<role> around one sample."""
        return self.torch.profiler.record_function(f"cko:{role}")

    def finish(self) -> None:
        """Stops the profiler and exports the trace; checks it is a Kineto trace (a JSON object)."""
        if self.cuda:
            self.torch.cuda.synchronize()
        self.profiler.stop()
        self.profiler.export_chrome_trace(self.trace_path)
        with open(self.trace_path, "rb") as f:
            head = f.read(4096).lstrip()
        if not head.startswith(b"{") or b"schemaVersion" not in head + self._tail():
            raise ProfileError(f"torch.profiler wrote {self.trace_path}, which is not a Kineto Chrome trace "
                               "(a JSON object with schemaVersion): this torch cannot give the trace cko reads")

    def _tail(self) -> bytes:
        with open(self.trace_path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 65536))
            return f.read()
