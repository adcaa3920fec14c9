"""PyTorch peer of beluga's ModernBERT training step: forward, backward and
AdamW of a ModernBertForSequenceClassification at BERT-tiny's scale
(models.TinyModernBERTConfig: vocab 50,368, hidden 128, 3 layers — global,
local, local —, 2 heads, GeGLU width 256, window 128, no biases, no dropout,
rotary θ 160,000 / 10,000, [CLS] pooling, head dense–GELU–LayerNorm), batch 32,
sequence 64, float32, 2 threads. The graph is HuggingFace's eager one
(modeling_modernbert.py), written with torch's own modules.
Run with Debian's python3-torch: /usr/bin/python3 torch_modernbert_step.py --steps 10"""
import argparse
import resource
import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn


def rope(theta, seq, d):
    inv = 1.0 / (theta ** (torch.arange(0, d, 2).float() / d))
    f = torch.outer(torch.arange(seq).float(), inv)
    e = torch.cat((f, f), dim=-1)
    return e.cos(), e.sin()


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class LN(nn.Module):
    """nn.LayerNorm without a bias (torch 1.13 has no bias=False)."""

    def __init__(self, h):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))

    def forward(self, x):
        return F.layer_norm(x, x.shape[-1:], self.weight, None, 1e-5)


class Layer(nn.Module):
    def __init__(self, i, h, heads, f, every=3):
        super().__init__()
        self.attn_norm = nn.Identity() if i == 0 else LN(h)
        self.Wqkv, self.Wo = nn.Linear(h, 3 * h, bias=False), nn.Linear(h, h, bias=False)
        self.mlp_norm = LN(h)
        self.Wi, self.Wo2 = nn.Linear(h, 2 * f, bias=False), nn.Linear(f, h, bias=False)
        self.heads, self.local = heads, i % every != 0

    def forward(self, x, masks, ropes):
        B, S, H = x.shape
        d = H // self.heads
        qkv = self.Wqkv(self.attn_norm(x)).view(B, S, 3, self.heads, d)
        q, k, v = qkv.transpose(3, 1).unbind(dim=2)
        cos, sin = ropes[self.local]
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        s = torch.matmul(q, k.transpose(2, 3)) * d ** -0.5 + masks[self.local]
        ctx = torch.matmul(F.softmax(s, dim=-1), v).transpose(1, 2).reshape(B, S, H)
        x = x + self.Wo(ctx)
        inp, gate = self.Wi(self.mlp_norm(x)).chunk(2, dim=-1)
        return x + self.Wo2(F.gelu(inp) * gate)


class TinyModernBert(nn.Module):
    def __init__(self, vocab=50368, h=128, layers=3, heads=2, f=256, window=128, labels=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, h, padding_idx=50283 % vocab)
        self.norm = LN(h)
        self.layers = nn.ModuleList([Layer(i, h, heads, f) for i in range(layers)])
        self.final_norm = LN(h)
        self.dense, self.head_norm = nn.Linear(h, h, bias=False), LN(h)
        self.classifier = nn.Linear(h, labels)
        self.h, self.heads, self.window = h, heads, window

    def forward(self, ids, mask):
        B, S = ids.shape
        fmin = torch.finfo(torch.float32).min
        glob = (1.0 - mask[:, None, None, :].float()) * fmin
        r = torch.arange(S)
        sliding = glob.masked_fill((torch.abs(r[None] - r[:, None]) > self.window // 2)[None, None], fmin)
        d = self.h // self.heads
        ropes = {False: rope(160000.0, S, d), True: rope(10000.0, S, d)}
        x = self.norm(self.tok(ids))
        for layer in self.layers:
            x = layer(x, {False: glob, True: sliding}, ropes)
        x = self.final_norm(x)
        return self.classifier(self.head_norm(F.gelu(self.dense(x[:, 0]))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    model = TinyModernBert()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.0)
    ids = torch.tensor([[1000 + (i * 131 + j * 17) % 29000 for j in range(a.seq)] for i in range(a.batch)])
    mask = torch.ones_like(ids)
    labels = torch.tensor([i % 2 for i in range(a.batch)])
    times = []
    for s in range(a.steps + 1):
        start = time.perf_counter()
        loss = F.cross_entropy(model(ids, mask), labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        if s > 0:
            times.append(time.perf_counter() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"torch step_time={statistics.median(times):.4f} peak_rss_mb={peak:.1f}")


if __name__ == "__main__":
    main()
