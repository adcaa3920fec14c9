"""The modernbert entry of torch_step.py's FAMILIES: a
ModernBertForSequenceClassification at the shape of --model (hidden, layers,
heads; GeGLU width ffn/2, so that Wi has the FFN's outputs), as gostep's
tinyFamily["modernbert"] builds it: layers alternating global and local
attention every 3 (window 128), rotary θ 160,000 / 10,000, no biases, no
dropout (ModernBERT's defaults), [CLS] pooling, head dense–GELU–LayerNorm.
The graph is HuggingFace's eager one (modeling_modernbert.py), written with
torch's own modules."""
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
    def __init__(self, vocab=30522, hidden=128, layers=2, heads=2, ffn=512, labels=2, window=128):
        super().__init__()
        h, f = hidden, ffn // 2
        self.tok = nn.Embedding(vocab, h, padding_idx=0)
        self.norm = LN(h)
        self.layers = nn.ModuleList([Layer(i, h, heads, f) for i in range(layers)])
        self.final_norm = LN(h)
        self.dense, self.head_norm = nn.Linear(h, h, bias=False), LN(h)
        self.classifier = nn.Linear(h, labels)
        self.h, self.heads, self.window = h, heads, window

    def forward(self, ids, types, mask):
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
