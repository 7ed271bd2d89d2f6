"""What the driver saw: Python, platform, host and, when torch is loaded with CUDA, GPUs and versions."""
from __future__ import annotations

import platform
import socket
import sys

SDK_NAME = "cko-driver-python/1"


def _torch_if_loaded(timer_name: str):
    # Importing torch costs seconds and may initialize CUDA; only report it when the workload
    # already imported it (or asked for CUDA-event timing, which imported it).
    if "torch" in sys.modules or timer_name == "cuda_event":
        return sys.modules.get("torch")
    return None


def collect_environment(timer_name: str) -> dict:
    """Stable facts only: the same machine and software must give the same object on every call."""
    env = {
        "sdk": SDK_NAME,
        "timer": timer_name,
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "software": {"python": platform.python_version()},
    }
    torch = _torch_if_loaded(timer_name)
    if torch is None:
        return env
    env["software"]["torch"] = str(getattr(torch, "__version__", "unknown"))
    try:
        if torch.cuda.is_available():
            if getattr(torch.version, "cuda", None):
                env["software"]["cuda"] = str(torch.version.cuda)
            uuids, models = [], []
            for i in range(torch.cuda.device_count()):
                props = torch.cuda.get_device_properties(i)
                uuid = getattr(props, "uuid", None)
                uuids.append(("GPU-" + str(uuid)) if uuid is not None else f"index-{i}")
                models.append(str(props.name))
            env["gpu_uuids"] = uuids
            env["gpu_models"] = models
    except Exception as e:  # the environment is best effort; never fail the run for it
        env["gpu_error"] = f"{type(e).__name__}: {e}"
    return env
