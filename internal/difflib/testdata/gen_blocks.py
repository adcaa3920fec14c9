"""Writes blocks.json: CPython difflib.SequenceMatcher(None, a, b,
autojunk=...).get_matching_blocks() on random integer sequences, the golden
reference of difflib_test.go. Run: python3 testdata/gen_blocks.py"""
import difflib
import json
import random

rng = random.Random(13)
cases = []
for n in range(30):
    la, lb = rng.choice([0, 1, 5, 30, 199, 200, 384]), rng.choice([0, 1, 5, 30, 199, 200, 384])
    alpha = rng.choice([2, 5, 50, 1000])
    b = [rng.randrange(alpha) for _ in range(lb)]
    if n % 3 == 0 and lb:
        # a perturbation of b: edits plus padding runs, as INV features look
        a = list(b)
        for _ in range(rng.randrange(1, 6)):
            p = rng.randrange(len(a) + 1)
            a[p:p + rng.randrange(3)] = [rng.randrange(alpha) for _ in range(rng.randrange(4))]
        pad = rng.randrange(0, 200)
        a, b = a + [0] * pad, b + [0] * pad
    else:
        a = [rng.randrange(alpha) for _ in range(la)]
    for autojunk in (True, False):
        m = difflib.SequenceMatcher(None, a, b, autojunk=autojunk).get_matching_blocks()
        cases.append({"a": a, "b": b, "autojunk": autojunk, "blocks": [list(x) for x in m]})
with open("testdata/blocks.json", "w") as f:
    json.dump(cases, f)
