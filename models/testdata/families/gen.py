# Writes a randomly initialised tiny checkpoint of each BERT-like model
# family in HuggingFace's layout (config.json, model.safetensors,
# pytorch_model.bin, vocab.txt) with expected.json: logits, first-token
# states, span logits, BeLUGA's three losses and the gradients of their sum.
#
# transformers cannot be installed here, so the forward pass is written
# below from HuggingFace transformers' modeling files of the v4 series:
# modeling_distilbert.py read at commit 00b326f4caca2d1fbebe5c86e1693475fd4d0c9a
# (Embeddings, MultiHeadSelfAttention, FFN, TransformerBlock, the
# classification and QA heads); modeling_bert.py, modeling_electra.py
# (ElectraModel's embeddings_project, ElectraClassificationHead),
# modeling_roberta.py (create_position_ids_from_input_ids,
# RobertaClassificationHead) and modeling_xlm_roberta.py (a copy of
# RoBERTa's graph) as of the same series — dropout off (eval), the
# attention mask added as finfo(float32).min as HF does. When transformers
# IS importable, every family's state dict is also loaded into HF's own
# …ForSequenceClassification / …ForQuestionAnswering and the logits are
# asserted equal, so anyone with transformers can verify these files.
#
# Run: /usr/bin/python3 models/testdata/families/gen.py  (torch 1.13, CPU)
import collections
import json
import math
import os
import struct

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
H, FFN, LAYERS, HEADS, VOCAB = 32, 64, 2, 2, 256
WORDS = """the of and in to was he is as for on with that it his by at from her ##s she you had an were but be
this are not my they one which or have him me first all also their has up who out been when after there into new
two its ##a time would no what about said we over then other so more ##e can if like back them only some could ##i
where just ##ing during before ##n do ##o made school through than now years most world may between down well three
##d year while will ##ed ##r ##y later ##t city under around did such being used state people part know against
your many second university both national ##er these don known off way until re how even get head didn ##ly team
american because de ##l born united film since still long work south us became any high again day family see right
man eyes house season war states including took life north same each called name much place however go four group
another found won area here going 10 away series left home music best make hand number company several good bad
movie great a""".split()


def vocab(family):
    # RoBERTa's ids 0-3 are <s>, <pad>, </s>, <unk>: the fixture keeps pad
    # at 1 (positions then start at 2) with a WordPiece vocabulary.
    if family in ("roberta", "xlm-roberta"):
        special = ["[CLS]", "[PAD]", "[SEP]", "[UNK]", "[MASK]"]
    else:
        special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    v = special + WORDS
    assert len(v) <= VOCAB and len(set(v)) == len(v), len(v)
    return v + ["[unused%d]" % i for i in range(VOCAB - len(v))]


def config(family):
    common = {"vocab_size": VOCAB, "max_position_embeddings": 64, "initializer_range": 0.02,
              "id2label": {"0": "NEGATIVE", "1": "POSITIVE"}, "label2id": {"NEGATIVE": 0, "POSITIVE": 1}}
    bertish = dict(common, hidden_size=H, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                   intermediate_size=FFN, hidden_act="gelu", hidden_dropout_prob=0.1,
                   attention_probs_dropout_prob=0.1, type_vocab_size=2, layer_norm_eps=1e-12,
                   pad_token_id=0, classifier_dropout=None, position_embedding_type="absolute")
    if family == "bert":
        return dict(bertish, model_type="bert", architectures=["BertForSequenceClassification"])
    if family == "electra":
        return dict(bertish, model_type="electra", architectures=["ElectraForSequenceClassification"],
                    embedding_size=16, summary_type="first", summary_use_proj=True,
                    summary_activation="gelu", summary_last_dropout=0.1)
    if family in ("roberta", "xlm-roberta"):
        arch = "RobertaForSequenceClassification" if family == "roberta" else "XLMRobertaForSequenceClassification"
        return dict(bertish, model_type=family, architectures=[arch], type_vocab_size=1, layer_norm_eps=1e-5,
                    pad_token_id=1, bos_token_id=0, eos_token_id=2, max_position_embeddings=66)
    if family == "distilbert":
        return dict(common, model_type="distilbert", architectures=["DistilBertForSequenceClassification"],
                    dim=H, hidden_dim=FFN, n_layers=LAYERS, n_heads=HEADS, dropout=0.1, attention_dropout=0.1,
                    activation="gelu", qa_dropout=0.1, seq_classif_dropout=0.2, sinusoidal_pos_embds=False,
                    tie_weights_=True, pad_token_id=0)
    raise ValueError(family)


