"""The candidate: the batched server with the model under torch.compile (PyTorch 2; on a GPU it fuses the
attention/MLP pointwise work). PyTorch 1.x has no torch.compile: the subject then raises, saying so."""
import torch


class Server:
    max_batch = 16

    def __init__(self, model, device):
        if not hasattr(torch, "compile"):
            raise RuntimeError(f"torch.compile needs PyTorch 2 (this is {torch.__version__})")
        self.model, self.device = torch.compile(model, dynamic=True), device

    @torch.no_grad()
    def handle(self, requests):
        longest = max(len(r) for r in requests)
        ids = torch.zeros(len(requests), longest, dtype=torch.long)
        mask = torch.zeros(len(requests), longest, dtype=torch.long)
        for i, r in enumerate(requests):
            ids[i, :len(r)] = r
            mask[i, :len(r)] = 1
        logits = self.model(ids.to(self.device), attention_mask=mask.to(self.device)).logits
        return [logits[i, len(r) - 1] for i, r in enumerate(requests)]
