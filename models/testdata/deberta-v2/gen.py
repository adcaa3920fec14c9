#!/usr/bin/python3
"""Writes the tiny DeBERTa-v3-shaped fixture of models/deberta_test.go.

The reference forward is HuggingFace transformers' modeling_deberta_v2.py
(huggingface/transformers, src/transformers/models/deberta_v2/, the
XSoftmax/StableDropout version of 4.2x-4.45) written out in plain PyTorch with
HF's module and parameter names, because transformers is not installed where
this runs; gradients are torch autograd's. When transformers IS importable,
the state dict is also loaded into DebertaV2ForSequenceClassification and
DebertaV2ForQuestionAnswering and their outputs asserted equal.

Run from this directory with torch 1.13: /usr/bin/python3 gen.py
It writes config.json, model.safetensors, pytorch_model.bin, expected.json,
expected_grads.safetensors (float32 gradients of the loss sum) and vocab.txt.
"""
import collections
import json
import math
import struct

import torch
from torch import nn

torch.manual_seed(20261125)

CONFIG = {
    "model_type": "deberta-v2",
    "architectures": ["DebertaV2ForSequenceClassification"],
    "attention_probs_dropout_prob": 0.1,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "hidden_size": 32,
    "initializer_range": 0.02,
    "intermediate_size": 32,
    "max_position_embeddings": 64,
    "relative_attention": True,
    "position_buckets": 8,
    "norm_rel_ebd": "layer_norm",
    "share_att_key": True,
    "pos_att_type": "p2c|c2p",
    "layer_norm_eps": 1e-7,
    "max_relative_positions": -1,
    "position_biased_input": False,
    "num_attention_heads": 2,
    "num_hidden_layers": 2,
    "type_vocab_size": 0,
    "vocab_size": 256,
    "pad_token_id": 0,
}
PAD, CLS, SEP = 0, 1, 2


class Cfg:
    def __init__(self, d):
        self.__dict__.update(d)
        if isinstance(self.pos_att_type, str):
            self.pos_att_type = [x.strip() for x in self.pos_att_type.lower().split("|")]
        self.pooler_hidden_size = d.get("pooler_hidden_size", self.hidden_size)
        self.pooler_dropout = d.get("pooler_dropout", 0)
        self.pooler_hidden_act = d.get("pooler_hidden_act", "gelu")
        self.embedding_size = d.get("embedding_size", self.hidden_size)


def gelu(x):
    return nn.functional.gelu(x)  # the exact erf form, ACT2FN["gelu"]


def make_log_bucket_position(relative_pos, bucket_size, max_position):
    sign = torch.sign(relative_pos)
    mid = bucket_size // 2
    abs_pos = torch.where(
        (relative_pos < mid) & (relative_pos > -mid), torch.tensor(mid - 1).type_as(relative_pos), torch.abs(relative_pos)
    )
    log_pos = torch.ceil(torch.log(abs_pos / mid) / torch.log(torch.tensor((max_position - 1) / mid)) * (mid - 1)) + mid
    return torch.where(abs_pos <= mid, relative_pos.type_as(log_pos), log_pos * sign)


def build_relative_position(query_size, key_size, bucket_size=-1, max_position=-1):
    q_ids = torch.arange(0, query_size)
    k_ids = torch.arange(0, key_size)
    rel = q_ids[:, None] - k_ids[None, :]
    if bucket_size > 0 and max_position > 0:
        rel = make_log_bucket_position(rel, bucket_size, max_position)
    return rel.to(torch.long)[:query_size, :].unsqueeze(0)


class Embeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.word_embeddings = nn.Embedding(c.vocab_size, c.embedding_size, padding_idx=c.pad_token_id)
        if c.position_biased_input:
            self.position_embeddings = nn.Embedding(c.max_position_embeddings, c.embedding_size)
        if c.type_vocab_size > 0:
            self.token_type_embeddings = nn.Embedding(c.type_vocab_size, c.embedding_size)
        if c.embedding_size != c.hidden_size:
            self.embed_proj = nn.Linear(c.embedding_size, c.hidden_size, bias=False)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, c.layer_norm_eps)

    def forward(self, ids, mask):
        e = self.word_embeddings(ids)
        if self.c.position_biased_input:
            e = e + self.position_embeddings(torch.arange(ids.size(1)))[None]
        if self.c.type_vocab_size > 0:
            e = e + self.token_type_embeddings(torch.zeros_like(ids))
        if self.c.embedding_size != self.c.hidden_size:
            e = self.embed_proj(e)
        e = self.LayerNorm(e)
        return e * mask.unsqueeze(2).to(e.dtype)


