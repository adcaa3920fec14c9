"""The deberta-v2 family's model for torch_step.py --family deberta-v2: a
DeBERTa-v3-shaped classifier at BERT-tiny's size (2 layers, hidden 128, 2
heads, FFN 512, vocab 30,522; --model mini as torch_step.py's) with
deberta-v3-base's relative attention (p2c|c2p, 256 log buckets over 512
positions, shared keys, normalised relative embeddings, no absolute
positions or token types), dropout 0.1, ContextPooler with GELU, linear
classifier. The graph is HuggingFace's modeling_deberta_v2.py
(DisentangledSelfAttention, XSoftmax's masking) written out in plain
PyTorch, since transformers is not installed here. torch_step.py times it
(one timing loop for every family's peer)."""
import torch
from torch import nn


def log_bucket(rel, bucket_size, max_position):
    sign = torch.sign(rel)
    mid = bucket_size // 2
    abs_pos = torch.where((rel < mid) & (rel > -mid), torch.tensor(mid - 1).type_as(rel), torch.abs(rel))
    log_pos = torch.ceil(torch.log(abs_pos / mid) / torch.log(torch.tensor((max_position - 1) / mid)) * (mid - 1)) + mid
    return torch.where(abs_pos <= mid, rel.type_as(log_pos), log_pos * sign).long()


class Layer(nn.Module):
    def __init__(self, h, heads, ffn, span, drop):
        super().__init__()
        self.heads, self.span = heads, span
        self.query_proj, self.key_proj, self.value_proj = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.attn_out, self.ln1 = nn.Linear(h, h), nn.LayerNorm(h, 1e-7)
        self.inter, self.out, self.ln2 = nn.Linear(h, ffn), nn.Linear(ffn, h), nn.LayerNorm(h, 1e-7)
        self.drop = nn.Dropout(drop)

    def split(self, x):
        b, n, _ = x.shape
        return x.view(b, n, self.heads, -1).permute(0, 2, 1, 3).reshape(b * self.heads, n, -1)

    def forward(self, x, amask, rel_pos, rel_emb):
        b, n, h = x.shape
        q, k, v = self.split(self.query_proj(x)), self.split(self.key_proj(x)), self.split(self.value_proj(x))
        scale = (q.size(-1) * 3) ** 0.5
        rel_emb = self.drop(rel_emb).unsqueeze(0)
        pq = self.split(self.query_proj(rel_emb)).repeat(b, 1, 1)
        pk = self.split(self.key_proj(rel_emb)).repeat(b, 1, 1)
        s = torch.bmm(q, k.transpose(-1, -2))
        c2p_pos = torch.clamp(rel_pos + self.span, 0, 2 * self.span - 1).expand(b * self.heads, n, n)
        s = s + torch.gather(torch.bmm(q, pk.transpose(-1, -2)), -1, c2p_pos)
        p2c_pos = torch.clamp(-rel_pos + self.span, 0, 2 * self.span - 1).expand(b * self.heads, n, n)
        s = s + torch.gather(torch.bmm(k, pq.transpose(-1, -2)), -1, p2c_pos).transpose(-1, -2)
        s = (s / scale).view(b, self.heads, n, n)
        rmask = ~amask
        p = torch.softmax(s.masked_fill(rmask, torch.finfo(s.dtype).min), -1).masked_fill(rmask, 0)
        ctx = torch.bmm(self.drop(p).view(b * self.heads, n, n), v)
        ctx = ctx.view(b, self.heads, n, -1).permute(0, 2, 1, 3).reshape(b, n, h)
        y = self.ln1(self.drop(self.attn_out(ctx)) + x)
        return self.ln2(self.drop(self.out(nn.functional.gelu(self.inter(y)))) + y)


class TinyDeberta(nn.Module):
    def __init__(self, vocab=30522, hidden=128, layers=2, heads=2, ffn=512, buckets=256, max_pos=512, labels=2):
        super().__init__()
        self.buckets, self.max_pos = buckets, max_pos
        self.word = nn.Embedding(vocab, hidden, padding_idx=0)
        self.ln = nn.LayerNorm(hidden, 1e-7)
        self.layers = nn.ModuleList([Layer(hidden, heads, ffn, buckets, 0.1) for _ in range(layers)])
        self.rel_embeddings = nn.Embedding(2 * buckets, hidden)
        self.rel_ln = nn.LayerNorm(hidden, 1e-7)
        self.pooler = nn.Linear(hidden, hidden)
        self.classifier = nn.Linear(hidden, labels)
        self.drop = nn.Dropout(0.1)

    def forward(self, ids, types, mask):
        # DeBERTa-v3 has no token types: types is torch_step.py's argument.
        n = ids.shape[1]
        x = self.drop(self.ln(self.word(ids)) * mask.unsqueeze(2).to(torch.float32))
        m = mask.bool()
        amask = (m[:, None, None, :] & m[:, None, :, None])
        r = torch.arange(n)
        rel_pos = log_bucket(r[:, None] - r[None, :], self.buckets, self.max_pos)
        rel_emb = self.rel_ln(self.rel_embeddings.weight)
        for l in self.layers:
            x = l(x, amask, rel_pos, rel_emb)
        pooled = nn.functional.gelu(self.pooler(x[:, 0]))
        return self.classifier(self.drop(pooled))
