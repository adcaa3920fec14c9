#!/usr/bin/python3
"""Writes the tiny ModernBERT fixture in tiny/: config.json, model.safetensors,
pytorch_model.bin, vocab.txt and expected.json.

The reference forward below is HuggingFace transformers' eager (padded,
non-flash) ModernBERT path, written out from modeling_modernbert.py at commit
000c33fdfde12e1ffafbfcdb3c926df5727a00b6 (ModernBertEmbeddings,
ModernBertEncoderLayer with ModernBertAttention's eager_attention_forward,
ModernBertRotaryEmbedding + apply_rotary_pos_emb, ModernBertMLP,
ModernBertModel._update_attention_mask, ModernBertPredictionHead,
ModernBertForSequenceClassification, ModernBertForQuestionAnswering), with
HuggingFace's parameter names. It runs in float64 on the float32 weights, so
that the expected values are the exact answer float32 code approximates.

When `transformers` is importable (it is not on the development machine,
torch 1.13 only), the state dict is also loaded into
ModernBertForSequenceClassification and ModernBertForQuestionAnswering with
attn_implementation="eager" and their logits are asserted equal to these.

Run: /usr/bin/python3 models/testdata/modernbert/generate.py
"""
import json
import math
import os
import struct
from collections import OrderedDict

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tiny")

CONFIG = {
    "architectures": ["ModernBertForSequenceClassification"],
    "model_type": "modernbert",
    "vocab_size": 128,
    "hidden_size": 32,
    "intermediate_size": 48,
    "num_hidden_layers": 3,
    "num_attention_heads": 2,
    "hidden_activation": "gelu",
    "max_position_embeddings": 64,
    "initializer_range": 0.02,
    "initializer_cutoff_factor": 2.0,
    "norm_eps": 1e-05,
    "layer_norm_eps": 1e-05,
    "norm_bias": False,
    "pad_token_id": 3,
    "bos_token_id": 1,
    "cls_token_id": 1,
    "eos_token_id": 2,
    "sep_token_id": 2,
    "attention_bias": False,
    "attention_dropout": 0.0,
    "global_attn_every_n_layers": 3,
    "global_rope_theta": 160000.0,
    "local_rope_theta": 10000.0,
    "local_attention": 4,
    "embedding_dropout": 0.0,
    "mlp_bias": False,
    "mlp_dropout": 0.0,
    "decoder_bias": True,
    "classifier_pooling": "cls",
    "classifier_dropout": 0.0,
    "classifier_bias": False,
    "classifier_activation": "gelu",
    "num_labels": 2,
    "tie_word_embeddings": True,
    "torch_dtype": "float32",
}
C = CONFIG
H, F_, L_, NH = C["hidden_size"], C["intermediate_size"], C["num_hidden_layers"], C["num_attention_heads"]
HD = H // NH
PAD, CLS, SEP = C["pad_token_id"], C["cls_token_id"], C["sep_token_id"]
FMIN = torch.finfo(torch.float32).min  # the model's dtype is float32


def param_shapes():
    out = [("model.embeddings.tok_embeddings.weight", [C["vocab_size"], H]),
           ("model.embeddings.norm.weight", [H])]
    for l in range(L_):
        p = "model.layers.%d." % l
        if l > 0:
            out.append((p + "attn_norm.weight", [H]))
        out += [(p + "attn.Wqkv.weight", [3 * H, H]), (p + "attn.Wo.weight", [H, H]),
                (p + "mlp_norm.weight", [H]),
                (p + "mlp.Wi.weight", [2 * F_, H]), (p + "mlp.Wo.weight", [H, F_])]
    out += [("model.final_norm.weight", [H]), ("head.dense.weight", [H, H]), ("head.norm.weight", [H]),
            ("classifier.weight", [C["num_labels"], H]), ("classifier.bias", [C["num_labels"]])]
    return out


