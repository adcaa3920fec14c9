"""PyTorch peer of benchmarks/sst2.sh: the recipe of shared/data/MANIFEST.md's
peer figures — a BERT-tiny-shaped classifier (torch_step.TinyBert: 2 layers,
hidden 128, 2 heads, FFN 512, dropout 0.1, tanh pooler) from a random start
initialised as HuggingFace's BertPreTrainedModel does (normal(0, 0.02)
weights, zero biases, unit LayerNorms), SST-2 train, 2 epochs, batch 32
reshuffled every epoch and padded to its longest input (DataCollatorWithPadding),
AdamW (lr 3e-4, weight decay 0) with linear decay and no warm-up, gradient
clipping at 1.0 (the Trainer's defaults), softmax cross-entropy, max length 64
(the ids come truncated from benchmarks/sst2ids), evaluated on BeLUGA's halves
of dev. Prints the accuracies and the training wall time (2 threads).
Run with Debian's python3-torch: /usr/bin/python3 sst2_peer.py --ids DIR"""
import argparse
import math
import time

import torch
from torch import nn

from torch_step import TinyBert


def read(path):
    rows = []
    with open(path) as f:
        for line in f:
            label, ids, types = line.rstrip("\n").split(";")
            rows.append((int(label), [int(x) for x in ids.split()], [int(x) for x in types.split()]))
    return rows


def batch(rows):
    seq = max(len(r[1]) for r in rows)
    ids = torch.zeros((len(rows), seq), dtype=torch.long)
    types = torch.zeros_like(ids)
    mask = torch.zeros((len(rows), seq), dtype=torch.bool)
    for j, (_, i, t) in enumerate(rows):
        ids[j, : len(i)] = torch.tensor(i)
        types[j, : len(t)] = torch.tensor(t)
        mask[j, : len(i)] = True
    return ids, types, mask, torch.tensor([r[0] for r in rows])


def hf_init(module):
    # BertPreTrainedModel._init_weights
    if isinstance(module, (nn.Linear, nn.Embedding)):
        module.weight.data.normal_(mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            module.bias.data.zero_()
    elif isinstance(module, nn.LayerNorm):
        module.weight.data.fill_(1.0)
        module.bias.data.zero_()
    elif isinstance(module, nn.MultiheadAttention):
        module.in_proj_weight.data.normal_(mean=0.0, std=0.02)
        module.in_proj_bias.data.zero_()


def accuracy(model, rows, bs=128):
    model.eval()
    right = 0
    with torch.inference_mode():
        for s in range(0, len(rows), bs):
            ids, types, mask, labels = batch(rows[s : s + bs])
            right += (model(ids, types, mask).argmax(-1) == labels).sum().item()
    model.train()
    return right / len(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ids", required=True, help="directory written by benchmarks/sst2ids")
    ap.add_argument("--epochs", type=float, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    train, val, test = (read(f"{a.ids}/{n}.ids") for n in ("train", "val", "test"))
    model = TinyBert()
    model.apply(hf_init)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.0)
    per_epoch = math.ceil(len(train) / a.batch)
    total = math.ceil(a.epochs * per_epoch)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.0, (total - s) / total))
    start = time.perf_counter()
    step = 0
    while step < total:
        order = torch.randperm(len(train)).tolist()
        for s in range(0, len(order), a.batch):
            if step == total:
                break
            ids, types, mask, labels = batch([train[i] for i in order[s : s + a.batch]])
            loss = nn.functional.cross_entropy(model(ids, types, mask), labels)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            step += 1
    secs = time.perf_counter() - start
    va, te = accuracy(model, val), accuracy(model, test)
    print(f"torch steps={total} train_seconds={secs:.1f} validation={100 * va:.1f} test={100 * te:.1f}")


if __name__ == "__main__":
    main()
