"""The decoder entries of torch_step.py's FAMILIES: transformers' own
GPT2ForSequenceClassification (4.27.1), LlamaForSequenceClassification and
Qwen2ForSequenceClassification (4.40) at the shape of --model, as gostep's
tinyFamily builds them: GPT-2 with n_inner = ffn, dropout 0.1 (its
defaults); Llama/Qwen2 with intermediate_size = ffn, as many key/value heads
as query heads, no dropout. The transformers source tree is
$TRANSFORMERS_SRC (4.27.1's for gpt2, 4.40's for llama and qwen2), loaded
with the stubs of models/testdata/decoders/gen.py."""
import importlib.util
import os

import torch
from torch import nn


def _transformers():
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        "decoders_gen", os.path.join(here, "..", "models", "testdata", "decoders", "gen.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return gen.install(os.environ["TRANSFORMERS_SRC"])


class _Decoder(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids, types, mask):
        return self.model(input_ids=ids, attention_mask=mask.long()).logits


def TinyGPT2(vocab=30522, hidden=128, layers=2, heads=2, ffn=512, labels=2):
    T = _transformers()
    cfg = T.GPT2Config(vocab_size=vocab, n_positions=512, n_embd=hidden, n_layer=layers, n_head=heads,
                       n_inner=ffn, num_labels=labels, pad_token_id=0)
    return _Decoder(T.GPT2ForSequenceClassification(cfg))


def _llama(kind, vocab, hidden, layers, heads, ffn, labels):
    T = _transformers()
    conf, cls = {"llama": (T.LlamaConfig, T.LlamaForSequenceClassification),
                 "qwen2": (T.Qwen2Config, T.Qwen2ForSequenceClassification)}[kind]
    cfg = conf(vocab_size=vocab, hidden_size=hidden, intermediate_size=ffn, num_hidden_layers=layers,
               num_attention_heads=heads, num_key_value_heads=heads, max_position_embeddings=512,
               num_labels=labels, pad_token_id=0, attn_implementation="eager")
    return _Decoder(cls(cfg))


def TinyLlama(vocab=30522, hidden=128, layers=2, heads=2, ffn=512, labels=2):
    return _llama("llama", vocab, hidden, layers, heads, ffn, labels)


def TinyQwen2(vocab=30522, hidden=128, layers=2, heads=2, ffn=512, labels=2):
    return _llama("qwen2", vocab, hidden, layers, heads, ffn, labels)
