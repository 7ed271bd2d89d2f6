"""The candidate: one fused Triton kernel, one program per row (one read of x, one write of y).

Needs a CUDA GPU and triton; without them layernorm() raises, and the driver reports the subject as
`error` with that message (on a CPU-only machine this candidate cannot be measured).
"""
import torch

try:
    import triton
    import triton.language as tl
except ImportError as e:  # kept for the message; the module still imports so the driver can report it
    triton, _TRITON_ERROR = None, e
else:
    _TRITON_ERROR = None

if triton is not None:
    @triton.jit
    def _layernorm_row(x_ptr, y_ptr, w_ptr, b_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / n_cols
        centered = tl.where(mask, x - mean, 0.0)
        var = tl.sum(centered * centered, axis=0) / n_cols
        rstd = 1.0 / tl.sqrt(var + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0)
        tl.store(y_ptr + row * stride + cols, centered * rstd * w + b, mask=mask)


def layernorm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    if triton is None:
        raise RuntimeError(f"the Triton candidate needs triton, which is not installed ({_TRITON_ERROR}); "
                           "it runs on a GPU machine with triton")
    if not x.is_cuda:
        raise RuntimeError("the Triton candidate needs a CUDA GPU; this run is on the CPU")
    x2 = x.reshape(-1, x.shape[-1]).contiguous()
    rows, cols = x2.shape
    y = torch.empty_like(x2)
    block = triton.next_power_of_2(cols)
    warps = min(max(block // 256, 1), 16)
    _layernorm_row[(rows,)](x2, y, weight, bias, x2.stride(0), cols, eps, BLOCK=block, num_warps=warps)
    return y.reshape(x.shape)
