"""PyTorch peer of benchmarks/gostep: training steps (forward, backward,
AdamW) of a BERT-tiny-shaped classifier (2 layers, hidden 128, 2 heads,
FFN 512, vocab 30,522; post-LayerNorm blocks with exact GELU and dropout 0.1,
tanh pooler, linear classifier), batch 32, sequence 64, float32, 2 threads;
--model mini for BERT-mini (4 layers, hidden 256, 4 heads, FFN 1024).
Run with Debian's python3-torch: /usr/bin/python3 torch_step.py --steps 10"""
import argparse
import resource
import statistics
import time

import torch
from torch import nn


class TinyBert(nn.Module):
    def __init__(self, vocab=30522, hidden=128, layers=2, heads=2, ffn=512, max_pos=512, labels=2):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.typ = nn.Embedding(2, hidden)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.drop = nn.Dropout(0.1)
        layer = nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.1, activation="gelu",
                                           batch_first=True, norm_first=False, layer_norm_eps=1e-12)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.pooler = nn.Linear(hidden, hidden)
        self.classifier = nn.Linear(hidden, labels)

    def forward(self, ids, types, mask):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.drop(self.ln(self.word(ids) + self.pos(pos) + self.typ(types)))
        x = self.encoder(x, src_key_padding_mask=~mask)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return self.classifier(self.drop(pooled))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--model", choices=["tiny", "mini"], default="tiny")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    model = TinyBert() if a.model == "tiny" else TinyBert(hidden=256, layers=4, heads=4, ffn=1024)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.0)
    ids = torch.tensor([[1000 + (i * 131 + j * 17) % 29000 for j in range(a.seq)] for i in range(a.batch)])
    types = torch.zeros_like(ids)
    mask = torch.ones_like(ids, dtype=torch.bool)
    labels = torch.tensor([i % 2 for i in range(a.batch)])
    times = []
    for s in range(a.steps + 1):
        start = time.perf_counter()
        loss = nn.functional.cross_entropy(model(ids, types, mask), labels)
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