def prefix(family):
    return {"bert": "bert", "electra": "electra", "roberta": "roberta", "xlm-roberta": "roberta",
            "distilbert": "distilbert"}[family]


def shapes(family, cfg):
    """The …ForSequenceClassification state dict's names and shapes, in
    HuggingFace's order."""
    p = prefix(family)
    out = []
    lin = lambda n, i, o: out.extend([(n + ".weight", (o, i)), (n + ".bias", (o,))])
    ln = lambda n, h: out.extend([(n + ".weight", (h,)), (n + ".bias", (h,))])
    if family == "distilbert":
        out += [(p + ".embeddings.word_embeddings.weight", (VOCAB, H)),
                (p + ".embeddings.position_embeddings.weight", (cfg["max_position_embeddings"], H))]
        ln(p + ".embeddings.LayerNorm", H)
        for l in range(LAYERS):
            q = "%s.transformer.layer.%d." % (p, l)
            for n in ("q_lin", "k_lin", "v_lin", "out_lin"):
                lin(q + "attention." + n, H, H)
            ln(q + "sa_layer_norm", H)
            lin(q + "ffn.lin1", H, FFN)
            lin(q + "ffn.lin2", FFN, H)
            ln(q + "output_layer_norm", H)
        lin("pre_classifier", H, H)
        lin("classifier", H, 2)
        return out
    e = cfg.get("embedding_size", H)
    out += [(p + ".embeddings.word_embeddings.weight", (VOCAB, e)),
            (p + ".embeddings.position_embeddings.weight", (cfg["max_position_embeddings"], e)),
            (p + ".embeddings.token_type_embeddings.weight", (cfg["type_vocab_size"], e))]
    ln(p + ".embeddings.LayerNorm", e)
    if family == "electra":
        lin(p + ".embeddings_project", e, H)
    for l in range(LAYERS):
        q = "%s.encoder.layer.%d." % (p, l)
        for n in ("query", "key", "value"):
            lin(q + "attention.self." + n, H, H)
        lin(q + "attention.output.dense", H, H)
        ln(q + "attention.output.LayerNorm", H)
        lin(q + "intermediate.dense", H, FFN)
        lin(q + "output.dense", FFN, H)
        ln(q + "output.LayerNorm", H)
    if family == "bert":
        lin("bert.pooler.dense", H, H)
        lin("classifier", H, 2)
    else:
        lin("classifier.dense", H, H)
        lin("classifier.out_proj", H, 2)
    return out


def random_state(family, cfg, gen):
    sd = {}
    for name, shape in shapes(family, cfg):
        is_norm = "LayerNorm" in name or "layer_norm" in name
        if is_norm and name.endswith(".weight"):
            t = 1 + 0.1 * torch.randn(shape, generator=gen)
        elif name.endswith(".bias"):
            t = 0.05 * torch.randn(shape, generator=gen)
        else:
            t = 0.1 * torch.randn(shape, generator=gen)
        sd[name] = t.float().contiguous()
    return sd


def layer_norm(x, sd, name, eps):
    return F.layer_norm(x, x.shape[-1:], sd[name + ".weight"], sd[name + ".bias"], eps)


def linear(x, sd, name):
    return F.linear(x, sd[name + ".weight"], sd[name + ".bias"])


