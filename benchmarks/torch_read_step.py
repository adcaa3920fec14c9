"""PyTorch peer of benchmarks/readstep: READ (SQuAD) training steps of a
BERT-tiny-shaped span model (torch_step.py's encoder, no pooler, a linear
qa_outputs hidden -> 2 on every token), sequence 384, float32, 2 threads.
--loss mft: (CE(start) + CE(end)) / 2 on answer positions; --loss inv: the
first half of the batch are originals, the second their perturbations, start
and end logits gathered at aligned positions (difflib, as BeLUGA) and
CE(pert, softmax(orig)) averaged over start and end, nothing detached.
Run with Debian's python3-torch: /usr/bin/python3 torch_read_step.py"""
import argparse
import difflib
import resource
import statistics
import time

import torch
from torch import nn

from torch_step import TinyBert


class TinySpanBert(TinyBert):
    def __init__(self):
        super().__init__()
        del self.pooler, self.classifier
        self.qa_outputs = nn.Linear(128, 2)

    def forward(self, ids, types, mask):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.drop(self.ln(self.word(ids) + self.pos(pos) + self.typ(types)))
        x = self.encoder(x, src_key_padding_mask=~mask)
        start, end = self.qa_outputs(x).split(1, dim=-1)
        return start.squeeze(-1), end.squeeze(-1)


def rows(n, seq):
    """Row i has seq - (37 i mod 150) real tokens (as readstep's rows)."""
    ids = torch.zeros(n, seq, dtype=torch.long)
    types = torch.zeros(n, seq, dtype=torch.long)
    for i in range(n):
        real = seq - (37 * i) % 150
        for j in range(real):
            ids[i, j] = 1000 + (i * 131 + j * 17) % 29000
            types[i, j] = 1 if j > 20 else 0
    return ids, types


def align(orig, pert, seq):
    o, p = [], []
    for a, b, n in difflib.SequenceMatcher(None, pert, orig).get_matching_blocks():
        p += range(a, a + n)
        o += range(b, b + n)
    return o + [0] * (seq - len(o)), p + [0] * (seq - len(p))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=384)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--loss", choices=["mft", "inv"], default="mft")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    model = TinySpanBert()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.0)
    ids, types = rows(a.batch, a.seq)
    half = a.batch // 2
    if a.loss == "inv":
        aligns = []
        for i in range(half):
            ids[half + i] = ids[i]
            ids[half + i, 25], ids[half + i, 60] = 2000, 2001
            types[half + i] = types[i]
            aligns.append(align(ids[i].tolist(), ids[half + i].tolist(), a.seq))
        orig_idx = torch.tensor([x[0] for x in aligns])
        pert_idx = torch.tensor([x[1] for x in aligns])
    mask = ids != 0
    starts = torch.tensor([30 + i for i in range(a.batch)])
    ends = torch.tensor([32 + i for i in range(a.batch)])
    ce = nn.CrossEntropyLoss()

    def loss_fn(start, end):
        if a.loss == "mft":
            return (ce(start, starts) + ce(end, ends)) / 2
        total = 0
        for z in (start, end):
            zo = torch.gather(z[:half], -1, orig_idx)
            zp = torch.gather(z[half:], -1, pert_idx)
            total = total + ce(zp, torch.softmax(zo, -1))
        return total / 2

    times = []
    for s in range(a.steps + 1):
        t0 = time.perf_counter()
        loss = loss_fn(*model(ids, types, mask))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        if s > 0:
            times.append(time.perf_counter() - t0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"torch read-{a.loss} step_time={statistics.median(times):.4f} peak_rss_mb={peak:.1f}")


if __name__ == "__main__":
    main()
