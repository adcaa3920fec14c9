"""PyTorch peer of benchmarks/gopredict: inference of the same BERT-tiny-
(or --model mini) shaped classifier as torch_step.py over pre-tokenised
inputs (a file of "ids;types" lines written by gopredict -ids), sorted by
length into batches (as beluga's predict.Run batches them), each padded to
its longest input, float32, 2 threads, no autograd. Tokenisation is not
timed here (it is in gopredict). Run with Debian's python3-torch:
/usr/bin/python3 torch_predict.py --ids ids.txt"""
import argparse
import resource
import time

import torch

from torch_step import TinyBert


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ids", required=True)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--model", choices=["tiny", "mini"], default="tiny")
    ap.add_argument("--limit", type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    model = TinyBert() if a.model == "tiny" else TinyBert(hidden=256, layers=4, heads=4, ffn=1024)
    model.eval()
    rows = []
    with open(a.ids) as f:
        for line in f:
            ids, types = line.rstrip("\n").split(";")
            rows.append(([int(x) for x in ids.split()], [int(x) for x in types.split()]))
    if a.limit:
        rows = rows[: a.limit]
    order = sorted(range(len(rows)), key=lambda i: len(rows[i][0]))
    start = time.perf_counter()
    with torch.inference_mode():
        for s in range(0, len(order), a.batch):
            idx = order[s : s + a.batch]
            seq = max(len(rows[i][0]) for i in idx)
            ids = torch.zeros((len(idx), seq), dtype=torch.long)
            types = torch.zeros_like(ids)
            mask = torch.zeros((len(idx), seq), dtype=torch.bool)
            for j, i in enumerate(idx):
                n = len(rows[i][0])
                ids[j, :n] = torch.tensor(rows[i][0])
                types[j, :n] = torch.tensor(rows[i][1])
                mask[j, :n] = True
            torch.softmax(model(ids, types, mask), dim=-1)
    secs = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"torch inputs={len(rows)} seconds={secs:.2f} inputs_per_s={len(rows) / secs:.0f} peak_rss_mb={peak:.1f}")


if __name__ == "__main__":
    main()
