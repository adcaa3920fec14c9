# Writes random tiny decoder checkpoints exactly as HuggingFace transformers'
# own save_pretrained writes them, and expected.json: what transformers' own
# modeling code computes on them.
#
#   gpt2/           GPT2LMHeadModel.save_pretrained(): pytorch_model.bin, with
#                   the slow GPT2Tokenizer's vocab.json and merges.txt and a
#                   tokenizer.json written as transformers' GPT2Converter
#                   writes it (the tokenizers library is not installed)
#   gpt2-sharded/   the same weights, save_pretrained(safe_serialization=True,
#                   max_shard_size="100KB"): model.safetensors.index.json + shards
#   llama/          LlamaForCausalLM (grouped-query attention: 4 query heads,
#                   2 key/value heads; untied lm_head), model.safetensors
#   qwen2/          Qwen2ForCausalLM (q/k/v biases, tied embeddings, rope θ 1e6)
#
# expected.json, per family: the token ids of TEXTS (the slow tokenizer's), the
# base model's final hidden states at every real token of a right-padded and
# of a left-padded batch (attention mask; the left-padded one with
# position_ids = cumsum(mask) − 1, as generate() passes them), the causal
# LM's log-probability of every next token, the …ForSequenceClassification's
# logits (score head drawn here, in expected.json) on the right-padded batch,
# and BeLUGA's MFT, INV and DIR losses through that classifier with the
# gradients of their sum (torch autograd on transformers' graph).
#
# transformers cannot be installed here. GPT-2 runs on transformers 4.27.1's
# own source tree (the public snapshot xiaojunjun65/transformers-mlu_4.27.1,
# upstream plus `import torch_mlu`), Llama and Qwen2 on 4.40.0.dev0's (the
# public snapshot bozheng-hit/transformers at d9dc993, the last series whose
# Llama/Qwen2 run on Debian's torch 1.13), both unmodified, with the stubs of
# ../hfsaved/gen.py (torch_mlu, huggingface_hub, filelock, tqdm, regex's GPT-2
# pattern, safetensors' file format) and torch.mlu read as torch.cuda (4.27.1's
# modeling_gpt2.py imports autocast from it) — attn_implementation "eager".
#
# Run: /usr/bin/python3 models/testdata/decoders/gen.py gpt2 TRANSFORMERS_4_27_1_SRC ROBERTA_TOKENIZER_DIR
#      /usr/bin/python3 models/testdata/decoders/gen.py llama TRANSFORMERS_4_40_SRC
#   ROBERTA_TOKENIZER_DIR: FacebookAI__roberta-base's vocab.json and merges.txt
#   (GPT-2's byte-level BPE), cut down here to the tokens TEXTS need.
import collections
import importlib.util
import json
import os
import shutil
import sys
import tempfile

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("hfsaved_gen", os.path.join(HERE, "..", "hfsaved", "gen.py"))
hs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hs)

# Texts written for this fixture (no dataset is committed).
TEXTS = [
    "The movie was good.",
    "It's not a bad film, is it?",
    "Great",
    "She had the best time of her life in 1999 -- really!",
    "I don't think they'll like it",
    "  two spaces and\ttabs",
    "The team won the war",
    "A good film but not great",
]
MFT = [0, 1, 2, 3]
SOFT = [[0.0, 1.0], [0.3, 0.7], [1.0, 0.0], [0.5, 0.5]]
INV = ([0, 6], [7, 4])  # originals, perturbations
DIR = ([7, 6], [1, 3], ["not_less_2", "not_more_conf"])
H, LAYERS, HEADS, KV_HEADS, FFN, MAX_POS = 32, 2, 4, 2, 48, 64