def make_weights():
    g = torch.Generator().manual_seed(20241125)
    std = {"tok_embeddings": 1.0, "Wqkv": 0.3, "attn.Wo": 0.15, "Wi": 0.2, "mlp.Wo": 0.15,
           "head.dense": 0.2, "classifier.weight": 0.3, "classifier.bias": 0.1}
    sd = {}
    for name, shape in param_shapes():
        if name.endswith("norm.weight"):
            t = 1 + 0.1 * torch.randn(shape, generator=g)
        else:
            s = next(v for k, v in std.items() if k in name)
            t = s * torch.randn(shape, generator=g)
        sd[name] = t.float().contiguous()
    return sd


def layer_norm(x, w):
    # nn.LayerNorm(hidden, eps=norm_eps, bias=norm_bias) with norm_bias False
    return F.layer_norm(x, (H,), w, None, C["norm_eps"])


def rotary(theta, seq, dtype):
    # ModernBertRotaryEmbedding.compute_default_rope_parameters and forward
    inv_freq = 1.0 / (theta ** (torch.arange(0, HD, 2, dtype=torch.int64).float() / HD))
    pos = torch.arange(seq).float()
    freqs = torch.outer(pos, inv_freq.float())
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def masks(attn_mask, dtype):
    # ModernBertModel._update_attention_mask: _prepare_4d_attention_mask
    # (0 or the dtype's minimum per key), then the sliding window
    B, S = attn_mask.shape
    glob = (1.0 - attn_mask[:, None, None, :].to(dtype)).expand(B, 1, S, S) * FMIN
    rows = torch.arange(S).unsqueeze(0)
    distance = torch.abs(rows - rows.T)
    window = (distance <= C["local_attention"] // 2).unsqueeze(0).unsqueeze(0)
    sliding = glob.masked_fill(window.logical_not(), FMIN)
    return glob, sliding


def encoder(sd, ids, attn_mask, dtype=torch.float64):
    B, S = ids.shape
    w = {k: v.to(dtype) for k, v in sd.items()}
    x = F.embedding(ids, w["model.embeddings.tok_embeddings.weight"], padding_idx=PAD)
    x = layer_norm(x, w["model.embeddings.norm.weight"])
    glob, sliding = masks(attn_mask, dtype)
    rope = {"global": rotary(C["global_rope_theta"], S, dtype), "local": rotary(C["local_rope_theta"], S, dtype)}
    for l in range(L_):
        p = "model.layers.%d." % l
        local = l % C["global_attn_every_n_layers"] != 0
        a = x if l == 0 else layer_norm(x, w[p + "attn_norm.weight"])
        qkv = F.linear(a, w[p + "attn.Wqkv.weight"]).view(B, S, 3, NH, HD)
        q, k, v = qkv.transpose(3, 1).unbind(dim=2)
        cos, sin = rope["local" if local else "global"]
        cos, sin = cos[None, None], sin[None, None]
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        scores = torch.matmul(q, k.transpose(2, 3)) * HD ** -0.5
        scores = scores + (sliding if local else glob)
        probs = F.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2).contiguous().view(B, S, H)
        x = x + F.linear(ctx, w[p + "attn.Wo.weight"])
        m = layer_norm(x, w[p + "mlp_norm.weight"])
        inp, gate = F.linear(m, w[p + "mlp.Wi.weight"]).chunk(2, dim=-1)
        x = x + F.linear(F.gelu(inp) * gate, w[p + "mlp.Wo.weight"])
    return layer_norm(x, w["model.final_norm.weight"]), w


def head(w, h):
    # ModernBertPredictionHead: norm(act(dense(h))), classifier_bias False
    return layer_norm(F.gelu(F.linear(h, w["head.dense.weight"])), w["head.norm.weight"])


def seq_logits(sd, ids, attn_mask, pooling):
    hs, w = encoder(sd, ids, attn_mask)
    if pooling == "cls":
        pooled = hs[:, 0]
    else:
        m = attn_mask.to(hs.dtype)
        pooled = (hs * m.unsqueeze(-1)).sum(dim=1) / m.sum(dim=1, keepdim=True)
    return F.linear(head(w, pooled), w["classifier.weight"], w["classifier.bias"])


def qa_logits(sd, ids, attn_mask):
    hs, w = encoder(sd, ids, attn_mask)
    logits = F.linear(head(w, hs), w["classifier.weight"], w["classifier.bias"])
    return logits[..., 0], logits[..., 1]