def attention(x, mask, sd, names, heads, distil):
    """BertSelfAttention (scores/√d) or DistilBERT's MultiHeadSelfAttention
    (q/√d first), softmax over keys with finfo.min on padding keys."""
    bs, L, h = x.shape
    d = h // heads
    q, k, v = (linear(x, sd, n).view(bs, L, heads, d).transpose(1, 2) for n in names[:3])
    if distil:
        scores = torch.matmul(q / math.sqrt(d), k.transpose(2, 3))
        scores = scores.masked_fill((mask == 0).view(bs, 1, 1, L).expand_as(scores), torch.finfo(scores.dtype).min)
    else:
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d)
        scores = scores + (1.0 - mask[:, None, None, :]) * torch.finfo(torch.float32).min
    probs = torch.softmax(scores, dim=-1)
    ctx = torch.matmul(probs, v).transpose(1, 2).reshape(bs, L, h)
    return linear(ctx, sd, names[3])


def roberta_positions(ids, pad):
    # create_position_ids_from_input_ids
    m = ids.ne(pad).int()
    return (torch.cumsum(m, dim=1).type_as(m) * m).long() + pad


def encoder(family, cfg, sd, ids, types, mask):
    p = prefix(family)
    L = ids.shape[1]
    if family == "distilbert":
        x = sd[p + ".embeddings.word_embeddings.weight"][ids] + sd[p + ".embeddings.position_embeddings.weight"][torch.arange(L)][None]
        x = layer_norm(x, sd, p + ".embeddings.LayerNorm", 1e-12)
        for l in range(LAYERS):
            q = "%s.transformer.layer.%d." % (p, l)
            a = attention(x, mask, sd, [q + "attention." + n for n in ("q_lin", "k_lin", "v_lin", "out_lin")], HEADS, True)
            x = layer_norm(a + x, sd, q + "sa_layer_norm", 1e-12)
            f = linear(F.gelu(linear(x, sd, q + "ffn.lin1")), sd, q + "ffn.lin2")
            x = layer_norm(f + x, sd, q + "output_layer_norm", 1e-12)
        return x
    eps = cfg["layer_norm_eps"]
    if family in ("roberta", "xlm-roberta"):
        pos = roberta_positions(ids, cfg["pad_token_id"])
        types = torch.zeros_like(ids)
    else:
        pos = torch.arange(L)[None].expand_as(ids)
    x = sd[p + ".embeddings.word_embeddings.weight"][ids] + sd[p + ".embeddings.token_type_embeddings.weight"][types]
    x = x + sd[p + ".embeddings.position_embeddings.weight"][pos]
    x = layer_norm(x, sd, p + ".embeddings.LayerNorm", eps)
    if family == "electra":
        x = linear(x, sd, p + ".embeddings_project")
    for l in range(LAYERS):
        q = "%s.encoder.layer.%d." % (p, l)
        a = attention(x, mask, sd, [q + "attention.self." + n for n in ("query", "key", "value")] + [q + "attention.output.dense"], HEADS, False)
        x = layer_norm(a + x, sd, q + "attention.output.LayerNorm", eps)
        f = linear(F.gelu(linear(x, sd, q + "intermediate.dense")), sd, q + "output.dense")
        x = layer_norm(f + x, sd, q + "output.LayerNorm", eps)
    return x


def classify(family, sd, hidden):
    x = hidden[:, 0]
    if family == "bert":
        return linear(torch.tanh(linear(x, sd, "bert.pooler.dense")), sd, "classifier")
    if family == "distilbert":
        return linear(torch.relu(linear(x, sd, "pre_classifier")), sd, "classifier")
    act = F.gelu if family == "electra" else torch.tanh
    return linear(act(linear(x, sd, "classifier.dense")), sd, "classifier.out_proj")


def pad_batch(rows, pad):
    L = max(len(r[0]) for r in rows)
    ids = torch.full((len(rows), L), pad, dtype=torch.long)
    types = torch.zeros((len(rows), L), dtype=torch.long)
    mask = torch.zeros((len(rows), L))
    for i, (a, t) in enumerate(rows):
        ids[i, :len(a)] = torch.tensor(a)
        types[i, :len(a)] = torch.tensor(t)
        mask[i, :len(a)] = 1
    return ids, types, mask


def encode(v, words, pair=None):
    idx = {w: i for i, w in enumerate(v)}
    a = [idx["[CLS]"]] + [idx[w] for w in words.split()] + [idx["[SEP]"]]
    t = [0] * len(a)
    if pair:
        b = [idx[w] for w in pair.split()] + [idx["[SEP]"]]
        a, t = a + b, t + [1] * len(b)
    return a, t