def gpt2_bpe_vocab(src, out):
    """roberta-base's byte-level BPE (GPT-2's merges) cut to TEXTS: the 256
    byte symbols, every token the texts need and the tokens their merges pass
    through, the merges among those in order, and <|endoftext|> last."""
    from transformers import GPT2Tokenizer
    full = GPT2Tokenizer(os.path.join(src, "vocab.json"), os.path.join(src, "merges.txt"))
    with open(os.path.join(src, "merges.txt"), encoding="utf-8") as f:
        merges = [tuple(line.split()) for line in f.read().split("\n")[1:] if line]
    made_by = {a + b: (a, b) for a, b in merges}
    need = set()

    def add(tok):
        if tok in need:
            return
        need.add(tok)
        if tok in made_by:
            add(made_by[tok][0])
            add(made_by[tok][1])

    for t in TEXTS:
        for tok in full.tokenize(t):
            add(tok)
    byte_syms = list(full.byte_encoder.values())
    rest = sorted((t for t in need if t not in byte_syms), key=lambda t: full.encoder[t])
    vocab = {t: i for i, t in enumerate(byte_syms + rest + ["<|endoftext|>"])}
    kept = [(a, b) for a, b in merges if a in vocab and b in vocab and a + b in vocab]
    with open(os.path.join(out, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(out, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join("%s %s\n" % m for m in kept))
    sub = GPT2Tokenizer(os.path.join(out, "vocab.json"), os.path.join(out, "merges.txt"))
    for t in TEXTS:
        assert sub.tokenize(t) == full.tokenize(t), t
    # tokenizer.json as transformers' GPT2Converter writes it.
    doc = {"version": "1.0", "truncation": None, "padding": None,
           "added_tokens": [{"id": vocab["<|endoftext|>"], "content": "<|endoftext|>", "single_word": False,
                             "lstrip": False, "rstrip": False, "normalized": True, "special": True}],
           "normalizer": None,
           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
           "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
           "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
           "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                     "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
                     "vocab": vocab, "merges": ["%s %s" % m for m in kept]}}
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False)
    return sub, len(vocab)


