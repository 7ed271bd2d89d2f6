"""A small PyTorch workload for `cko profile collect ncu` on a GPU host: a matmul, a softmax, a reduction."""
import torch

torch.manual_seed(0)
a = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
b = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
c = a @ b
s = torch.softmax(c.float(), dim=-1)
print(float(s.sum(dim=-1).mean()))
torch.cuda.synchronize()
