"""PyTorch peer of models' BenchmarkScore (lm_bench_test.go): prompted
scoring of label verbalizers with transformers' own GPT2LMHeadModel
(4.27.1) or LlamaForCausalLM (4.40, --family llama) on the same shapes — a
GPT-2 of hidden 128, 2 layers, 2 heads, MLP 512 (a Llama: 4 query heads, 2
key/value heads, SwiGLU 384), vocabulary 50257; a 200-token prompt prefix; 64 inputs of 10 + (7i mod
21) tokens; two one-token verbalizers each — and the same algorithm: the
rows run are prefix + context (or context alone after the prefix's cached
past_key_values), one row per input (its one-token options share it),
sorted by length into batches of at most 2048 padded tokens, right-padded
with an attention mask; GPT2LMHeadModel's lm_head and a log-softmax on the
positions that predict an option only. float32, inference mode, 2 threads.
Prints scored-tokens/s (the tokens of every prefix + context + option
sequence, per second: BenchmarkScore's measure) with and without the cache.

Run: /usr/bin/python3 benchmarks/torch_score.py TRANSFORMERS_SRC [--family gpt2|llama] [--rounds 3]
(the src/ of the xiaojunjun65/transformers-mlu_4.27.1 snapshot for gpt2, of
bozheng-hit/transformers (4.40.0.dev0) for llama, loaded with the stubs of
models/testdata/decoders/gen.py)."""
import argparse
import importlib.util
import os
import time

import torch

PREFIX, ITEMS, OPTIONS, VOCAB, BUDGET = 200, 64, 2, 50257, 2048


def load_gen():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "models", "testdata", "decoders", "gen.py")
    spec = importlib.util.spec_from_file_location("decoders_gen", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def workload():
    tid = lambda k: (k * 7919 + 13) % VOCAB
    prefix = [tid(k) for k in range(PREFIX)]
    items = []
    for i in range(ITEMS):
        ctx = [tid(1000 + i * 31 + k) for k in range(10 + (i * 7) % 21)]
        items.append((ctx, [tid(7), tid(8)]))
    scored = sum(OPTIONS * (PREFIX + len(c) + 1) for c, _ in items)
    return prefix, items, scored


def batches(rows):
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
    lo = 0
    while lo < len(order):
        hi = lo + 1
        while hi < len(order) and (hi - lo + 1) * len(rows[order[hi]]) <= BUDGET:
            hi += 1
        yield order[lo:hi]
        lo = hi


def score(model, body, prefix, items, cached):
    out = [[0.0] * len(opts) for _, opts in items]
    past = None
    if cached:
        past = body(input_ids=torch.tensor([prefix]), use_cache=True).past_key_values
        if hasattr(past, "to_legacy_cache"):
            past = past.to_legacy_cache()
    rows = [ctx if cached else prefix + ctx for ctx, _ in items]
    for idx in batches(rows):
        L = max(len(rows[i]) for i in idx)
        ids = torch.zeros((len(idx), L), dtype=torch.long)
        mask = torch.zeros((len(idx), L), dtype=torch.long)
        for j, i in enumerate(idx):
            ids[j, :len(rows[i])] = torch.tensor(rows[i])
            mask[j, :len(rows[i])] = 1
        kw = {}
        if cached:
            B = len(idx)
            kw["past_key_values"] = tuple((k.expand(B, -1, -1, -1), v.expand(B, -1, -1, -1)) for k, v in past)
            mask = torch.cat([torch.ones((B, len(prefix)), dtype=torch.long), mask], 1)
        h = body(input_ids=ids, attention_mask=mask, **kw).last_hidden_state
        last = torch.tensor([len(rows[i]) - 1 for i in idx])
        logp = torch.log_softmax(model.lm_head(h[torch.arange(len(idx)), last]), -1)
        for j, i in enumerate(idx):
            for o, tok in enumerate(items[i][1]):
                out[i][o] = float(logp[j, tok])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--family", choices=["gpt2", "llama"], default="gpt2")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    T = load_gen().install(a.src)
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    if a.family == "gpt2":
        cfg = T.GPT2Config(vocab_size=VOCAB, n_positions=1024, n_embd=128, n_layer=2, n_head=2, n_inner=512)
        model = T.GPT2LMHeadModel(cfg).eval()
        body = model.transformer
    else:
        cfg = T.LlamaConfig(vocab_size=VOCAB, hidden_size=128, intermediate_size=384, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                            attn_implementation="eager")
        model = T.LlamaForCausalLM(cfg).eval()
        body = model.model
    prefix, items, scored = workload()
    with torch.inference_mode():
        a_c, a_p = score(model, body, prefix, items, True), score(model, body, prefix, items, False)
        worst = max(abs(x - y) for rc, rp in zip(a_c, a_p) for x, y in zip(rc, rp))
        for name, cached in (("prefix-cached", True), ("no-cache", False)):
            best = float("inf")
            for _ in range(a.rounds):
                t = time.perf_counter()
                score(model, body, prefix, items, cached)
                best = min(best, time.perf_counter() - t)
            print("torch %s %s: %.3f s/op scored-tokens/s=%.0f" % (a.family, name, best, scored / best))
    print("transformers %s, torch %s, threads %d; |cached - uncached| max %.2g; load %s" % (
        T.__version__, torch.__version__, a.threads, worst, open("/proc/loadavg").read().split()[:3]))


if __name__ == "__main__":
    main()