class SelfAttn(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        h = c.hidden_size
        self.query_proj = nn.Linear(h, h)
        self.key_proj = nn.Linear(h, h)
        self.value_proj = nn.Linear(h, h)
        self.pos_ebd_size = c.position_buckets if c.position_buckets > 0 else c.max_relative_positions
        assert c.share_att_key

    def t(self, x):
        H = self.c.num_attention_heads
        x = x.view(x.size()[:-1] + (H, -1))
        return x.permute(0, 2, 1, 3).contiguous().view(-1, x.size(1), x.size(-1))

    def forward(self, x, amask, rel_pos, rel_emb):
        H = self.c.num_attention_heads
        q, k, v = self.t(self.query_proj(x)), self.t(self.key_proj(x)), self.t(self.value_proj(x))
        sf = 1 + len(self.c.pos_att_type)
        scale = torch.sqrt(torch.tensor(q.size(-1), dtype=torch.float) * sf)
        s = torch.bmm(q, k.transpose(-1, -2)) / torch.tensor(scale, dtype=q.dtype)
        span = self.pos_ebd_size
        rel_emb = rel_emb[0 : span * 2, :].unsqueeze(0)
        pq = self.t(self.query_proj(rel_emb)).repeat(q.size(0) // H, 1, 1)
        pk = self.t(self.key_proj(rel_emb)).repeat(q.size(0) // H, 1, 1)
        rel_pos = rel_pos.unsqueeze(1)
        score = 0
        if "c2p" in self.c.pos_att_type:
            c2p = torch.bmm(q, pk.transpose(-1, -2))
            c2p_pos = torch.clamp(rel_pos + span, 0, span * 2 - 1)
            c2p = torch.gather(c2p, dim=-1, index=c2p_pos.squeeze(0).expand([q.size(0), q.size(1), rel_pos.size(-1)]))
            score += c2p / torch.tensor(scale, dtype=c2p.dtype)
        if "p2c" in self.c.pos_att_type:
            p2c_pos = torch.clamp(-rel_pos + span, 0, span * 2 - 1)
            p2c = torch.bmm(k, pq.transpose(-1, -2))
            p2c = torch.gather(p2c, dim=-1, index=p2c_pos.squeeze(0).expand([q.size(0), k.size(-2), k.size(-2)])).transpose(-1, -2)
            score += p2c / torch.tensor(scale, dtype=p2c.dtype)
        s = (s + score).view(-1, H, s.size(-2), s.size(-1))
        # XSoftmax: masked entries get the float minimum, and are zeroed after
        # the softmax (so a padding query row attends to nothing).
        rmask = ~(amask.to(torch.bool))
        p = torch.softmax(s.masked_fill(rmask, torch.finfo(s.dtype).min), -1).masked_fill(rmask, 0)
        ctx = torch.bmm(p.view(-1, p.size(-2), p.size(-1)), v)
        ctx = ctx.view(-1, H, ctx.size(-2), ctx.size(-1)).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size()[:-2] + (-1,))


class DenseLN(nn.Module):
    def __init__(self, c, fin):
        super().__init__()
        self.dense = nn.Linear(fin, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, c.layer_norm_eps)

    def forward(self, x, res):
        return self.LayerNorm(self.dense(x) + res)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = SelfAttn(c)
        self.output = DenseLN(c, c.hidden_size)

    def forward(self, x, amask, rel_pos, rel_emb):
        return self.output(self.self(x, amask, rel_pos, rel_emb), x)


class Intermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.intermediate_size)

    def forward(self, x):
        return gelu(self.dense(x))


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = Attention(c)
        self.intermediate = Intermediate(c)
        self.output = DenseLN(c, c.intermediate_size)

    def forward(self, x, amask, rel_pos, rel_emb):
        a = self.attention(x, amask, rel_pos, rel_emb)
        return self.output(self.intermediate(a), a)


class Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.layer = nn.ModuleList([Layer(c) for _ in range(c.num_hidden_layers)])
        self.max_rel = c.max_relative_positions if c.max_relative_positions >= 1 else c.max_position_embeddings
        size = c.position_buckets * 2 if c.position_buckets > 0 else self.max_rel * 2
        self.rel_embeddings = nn.Embedding(size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, c.layer_norm_eps)

    def forward(self, x, mask):
        ext = mask.unsqueeze(1).unsqueeze(2)
        amask = (ext * ext.squeeze(-2).unsqueeze(-1)).byte()
        rel_pos = build_relative_position(x.size(1), x.size(1), self.c.position_buckets, self.max_rel)
        rel_emb = self.LayerNorm(self.rel_embeddings.weight)
        for l in self.layer:
            x = l(x, amask, rel_pos, rel_emb)
        return x


class Deberta(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = Embeddings(c)
        self.encoder = Encoder(c)

    def forward(self, ids, mask):
        return self.encoder(self.embeddings(ids, mask), mask)


class Pooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c.pooler_hidden_size, c.pooler_hidden_size)

    def forward(self, h):
        return gelu(self.dense(h[:, 0]))


class SeqCls(nn.Module):
    def __init__(self, c, labels):
        super().__init__()
        self.deberta = Deberta(c)
        self.pooler = Pooler(c)
        self.classifier = nn.Linear(c.pooler_hidden_size, labels)

    def forward(self, ids, mask):
        return self.classifier(self.pooler(self.deberta(ids, mask)))


c = Cfg(CONFIG)
model = SeqCls(c, 2)
# Larger than initializer_range, and LayerNorms off their identity, so that
# every path (the relative-position terms above all) moves the logits.
with torch.no_grad():
    for name, p in model.named_parameters():
        if "LayerNorm.weight" in name:
            p.copy_(1 + 0.2 * torch.randn_like(p))
        elif name.endswith(".bias"):
            p.copy_(0.1 * torch.randn_like(p))
        else:
            p.copy_(0.3 * torch.randn_like(p))
    model.deberta.embeddings.word_embeddings.weight[PAD].zero_()
model.eval()
qa_w, qa_b = 0.3 * torch.randn(2, c.hidden_size), 0.1 * torch.randn(2)

gen = torch.Generator().manual_seed(7)


def text(n):
    return [CLS] + torch.randint(3, c.vocab_size, (n - 2,), generator=gen).tolist() + [SEP]


# vocab.txt names every id (w4, w5, …; DeBERTa-v3's special tokens at 0-3)
# so that loader and CLI tests can give the ids as text to a WordPiece
# tokenizer: "w17 w200" is [CLS] 17 200 [SEP]; an unknown word is [UNK].
# (DeBERTa-v3's own tokenizer is its spm.model.)
VOCAB = ["[PAD]", "[CLS]", "[SEP]", "[UNK]"] + ["w%d" % i for i in range(4, c.vocab_size)]


def as_text(ids):
    return " ".join("qqq" if i == 3 else VOCAB[i] for i in ids[1:-1])


def batch(rows):
    L = max(len(r) for r in rows)
    ids = torch.tensor([r + [PAD] * (L - len(r)) for r in rows])
    mask = torch.tensor([[1] * len(r) + [0] * (L - len(r)) for r in rows])
    return ids, mask


def f32(x):
    return [float("%.9g" % float(v)) for v in x]  # float32 needs 9 digits


# 1. Logits of texts of different lengths in one padded batch (lengths past
# the bucket midpoint and past 2·position_buckets exercise the log buckets
# and the clamp), and the QA head's logits at every position.
lengths = [3, 5, 9, 17, 30, 47, 12, 4]
texts = [text(n) for n in lengths]
ids, mask = batch(texts)
with torch.no_grad():
    logits = model(ids, mask)
    hidden = model.deberta(ids, mask)
    qa = hidden @ qa_w.t() + qa_b
    for i, t in enumerate(texts):
        solo = model(*batch([t]))
        assert torch.allclose(solo, logits[i : i + 1], atol=1e-5), (solo, logits[i])
expected = {
    "note": "eval mode (no dropout); ids padded with 0 to the longest row; forward written from HF "
    "modeling_deberta_v2.py (XSoftmax version) in PyTorch 1.13, gradients by autograd",
    "texts": [{"text": as_text(t), "input_ids": t, "logits": f32(logits[i])} for i, t in enumerate(texts)],
    "qa": {
        "qa_outputs.weight": [f32(r) for r in qa_w],
        "qa_outputs.bias": f32(qa_b),
        "start_logits": [f32(r) for r in qa[:, :, 0]],
        "end_logits": [f32(r) for r in qa[:, :, 1]],
    },
}

# 2. BeLUGA's losses through the model, summed and back-propagated.
soft = [[1, 0], [0.5, 0.5], [0, 1], [1 / 3, 2 / 3], [1, 0], [0, 1], [0.5, 0.5], [1 / 3, 2 / 3]]
mft_texts = [text(n) for n in [6, 11, 25, 8, 14, 3, 19, 9]]
inv_orig = [text(n) for n in [7, 13, 5, 21]]
inv_pert = [text(n) for n in [9, 4, 16, 10]]
dir_orig = [text(n) for n in [12, 6, 18, 8]]
dir_pert = [text(n) for n in [5, 15, 7, 22]]
directions = ["not_less_0", "not_less_2", "not_less_conf", "not_more_conf"]

z = model(*batch(mft_texts))
y = torch.tensor(soft)
bce = nn.functional.binary_cross_entropy_with_logits(z, y)
ce = -(y * torch.log_softmax(z, -1)).sum(-1).mean()

zi = model(*batch(inv_orig + inv_pert))
po = torch.softmax(zi[:4], -1)
inv = -(po * torch.log_softmax(zi[4:], -1)).sum(-1).mean()

zd = model(*batch(dir_orig + dir_pert))
do, dp = torch.softmax(zd[:4], -1), torch.softmax(zd[4:], -1)
eps = []
for i, d in enumerate(directions):
    pred = int(torch.argmax(do[i]))
    col, sign = {"not_less_0": (0, -1), "not_less_2": (1, -1), "not_less_conf": (pred, -1), "not_more_conf": (pred, 1)}[d]
    eps.append(torch.relu(sign * (dp[i, col] - do[i, col])))
eps = torch.stack(eps)
dirl = (-torch.clamp(torch.log(1 - eps), min=-100)).mean()

total = bce + inv + dirl
total.backward()
expected["losses"] = {
    "mft": {"input_ids": mft_texts, "soft_labels": soft, "bce_with_logits": float(bce), "softmax_ce": float(ce)},
    "inv": {"orig": inv_orig, "pert": inv_pert, "loss": float(inv)},
    "dir": {"orig": dir_orig, "pert": dir_pert, "directions": directions, "eps": f32(eps.detach()), "loss": float(dirl)},
    "total": float(total),
}

# 3. The log-bucket table of deberta-v3-base itself (position_buckets 256,
# max_position 512) for every relative position a 512-token input has.
rel = torch.arange(-511, 512)
expected["buckets_v3_base"] = {
    "position_buckets": 256,
    "max_position": 512,
    "relative": [-511, 511],
    "bucket": [int(v) for v in make_log_bucket_position(rel, 256, 512).long()],
}
expected["buckets_fixture"] = [int(v) for v in build_relative_position(47, 47, c.position_buckets, 64)[0, 0]]


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous().float()
        b = t.numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


# An OrderedDict, as model.state_dict() is and as HF saves it.
state = collections.OrderedDict((k, v.detach().clone()) for k, v in model.state_dict().items())
write_safetensors("model.safetensors", state)
torch.save(state, "pytorch_model.bin")
# The word embeddings' gradient (the largest tensor) is kept as its norm and
# the rows of the first MFT text's ids; every other gradient whole.
word = "deberta.embeddings.word_embeddings.weight"
write_safetensors("expected_grads.safetensors", {n: p.grad for n, p in model.named_parameters() if n != word})
wg = model.deberta.embeddings.word_embeddings.weight.grad
rows = sorted(set(mft_texts[0]))
expected["losses"]["word_embeddings_grad"] = {"norm": float(wg.norm()), "ids": rows + [PAD], "rows": [f32(wg[i]) for i in rows + [PAD]]}
cfg = dict(CONFIG)
cfg["id2label"] = {"0": "NEGATIVE", "1": "POSITIVE"}
cfg["label2id"] = {"NEGATIVE": 0, "POSITIVE": 1}
with open("config.json", "w") as f:
    json.dump(cfg, f, indent=2)
    f.write("\n")
with open("vocab.txt", "w") as f:
    f.write("\n".join(VOCAB) + "\n")
with open("expected.json", "w") as f:
    json.dump(expected, f, separators=(",", ":"))
    f.write("\n")

try:
    from transformers import DebertaV2Config, DebertaV2ForQuestionAnswering, DebertaV2ForSequenceClassification
except ImportError:
    print("transformers not importable: checked against the PyTorch transcription only")
else:
    hf = DebertaV2ForSequenceClassification(DebertaV2Config(**cfg)).eval()
    missing, unexpected = hf.load_state_dict(state, strict=False)
    assert not unexpected and all("position_ids" in m for m in missing), (missing, unexpected)
    with torch.no_grad():
        got = hf(input_ids=ids, attention_mask=mask).logits
    assert torch.allclose(got, logits, atol=1e-5), (got - logits).abs().max()
    hq = DebertaV2ForQuestionAnswering(DebertaV2Config(**cfg)).eval()
    qs = {k: v for k, v in state.items() if not k.startswith(("pooler.", "classifier."))}
    qs["qa_outputs.weight"], qs["qa_outputs.bias"] = qa_w, qa_b
    hq.load_state_dict(qs, strict=False)
    with torch.no_grad():
        out = hq(input_ids=ids, attention_mask=mask)
    real = mask.bool()
    assert torch.allclose(out.start_logits[real], qa[:, :, 0][real], atol=1e-5)
    print("transformers agrees")