def randomise(model, seed):
    """HF's initialiser (std 0.02) leaves every output near 0, where any
    forward pass agrees: draw the weights wider."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            r = torch.randn(p.shape, generator=g)
            if ("ln" in name or "norm" in name) and name.endswith(".weight"):
                p.copy_(1 + 0.1 * r)
            elif name.endswith(".bias"):
                p.copy_(0.05 * r)
            else:
                p.copy_(0.15 * r)


def pad(rows, pad_id, left=False):
    L = max(len(r) for r in rows)
    ids = torch.full((len(rows), L), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), L), dtype=torch.long)
    for i, r in enumerate(rows):
        s = L - len(r) if left else 0
        ids[i, s:s + len(r)] = torch.tensor(r)
        mask[i, s:s + len(r)] = 1
    return ids, mask


def positions(mask):
    p = mask.cumsum(-1) - 1
    return p.masked_fill(mask == 0, 1)


def rnd(t):
    return [round(float(x), 8) for x in t.detach().flatten().tolist()]


def losses(cls_model, rows, pad_id):
    def run(idx):
        ids, mask = pad([rows[i] for i in idx], pad_id)
        return cls_model(input_ids=ids, attention_mask=mask).logits

    z = run(MFT)
    mft = F.binary_cross_entropy_with_logits(z, torch.tensor(SOFT))
    z = run(INV[0] + INV[1])
    inv = F.cross_entropy(z[2:], torch.softmax(z[:2], -1))
    z = run(DIR[0] + DIR[1])
    po, pp = torch.softmax(z[:2], -1), torch.softmax(z[2:], -1)
    errs = []
    for i, d in enumerate(DIR[2]):
        pred = int(po[i].argmax())
        col, sign = {"not_less_2": (1, -1), "not_more_conf": (pred, 1)}[d]
        errs.append(torch.relu(sign * (pp[i, col] - po[i, col])))
    dirl = F.binary_cross_entropy(torch.stack(errs), torch.zeros(2))
    return mft, inv, dirl


def expected(family, lm, cls_model, base, rows, pad_id):
    import transformers
    e = {"family": family, "transformers_version": transformers.__version__, "torch_version": torch.__version__,
         "texts": TEXTS, "input_ids": rows, "pad_token_id": pad_id}
    with torch.no_grad():
        ids, mask = pad(rows, pad_id)
        hr = base(input_ids=ids, attention_mask=mask).last_hidden_state
        lids, lmask = pad(rows, pad_id, left=True)
        hl = base(input_ids=lids, attention_mask=lmask, position_ids=positions(lmask)).last_hidden_state
        logp = torch.log_softmax(lm(input_ids=ids, attention_mask=mask).logits, -1)
        e["hidden_right"] = [rnd(hr[i, :len(r)]) for i, r in enumerate(rows)]
        e["hidden_left"] = [rnd(hl[i, hl.shape[1] - len(r):]) for i, r in enumerate(rows)]
        e["next_logprobs"] = [[round(float(logp[i, t, r[t + 1]]), 8) for t in range(len(r) - 1)] for i, r in enumerate(rows)]
        e["logits"] = [rnd(x) for x in cls_model(input_ids=ids, attention_mask=mask).logits]
    e["score.weight"] = rnd(cls_model.score.weight)
    params = dict(cls_model.named_parameters())
    mft, inv, dirl = losses(cls_model, rows, pad_id)
    (mft + inv + dirl).backward()
    grads = {"norms": {k: float(p.grad.norm()) for k, p in params.items()}}
    for k, p in params.items():
        if p.numel() <= 2 * H:
            grads[k] = rnd(p.grad)
    e["losses"] = {"mft": {"rows": MFT, "soft_labels": SOFT, "bce_with_logits": float(mft)},
                   "inv": {"orig": INV[0], "pert": INV[1], "loss": float(inv)},
                   "dir": {"orig": DIR[0], "pert": DIR[1], "directions": DIR[2], "loss": float(dirl)},
                   "total": float(mft + inv + dirl), "grad": grads}
    return e


def write(family, e):
    with open(os.path.join(HERE, family, "expected.json"), "w") as f:
        json.dump(e, f, indent=1)
        f.write("\n")


def gpt2(tok_src):
    import transformers as T
    assert T.__version__ == "4.27.1", T.__version__
    work = tempfile.mkdtemp()
    tok, vocab_size = gpt2_bpe_vocab(tok_src, work)
    eos = vocab_size - 1
    rows = [tok(t)["input_ids"] for t in TEXTS]
    cfg = T.GPT2Config(vocab_size=vocab_size, n_positions=MAX_POS, n_embd=H, n_layer=LAYERS, n_head=HEADS,
                       bos_token_id=eos, eos_token_id=eos, pad_token_id=eos,
                       id2label={0: "NEGATIVE", 1: "POSITIVE"}, label2id={"NEGATIVE": 0, "POSITIVE": 1})
    torch.manual_seed(7)
    lm = T.GPT2LMHeadModel(cfg)
    randomise(lm, 8)
    lm.eval()
    out = os.path.join(HERE, "gpt2")
    shutil.rmtree(out, ignore_errors=True)
    lm.save_pretrained(out)
    tok.save_pretrained(out)
    for f in ("vocab.json", "merges.txt", "tokenizer.json"):
        shutil.copy(os.path.join(work, f), os.path.join(out, f))
    sh = os.path.join(HERE, "gpt2-sharded")
    shutil.rmtree(sh, ignore_errors=True)
    lm.save_pretrained(sh, safe_serialization=True, max_shard_size="100KB")
    again = T.GPT2LMHeadModel.from_pretrained(sh).eval()
    ids, mask = pad(rows, eos)
    with torch.no_grad():
        assert torch.equal(again(input_ids=ids, attention_mask=mask).logits, lm(input_ids=ids, attention_mask=mask).logits)
    cls_model = T.GPT2ForSequenceClassification(cfg)
    cls_model.transformer.load_state_dict(lm.transformer.state_dict())
    torch.manual_seed(9)
    with torch.no_grad():
        cls_model.score.weight.normal_(0, 0.3)
    cls_model.eval()
    write("gpt2", expected("gpt2", lm, cls_model, lm.transformer, rows, eos))
    with open(os.path.join(HERE, "gpt2", "expected.json")) as f:
        e = json.load(f)
    # the slow tokenizer's ids of the texts and of one pair (GPT-2 joins a
    # pair without a separator)
    e["tokenizer"] = {"pair": [TEXTS[0], TEXTS[2]], "pair_ids": tok(TEXTS[0], TEXTS[2])["input_ids"]}
    write("gpt2", e)
    print("gpt2: vocab", vocab_size, "rows", [len(r) for r in rows])
    return rows, vocab_size


def llama(src_rows):
    import transformers as T
    assert T.__version__.startswith("4.40"), T.__version__
    with open(os.path.join(HERE, "gpt2", "expected.json")) as f:
        g = json.load(f)
    rows = g["input_ids"]
    vocab_size = g["pad_token_id"] + 1
    common = dict(vocab_size=vocab_size, hidden_size=H, intermediate_size=FFN, num_hidden_layers=LAYERS,
                  num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, max_position_embeddings=MAX_POS,
                  bos_token_id=0, eos_token_id=vocab_size - 1, pad_token_id=vocab_size - 1,
                  id2label={0: "NEGATIVE", 1: "POSITIVE"}, label2id={"NEGATIVE": 0, "POSITIVE": 1},
                  attn_implementation="eager")
    for seed, (family, cfg, lmc, clc) in enumerate([
            ("llama", T.LlamaConfig(rms_norm_eps=1e-6, rope_theta=10000.0, tie_word_embeddings=False, **common),
             T.LlamaForCausalLM, T.LlamaForSequenceClassification),
            ("qwen2", T.Qwen2Config(rms_norm_eps=1e-5, rope_theta=1000000.0, tie_word_embeddings=True,
                                    use_sliding_window=False, **common),
             T.Qwen2ForCausalLM, T.Qwen2ForSequenceClassification)], start=20):
        torch.manual_seed(seed)
        lm = lmc(cfg)
        randomise(lm, seed + 1)
        lm.eval()
        out = os.path.join(HERE, family)
        shutil.rmtree(out, ignore_errors=True)
        lm.save_pretrained(out)
        again = lmc.from_pretrained(out, attn_implementation="eager").eval()
        ids, mask = pad(rows, vocab_size - 1)
        with torch.no_grad():
            assert torch.equal(again(input_ids=ids, attention_mask=mask).logits, lm(input_ids=ids, attention_mask=mask).logits)
        cls_model = clc(cfg)
        cls_model.model.load_state_dict(lm.model.state_dict())
        torch.manual_seed(seed + 2)
        with torch.no_grad():
            cls_model.score.weight.normal_(0, 0.3)
        cls_model.eval()
        write(family, expected(family, lm, cls_model, lm.model, rows, vocab_size - 1))
        print(family, "ok")


def install(src):
    """Makes the transformers source tree src importable here (stubs and
    shims above); returns the transformers module."""
    stub_dir = tempfile.mkdtemp()
    hs.install_stubs(src, stub_dir)
    # 4.40's modeling_utils finds tied tensors with safetensors.torch's
    # storage_ptr and storage_size (safetensors' own definitions).
    with open(os.path.join(stub_dir, "safetensors", "torch.py"), "a") as f:
        f.write("def storage_ptr(t):\n    return t.storage().data_ptr()\n\n\n"
                "def storage_size(t):\n    return t.storage().nbytes()\n")
    # The 4.27.1 snapshot's modeling_gpt2.py imports autocast from
    # torch.mlu.amp where upstream has torch.cuda.amp: the same module.
    import torch.cuda.amp
    sys.modules["torch.mlu"], sys.modules["torch.mlu.amp"] = torch.cuda, torch.cuda.amp
    # 4.40 reads huggingface_hub's cache locations at import time: give the
    # stub real paths (nothing is downloaded; every load is local).
    import huggingface_hub.constants as hc
    cache = tempfile.mkdtemp()
    hc.HF_HOME, hc.HF_HUB_CACHE, hc.default_cache_path = cache, cache, cache
    hc.HF_HUB_DISABLE_TELEMETRY, hc.HF_HUB_OFFLINE = True, True
    import transformers.utils.import_utils as iu
    # 4.40 asks the package metadata, which the stub has none of.
    iu._safetensors_available = True
    import transformers.tokenization_utils_base as tub
    tub.AddedToken.__str__ = lambda self: self.content
    import transformers
    return transformers


def main():
    which, src = sys.argv[1], sys.argv[2]
    install(src)
    if which == "gpt2":
        gpt2(sys.argv[3])
    elif which == "llama":
        llama(None)
    else:
        sys.exit("usage: gen.py gpt2 SRC TOKENIZER_DIR | gen.py llama SRC")


if __name__ == "__main__":
    main()
