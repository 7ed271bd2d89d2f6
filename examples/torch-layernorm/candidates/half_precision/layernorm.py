"""A planted wrong-result candidate: the same composite ops in bfloat16 (faster, but ~1e-2 off).

cko must call it invalid: its max_abs_err against the float64 reference breaks the Target's threshold.
"""
import torch


def layernorm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    h, w, b = x.to(torch.bfloat16), weight.to(torch.bfloat16), bias.to(torch.bfloat16)
    mean = h.mean(dim=-1, keepdim=True)
    centered = h - mean
    var = (centered * centered).mean(dim=-1, keepdim=True)
    return (centered * torch.rsqrt(var + eps) * w + b).to(x.dtype)
