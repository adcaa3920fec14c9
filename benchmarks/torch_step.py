"""PyTorch peer of benchmarks/gostep: training steps (forward, backward,
AdamW) of a BERT-tiny-shaped classifier (2 layers, hidden 128, 2 heads,
FFN 512, vocab 30,522; post-LayerNorm blocks with exact GELU and dropout 0.1,
tanh pooler, linear classifier), batch 32, sequence 64, float32, 2 threads;
--model mini for BERT-mini (4 layers, hidden 256, 4 heads, FFN 1024), --model
base for bert-base (12 layers, hidden 768, 12 heads, FFN 3072).
--family picks the model family's variations on that graph (FAMILIES, one
entry per family, as gostep's tinyFamily): RoBERTa's offset positions, one
token type and dense-tanh head without pooler; ELECTRA's half-width
embeddings with embeddings_project and dense-GELU head; DistilBERT's lack of
token types and pre_classifier-ReLU head. The encoder layers are torch's
nn.TransformerEncoderLayer (post-LayerNorm, exact GELU) for every family but
modernbert, whose graph is torch_modernbert.py's, and the decoders, which are
transformers' own classes (torch_decoder.py).
Run with Debian's python3-torch: /usr/bin/python3 torch_step.py --steps 10"""
import argparse
import importlib
import resource
import statistics
import time

import torch
from torch import nn


# Each family's variations: embedding width (a fraction of hidden), token
# types, position offset (padding_idx + 1), and head: "pooler" (BERT's tanh
# pooler, dropout, classifier), "tanh"/"gelu" (dropout, dense, act, dropout,
# out_proj) or "relu" (pre_classifier, ReLU, dropout, classifier).
FAMILIES = {
    "bert": dict(emb=1, types=2, offset=0, head="pooler"),
    "electra": dict(emb=0.5, types=2, offset=0, head="gelu"),
    "roberta": dict(emb=1, types=1, offset=2, head="tanh"),
    "xlm-roberta": dict(emb=1, types=1, offset=2, head="tanh"),
    "distilbert": dict(emb=1, types=0, offset=0, head="relu"),
    # Relative attention, not nn.TransformerEncoderLayer: torch_deberta_step.py.
    "deberta-v2": dict(graph="deberta"),
    "modernbert": dict(model="torch_modernbert"),
    # transformers' own GPT2/Llama/Qwen2ForSequenceClassification
    # (torch_decoder.py; TRANSFORMERS_SRC names the source tree).
    "gpt2": dict(model="torch_decoder", cls="TinyGPT2"),
    "llama": dict(model="torch_decoder", cls="TinyLlama"),
    "qwen2": dict(model="torch_decoder", cls="TinyQwen2"),
}


class TinyBert(nn.Module):
    def __init__(self, vocab=30522, hidden=128, layers=2, heads=2, ffn=512, max_pos=512, labels=2, family="bert"):
        super().__init__()
        f = FAMILIES[family]
        e = int(hidden * f["emb"])
        self.offset, self.head = f["offset"], f["head"]
        self.word = nn.Embedding(vocab, e)
        self.pos = nn.Embedding(max_pos + f["offset"], e)
        self.typ = nn.Embedding(f["types"], e) if f["types"] else None
        self.ln = nn.LayerNorm(e, eps=1e-12)
        self.project = nn.Linear(e, hidden) if e != hidden else None
        self.drop = nn.Dropout(0.1)
        layer = nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.1, activation="gelu",
                                           batch_first=True, norm_first=False, layer_norm_eps=1e-12)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.pooler = nn.Linear(hidden, hidden)
        self.classifier = nn.Linear(hidden, labels)

    def forward(self, ids, types, mask):
        pos = torch.arange(ids.shape[1]).unsqueeze(0) + self.offset
        x = self.word(ids) + self.pos(pos)
        if self.typ is not None:
            x = x + self.typ(types)
        x = self.drop(self.ln(x))
        if self.project is not None:
            x = self.project(x)
        x = self.encoder(x, src_key_padding_mask=~mask)
        x = x[:, 0]
        if self.head == "pooler":
            return self.classifier(self.drop(torch.tanh(self.pooler(x))))
        if self.head == "relu":
            return self.classifier(self.drop(torch.relu(self.pooler(x))))
        act = torch.tanh if self.head == "tanh" else nn.functional.gelu
        return self.classifier(self.drop(act(self.pooler(self.drop(x)))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--model", choices=["tiny", "mini", "base"], default="tiny")
    ap.add_argument("--family", choices=sorted(FAMILIES), default="bert")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    size = {"tiny": {}, "mini": dict(hidden=256, layers=4, heads=4, ffn=1024),
            "base": dict(hidden=768, layers=12, heads=12, ffn=3072)}[a.model]
    if FAMILIES[a.family].get("graph") == "deberta":
        from torch_deberta_step import TinyDeberta
        model = TinyDeberta(**size)
    elif "model" in FAMILIES[a.family]:
        f = FAMILIES[a.family]
        model = getattr(importlib.import_module(f["model"]), f.get("cls", "TinyModernBert"))(**size)
    else:
        model = TinyBert(family=a.family, **size)
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
