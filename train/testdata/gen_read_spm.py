"""Writes read_spm.model: a DeBERTa-v3-shaped SentencePiece model (Unigram;
[PAD] [CLS] [SEP] [UNK] as ids 0-3; at most 255 pieces, so that with the
[MASK] HuggingFace's DebertaV2Tokenizer adds its ids fit the 256 of
models/testdata/deberta-v2) learnt from the tiny READ fixtures' texts, for
TestReadFixtureTokenizers. Its normalisation is identity: DeBERTa-v3's
nmt_nfkc charsmap alone is 238 KB, and spans' TestFeaturesWithAnyTokenizer
covers it on deberta-v3-base's own spm.model. Run from train/ with
/usr/bin/python3 testdata/gen_read_spm.py (Debian python3-sentencepiece
0.1.97)."""
import io
import json

import sentencepiece as spm

texts = []
for name in ["testdata/tiny_squad_train.json", "testdata/tiny_squad_dev.json"]:
    for art in json.load(open(name))["data"]:
        for p in art["paragraphs"]:
            texts.append(p["context"])
            texts += [q["question"] for q in p["qas"]]
for line in open("testdata/tiny_squad_suite.jsonl"):
    rec = json.loads(line)
    for pair in rec.get("inputs", []):
        texts += pair
texts = sorted(set(texts))
out = io.BytesIO()
spm.SentencePieceTrainer.train(
    sentence_iterator=iter(texts), model_writer=out, model_type="unigram", vocab_size=255,
    normalization_rule_name="identity", pad_id=0, pad_piece="[PAD]", bos_id=1, bos_piece="[CLS]",
    eos_id=2, eos_piece="[SEP]", unk_id=3, unk_piece="[UNK]", hard_vocab_limit=False,
    character_coverage=1.0, num_threads=1, minloglevel=2)
open("testdata/read_spm.model", "wb").write(out.getvalue())
print(len(texts), "texts,", len(out.getvalue()), "bytes")
