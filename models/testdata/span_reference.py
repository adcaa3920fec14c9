"""Independent PyTorch reference for SpanBERT and the span losses: a plain
BertForQuestionAnswering forward (post-LayerNorm BERT, erf GELU, HuggingFace's
additive attention mask, qa_outputs on every token) written out by hand on the
fixture's weights (pytorch_model.bin) and a seeded qa_outputs, BeLUGA's span
MFT loss and its aligned INV loss (difflib.SequenceMatcher(None, pert, orig),
torch.gather, CE against softmax(orig), nothing detached), and autograd
gradients of their sum. Writes span_reference.json for qa_test.go.
Usage: /usr/bin/python3 span_reference.py <fixture model dir>"""
import difflib
import json
import math
import sys

import torch

d = sys.argv[1]
cfg = json.load(open(f"{d}/config.json"))
W = {k: v.float().clone().requires_grad_(True) for k, v in torch.load(f"{d}/pytorch_model.bin").items()}
H, heads, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
g = torch.Generator().manual_seed(13)
W["qa_outputs.weight"] = (torch.randn(2, H, generator=g) * 0.5).requires_grad_(True)
W["qa_outputs.bias"] = torch.tensor([0.1, -0.2], requires_grad=True)

# originals (rows 0, 1) then their perturbations (rows 2, 3); 0 is padding
ids = torch.tensor([
    [101, 2040, 2003, 12283, 102, 5650, 2003, 12283, 2084, 2198, 1012, 102],
    [101, 2073, 2515, 2002, 2444, 102, 2002, 3268, 1999, 3000, 102, 0],
    [101, 2040, 2003, 4206, 102, 5650, 2003, 4206, 2084, 2198, 1012, 102],
    [101, 2073, 2515, 2002, 2444, 102, 2002, 2573, 3268, 1999, 3000, 102],
])
types = torch.tensor([[0] * 5 + [1] * 7, [0] * 6 + [1] * 5 + [0], [0] * 5 + [1] * 7, [0] * 6 + [1] * 6])
mask = (ids != 0).float()
starts, ends = [5, 6, 5, 6], [5, 9, 5, 10]


def ln(x, p):
    return torch.nn.functional.layer_norm(x, (H,), W[p + ".weight"], W[p + ".bias"], eps)


def lin(x, p):
    return x @ W[p + ".weight"].T + W[p + ".bias"]


B, L = ids.shape
x = W["bert.embeddings.word_embeddings.weight"][ids] + W["bert.embeddings.position_embeddings.weight"][:L] \
    + W["bert.embeddings.token_type_embeddings.weight"][types]
x = ln(x, "bert.embeddings.LayerNorm")
ext = (1.0 - mask)[:, None, None, :] * torch.finfo(torch.float32).min
dh = H // heads
for l in range(cfg["num_hidden_layers"]):
    p = f"bert.encoder.layer.{l}."
    q, k, v = (lin(x, p + "attention.self." + n).view(B, L, heads, dh).transpose(1, 2) for n in ("query", "key", "value"))
    probs = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(dh) + ext, -1)
    ctx = (probs @ v).transpose(1, 2).reshape(B, L, H)
    x = ln(x + lin(ctx, p + "attention.output.dense"), p + "attention.output.LayerNorm")
    f = torch.nn.functional.gelu(lin(x, p + "intermediate.dense"))
    x = ln(x + lin(f, p + "output.dense"), p + "output.LayerNorm")
logits = lin(x, "qa_outputs")
start, end = logits[..., 0], logits[..., 1]

ce = torch.nn.CrossEntropyLoss()
mft = (ce(start, torch.tensor(starts)) + ce(end, torch.tensor(ends))) / 2


def align(orig, pert):
    o, p = [], []
    for a, b, n in difflib.SequenceMatcher(None, pert, orig).get_matching_blocks():
        p += range(a, a + n)
        o += range(b, b + n)
    return o + [0] * (len(orig) - len(o)), p + [0] * (len(orig) - len(p))


aligns = [align(ids[i].tolist(), ids[2 + i].tolist()) for i in range(2)]
align_ids = torch.tensor([a[0] for a in aligns] + [a[1] for a in aligns])
inv = 0
for z in (start, end):
    za = torch.gather(z, -1, align_ids)
    inv = inv + ce(za[2:], torch.softmax(za[:2], -1)) / 2
(mft + inv).backward()

names = ["qa_outputs.weight", "qa_outputs.bias", "bert.embeddings.LayerNorm.weight",
         "bert.encoder.layer.0.attention.self.query.weight", "bert.encoder.layer.1.output.dense.weight",
         "bert.embeddings.word_embeddings.weight"]
out = {
    "ids": ids.tolist(), "types": types.tolist(), "starts": starts, "ends": ends,
    "qa_outputs.weight": W["qa_outputs.weight"].detach().flatten().tolist(),
    "qa_outputs.bias": W["qa_outputs.bias"].detach().tolist(),
    "start_logits": start.detach().tolist(), "end_logits": end.detach().tolist(),
    "align_orig": [a[0] for a in aligns], "align_pert": [a[1] for a in aligns],
    "mft": mft.item(), "inv": inv.item(),
    "grad": {n: W[n].grad.flatten().tolist() for n in names[:3]},
    "grad_norm": {n: W[n].grad.norm().item() for n in names},
}
json.dump(out, open("span_reference.json", "w"))