def pad(seqs):
    S = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), S), PAD, dtype=torch.long)
    mask = torch.zeros((len(seqs), S), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s)
        mask[i, : len(s)] = 1
    return ids, mask


def text(g, n):
    return [CLS] + [int(t) for t in torch.randint(4, C["vocab_size"], (n - 2,), generator=g)] + [SEP]


def bce(z, y):
    return (y * F.softplus(-z) + (1 - y) * F.softplus(z)).mean()


def soft_ce(z, y):
    return -(y * F.log_softmax(z, dim=-1)).sum(-1).mean()


def inv(z):
    half = z.shape[0] // 2
    po, lp = F.softmax(z[:half], -1), F.log_softmax(z[half:], -1)
    return -(po * lp).sum(-1).mean()


def dir_loss(z, dirs):
    half = z.shape[0] // 2
    po, pp = F.softmax(z[:half], -1), F.softmax(z[half:], -1)
    terms = []
    for i, d in enumerate(dirs):
        pred = int(torch.argmax(po[i]))
        col, sign = {"not_less_0": (0, -1.0), "not_less_2": (1, -1.0),
                     "not_less_conf": (pred, -1.0), "not_more_conf": (pred, 1.0)}[d]
        eps = torch.relu(sign * (pp[i, col] - po[i, col]))
        terms.append(-torch.clamp(torch.log(1 - eps), min=-100))
    return torch.stack(terms).mean()


def r(x):
    return float("%.9g" % x)


def rl(t):
    return [r(v) for v in t.reshape(-1).tolist()]


def grads_of(sd, loss_fn):
    leaves = {k: v.clone().double().requires_grad_(True) for k, v in sd.items()}
    loss = loss_fn(leaves)
    loss.backward()
    return loss, {k: v.grad for k, v in leaves.items()}


def grad_summary(grads, sample=True):
    # every gradient's norm, whole gradients of the small tensors and (with
    # sample) a fixed sample of 24 entries of each matrix: the fixture stays
    # under 300 KB
    out = {"norms": {}, "full": {}, "sample": {}}
    g = torch.Generator().manual_seed(7)
    for name, _ in param_shapes():
        t = grads[name].reshape(-1)
        out["norms"][name] = r(t.norm())
        if t.numel() <= 64:
            out["full"][name] = rl(t)
        elif sample:
            idx = torch.randperm(t.numel(), generator=g)[:24].tolist()
            out["sample"][name] = {"index": idx, "value": [r(t[i]) for i in idx]}
    return out