MFT = [("the movie was good", None), ("it is not a bad film", None), ("great", None),
       ("she had the best time of her life in the city", None)]
SOFT = [[0.0, 1.0], [0.3, 0.7], [1.0, 0.0], [0.5, 0.5]]
INV_O = [("the film was good", None), ("he is not bad", None)]
INV_P = [("the movie was good", None), ("she is not bad", None)]
DIR_O = [("a good film", None), ("the team won", "was it good")]
DIR_P = [("a good film but not great", None), ("the team won again", "was it good")]
DIRS = ["not_less_2", "not_more_conf"]
SPAN = [("who won the war", "the united states won the war in the north"), ("where is the school", "the school is in the city")]


def losses(family, cfg, sd, v):
    pad = cfg["pad_token_id"]
    run = lambda rows: classify(family, sd, encoder(family, cfg, sd, *pad_batch([encode(v, a, b) for a, b in rows], pad)))
    z = run(MFT)
    mft = F.binary_cross_entropy_with_logits(z, torch.tensor(SOFT))
    z = run(INV_O + INV_P)
    inv = F.cross_entropy(z[2:], torch.softmax(z[:2], -1))
    z = run(DIR_O + DIR_P)
    po, pp = torch.softmax(z[:2], -1), torch.softmax(z[2:], -1)
    errs = []
    for i, d in enumerate(DIRS):
        pred = int(po[i].argmax())
        col, sign = {"not_less_0": (0, -1), "not_less_2": (1, -1), "not_less_conf": (pred, -1), "not_more_conf": (pred, 1)}[d]
        errs.append(torch.relu(sign * (pp[i, col] - po[i, col])))
    dirl = F.binary_cross_entropy(torch.stack(errs), torch.zeros(2))
    return mft, inv, dirl


