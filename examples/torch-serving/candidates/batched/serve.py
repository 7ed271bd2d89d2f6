"""The candidate: up to 16 requests per forward, right-padded to the longest with an attention mask
(right padding keeps every real token's positions, so each request's last real logits are unchanged)."""
import torch


class Server:
    max_batch = 16

    def __init__(self, model, device):
        self.model, self.device = model, device

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