def write_safetensors(path, sd):
    header, off, blobs = {}, 0, []
    for name in sorted(sd):
        b = sd[name].numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(sd[name].shape), "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def main():
    os.makedirs(OUT, exist_ok=True)
    sd = make_weights()
    g = torch.Generator().manual_seed(11)
    # lengths around the window (local_attention 4: two tokens either side)
    texts = [text(g, n) for n in (12, 7, 3, 10, 5)]
    ids, mask = pad(texts)
    exp = {"note": "reference forward/backward of HF transformers' eager ModernBERT "
                   "(modeling_modernbert.py @ 000c33fd), float64 on float32 weights, eval mode",
           "texts": texts}
    for pooling in ("cls", "mean"):
        exp["logits_" + pooling] = [rl(row) for row in seq_logits(sd, ids, mask, pooling)]
    st, en = qa_logits(sd, ids, mask)
    exp["qa_start"], exp["qa_end"] = [rl(row) for row in st], [rl(row) for row in en]

    # BeLUGA's losses (see losses/): MFT, INV, DIR batches, each padded to its longest
    soft = [[1, 0], [0.5, 0.5], [0, 1], [1 / 3, 2 / 3]] * 2
    mft = [text(g, n) for n in (9, 4, 13, 6, 8, 11, 3, 7)]
    inv_orig = [text(g, n) for n in (5, 10, 8, 12)]
    inv_pert = [text(g, n) for n in (6, 9, 8, 14)]
    dir_orig = [text(g, n) for n in (7, 11, 4, 9)]
    dir_pert = [text(g, n) for n in (8, 10, 5, 9)]
    dirs = ["not_less_0", "not_less_2", "not_less_conf", "not_more_conf"]
    y = torch.tensor(soft, dtype=torch.float64)
    losses = {"mft": {"texts": mft, "soft_labels": soft}, "inv": {"orig": inv_orig, "pert": inv_pert},
              "dir": {"orig": dir_orig, "pert": dir_pert, "directions": dirs}}
    for pooling in ("cls", "mean"):
        vals = {}

        def total(w):
            z = seq_logits(w, *pad(mft), pooling)
            vals["bce"], vals["ce"] = bce(z, y), soft_ce(z, y)
            vals["inv"] = inv(seq_logits(w, *pad(inv_orig + inv_pert), pooling))
            vals["dir"] = dir_loss(seq_logits(w, *pad(dir_orig + dir_pert), pooling), dirs)
            return vals["bce"] + vals["inv"] + vals["dir"]

        tot, grads = grads_of(sd, total)
        losses[pooling] = {"bce_with_logits": r(vals["bce"]), "softmax_ce": r(vals["ce"]),
                           "inv": r(vals["inv"]), "dir": r(vals["dir"]), "total": r(tot),
                           "grad": grad_summary(grads, pooling == "cls")}
    exp["losses"] = losses

    # READ: HF's QA loss (mean of the start and end cross-entropies over all positions)
    qa_batch = [text(g, n) for n in (11, 6, 9)]
    starts, ends = [2, 1, 4], [5, 3, 4]

    def qa_loss(w):
        s, e = qa_logits(w, *pad(qa_batch))
        return (F.cross_entropy(s, torch.tensor(starts)) + F.cross_entropy(e, torch.tensor(ends))) / 2

    ql, qg = grads_of(sd, qa_loss)
    exp["qa_loss"] = {"texts": qa_batch, "starts": starts, "ends": ends, "loss": r(ql), "grad": grad_summary(qg, False)}

    with open(os.path.join(OUT, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2, sort_keys=True)
        f.write("\n")
    write_safetensors(os.path.join(OUT, "model.safetensors"), sd)
    # HuggingFace saves an OrderedDict state dict
    torch.save(OrderedDict((k, sd[k]) for k, _ in param_shapes()), os.path.join(OUT, "pytorch_model.bin"))
    # a WordPiece vocabulary whose word "w<i>" is id i, so that
    # `beluga predict` can be fed the fixture's ids as text
    with open(os.path.join(OUT, "vocab.txt"), "w") as f:
        special = {0: "[UNK]", CLS: "[CLS]", SEP: "[SEP]", PAD: "[PAD]"}
        f.write("".join(special.get(i, "w%d" % i) + "\n" for i in range(C["vocab_size"])))
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(exp, f, separators=(",", ":"))
        f.write("\n")
    check_with_transformers(sd, ids, mask, exp)


def check_with_transformers(sd, ids, mask, exp):
    try:
        import transformers
    except ImportError:
        print("transformers not importable: the HF cross-check was skipped")
        return
    from transformers import (ModernBertConfig, ModernBertForQuestionAnswering,
                              ModernBertForSequenceClassification)
    for pooling in ("cls", "mean"):
        cfg = ModernBertConfig(**dict(CONFIG, classifier_pooling=pooling), attn_implementation="eager")
        m = ModernBertForSequenceClassification(cfg).eval()
        missing, unexpected = m.load_state_dict(sd, strict=False)
        assert not unexpected and all("inv_freq" in k for k in missing), (missing, unexpected)
        with torch.no_grad():
            got = m(input_ids=ids, attention_mask=mask).logits
        want = torch.tensor(exp["logits_" + pooling])
        assert torch.allclose(got, want.float(), atol=1e-5), (pooling, got, want)
    q = ModernBertForQuestionAnswering(ModernBertConfig(**CONFIG, attn_implementation="eager")).eval()
    q.load_state_dict(sd, strict=False)
    with torch.no_grad():
        out = q(input_ids=ids, attention_mask=mask)
    assert torch.allclose(out.start_logits, torch.tensor(exp["qa_start"]).float(), atol=1e-5)
    assert torch.allclose(out.end_logits, torch.tensor(exp["qa_end"]).float(), atol=1e-5)
    print("transformers %s agrees" % transformers.__version__)


if __name__ == "__main__":
    main()