def save_safetensors(path, sd):
    header, blobs, off = {}, [], 0
    for name in sd:
        b = sd[name].detach().contiguous().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(sd[name].shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def r(t):
    return [round(float(x), 8) for x in t.detach().flatten().tolist()]


def check_with_transformers(family, cfg, sd, qa, ids, types, mask, logits, start, end):
    try:
        import transformers
    except ImportError:
        return "transformers not importable: the reference is the forward written above"
    names = {"bert": "Bert", "electra": "Electra", "roberta": "Roberta", "xlm-roberta": "XLMRoberta", "distilbert": "DistilBert"}[family]
    conf = getattr(transformers, names + "Config")(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
    kw = {} if family in ("distilbert", "roberta", "xlm-roberta") else {"token_type_ids": types}
    m = getattr(transformers, names + "ForSequenceClassification")(conf).eval()
    missing, unexpected = m.load_state_dict(sd, strict=False)
    assert not [k for k in missing if "position_ids" not in k] and not unexpected, (missing, unexpected)
    hf = m(input_ids=ids, attention_mask=mask.long(), **kw).logits
    assert torch.allclose(hf, logits, atol=1e-5), (hf, logits)
    q = getattr(transformers, names + "ForQuestionAnswering")(conf).eval()
    enc = {k: v for k, v in sd.items() if k.startswith(prefix(family) + ".") and ".pooler." not in k}
    missing, unexpected = q.load_state_dict(dict(enc, **qa), strict=False)
    assert not [k for k in missing if "position_ids" not in k] and not unexpected, (missing, unexpected)
    out = q(input_ids=ids, attention_mask=mask.long(), **kw)
    keep = mask.bool()
    assert torch.allclose(out.start_logits[keep], start[keep], atol=1e-5)
    assert torch.allclose(out.end_logits[keep], end[keep], atol=1e-5)
    return "checked against transformers %s: logits and span logits within 1e-5" % transformers.__version__


def main():
    for seed, family in enumerate(["bert", "electra", "roberta", "xlm-roberta", "distilbert"]):
        gen = torch.Generator().manual_seed(100 + seed)
        cfg, v = config(family), vocab(family)
        sd = random_state(family, cfg, gen)
        qa = {"qa_outputs.weight": (0.1 * torch.randn((2, H), generator=gen)).float(),
              "qa_outputs.bias": (0.05 * torch.randn((2,), generator=gen)).float()}
        out = os.path.join(HERE, family)
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2, sort_keys=True)
            f.write("\n")
        with open(os.path.join(out, "vocab.txt"), "w") as f:
            f.write("\n".join(v) + "\n")
        save_safetensors(os.path.join(out, "model.safetensors"), sd)
        torch.save(collections.OrderedDict(sd), os.path.join(out, "pytorch_model.bin"))

        pad = cfg["pad_token_id"]
        rows = [encode(v, a, b) for a, b in MFT + DIR_O[1:] + SPAN]
        ids, types, mask = pad_batch(rows, pad)
        with torch.no_grad():
            hidden = encoder(family, cfg, sd, ids, types, mask)
            logits = classify(family, sd, hidden)
            span = F.linear(hidden, qa["qa_outputs.weight"], qa["qa_outputs.bias"])
            start, end = span[..., 0], span[..., 1]
        note = check_with_transformers(family, cfg, sd, qa, ids, types, mask, logits, start, end)

        params = {k: t.clone().requires_grad_(True) for k, t in sd.items()}
        mft, inv, dirl = losses(family, cfg, params, v)
        (mft + inv + dirl).backward()
        grads = {"norms": {k: float(t.grad.norm()) for k, t in params.items()}}
        for k, t in params.items():
            if t.numel() <= 2 * H or k.endswith("embeddings.LayerNorm.weight"):
                grads[k] = r(t.grad)

        # The span model's backward: d(loss)/d(start, end logits) fixed, zero
        # on padding, through qa_outputs and the encoder.
        sparams = {k: t.clone().requires_grad_(True) for k, t in sd.items()}
        qparams = {k: t.clone().requires_grad_(True) for k, t in qa.items()}
        sids, stypes, smask = pad_batch([encode(v, a, b) for a, b in SPAN], pad)
        sh = encoder(family, cfg, sparams, sids, stypes, smask)
        sl = F.linear(sh, qparams["qa_outputs.weight"], qparams["qa_outputs.bias"])
        coef = torch.randn(sl.shape, generator=gen) * smask[..., None]
        (sl * coef).sum().backward()
        span_grad = {"d_start": r(coef[..., 0]), "d_end": r(coef[..., 1]),
                     "norms": {k: float(t.grad.norm()) for k, t in list(sparams.items()) + list(qparams.items()) if t.grad is not None},
                     "qa_outputs.weight": r(qparams["qa_outputs.weight"].grad)}

        exp = {
            "family": family, "note": note,
            "inputs": [{"input_ids": a, "token_type_ids": t} for a, t in rows],
            "logits": [r(x) for x in logits], "first_hidden": [r(x) for x in hidden[:, 0]],
            "span": {"qa_outputs.weight": r(qa["qa_outputs.weight"]), "qa_outputs.bias": r(qa["qa_outputs.bias"]),
                     "start": [r(s[m.bool()]) for s, m in zip(start, mask)],
                     "end": [r(e[m.bool()]) for e, m in zip(end, mask)],
                     "batch": [{"input_ids": a, "token_type_ids": t} for a, t in (encode(v, a, b) for a, b in SPAN)],
                     "grad": span_grad},
            "losses": {"mft": {"texts": [a for a, _ in MFT], "soft_labels": SOFT, "bce_with_logits": float(mft)},
                       "inv": {"orig": [a for a, _ in INV_O], "pert": [a for a, _ in INV_P], "loss": float(inv)},
                       "dir": {"orig": DIR_O, "pert": DIR_P, "directions": DIRS, "loss": float(dirl)},
                       "total": float(mft + inv + dirl), "grad": grads},
        }
        with open(os.path.join(out, "expected.json"), "w") as f:
            json.dump(exp, f, indent=1)
            f.write("\n")
        print(family, note, "logits[0]", r(logits[0]))


if __name__ == "__main__":
    main()
