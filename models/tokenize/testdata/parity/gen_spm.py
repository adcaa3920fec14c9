"""gen_spm.py writes the parity goldens of SentencePiece tokenizers with
Google's sentencepiece (0.1.97, Debian's python3-sentencepiece), wrapped as
HuggingFace's slow tokenizers wrap it:

- DebertaV2Tokenizer: [CLS] a [SEP] (b [SEP]), ids as sentencepiece gives them;
- XLMRobertaTokenizer: <s>=0 <pad>=1 </s>=2 <unk>=3, a piece's id + 1 (the
  unknown piece, id 0, becomes 3), <s> a </s></s> b </s>.

XLM-R's own model is not available here, so the XLM-R wrapping is checked on
two small models trained here (--train: unigram and BPE, 1,000 pieces, from
the corpus's texts, one thread so that training is deterministic).

    BELUGA_WRITE_PARITY_CORPUS=/tmp/tokref/corpus.jsonl go test -run TestParity ./models/tokenize
    /usr/bin/python3 testdata/parity/gen_spm.py --train /tmp/tokref/corpus.jsonl   # once: the small models
    /usr/bin/python3 testdata/parity/gen_spm.py /tmp/tokref/corpus.jsonl deberta-v3=$SHARED/data/tokenizers/microsoft__deberta-v3-base/spm.model

Golden format: see gen.mjs.
"""
import gzip
import json
import os
import struct
import sys

import sentencepiece as spm

HERE = os.path.dirname(os.path.abspath(__file__))


def fnv32(ids):
    h = 0x811C9DC5
    for i in ids:
        for b in struct.pack("<I", i & 0xFFFFFFFF):
            h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def fnv64(data, h):
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def corpus_hash(corpus):
    h = 0xCBF29CE484222325
    for x in corpus:
        t, p = x["text"], x.get("pair", "")
        s = "%d:%s|%d:%s|%s\n" % (len(t.encode()), t, len(p.encode()), p, "true" if x.get("is_pair") else "false")
        h = fnv64(s.encode(), h)
    return h


def deberta(sp):
    cls, sep = sp.PieceToId("[CLS]"), sp.PieceToId("[SEP]")

    def enc(a, b):
        ids = [cls] + sp.encode(a) + [sep]
        if b is not None:
            ids += sp.encode(b) + [sep]
        return ids

    return enc


def xlmr(sp):
    def conv(ids):
        return [i + 1 if i else 3 for i in ids]

    def enc(a, b):
        ids = [0] + conv(sp.encode(a)) + [2]
        if b is not None:
            ids += [2] + conv(sp.encode(b)) + [2]
        return ids

    return enc


def main():
    args = sys.argv[1:]
    train = args and args[0] == "--train"
    if train:
        args = args[1:]
    corpus = [json.loads(l) for l in open(args[0], encoding="utf-8") if l.strip()]
    if train:
        path = "/tmp/spm_train.txt"
        with open(path, "w", encoding="utf-8") as f:
            for x in corpus[:12000]:
                for t in (x["text"], x.get("pair", "")):
                    t = " ".join(t.split())
                    if t:
                        f.write(t + "\n")
        # BPE with XLM-R's NFKC charsmap; unigram without one (DeBERTa's
        # model checks the unigram charsmap path), which keeps it small.
        for kind, rule in (("unigram", "identity"), ("bpe", "nmt_nfkc")):
            spm.SentencePieceTrainer.train(input=path, model_prefix=os.path.join(HERE, "small-" + kind),
                                           vocab_size=1000, model_type=kind, num_threads=1,
                                           character_coverage=0.995, normalization_rule_name=rule,
                                           minloglevel=2)
            os.remove(os.path.join(HERE, "small-" + kind + ".vocab"))
        specs = ["small-unigram-xlmr=" + os.path.join(HERE, "small-unigram.model"),
                 "small-bpe-xlmr=" + os.path.join(HERE, "small-bpe.model")]
    else:
        specs = args[1:]
    ch = corpus_hash(corpus)
    for spec in specs:
        name, path = spec.split("=", 1)
        sp = spm.SentencePieceProcessor(model_file=path)
        enc = xlmr(sp) if name.endswith("-xlmr") else deberta(sp)
        out = struct.pack("<QI", ch, len(corpus))
        out += b"".join(struct.pack("<I", fnv32(enc(x["text"], x.get("pair", "") if x.get("is_pair") else None)))
                        for x in corpus)
        with gzip.open(os.path.join(HERE, name + ".bin.gz"), "wb", 9) as f:
            f.write(out)
        print(name, len(corpus), "inputs, corpus hash %x" % ch)


if __name__ == "__main__":
    main()
