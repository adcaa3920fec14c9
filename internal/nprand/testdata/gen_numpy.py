"""Writes the reference values the Go ports in package nprand are tested
against: numpy_streams.json (numpy's legacy RandomState and default_rng) and
python_random.json (CPython's random.Random). Run with Debian's python3-numpy
from this directory: /usr/bin/python3 gen_numpy.py"""
import json
import random

import numpy as np

out = {"numpy": np.__version__, "legacy": [], "pcg64": []}
for seed in [0, 1, 42, 123, 2**32 - 1]:
    out["legacy"].append({
        "seed": seed,
        "uint32": [int(x) for x in np.random.RandomState(seed)._bit_generator.random_raw(5)],
        "permutation10": [int(x) for x in np.random.RandomState(seed).permutation(10)],
        "permutation1000_head": [int(x) for x in np.random.RandomState(seed).permutation(1000)[:20]],
    })
    out["pcg64"].append({
        "seed": seed,
        "uint64": [int(x) for x in np.random.default_rng(seed).bit_generator.random_raw(5)],
        "permutation10": [int(x) for x in np.random.default_rng(seed).permutation(10)],
        "permutation872_head": [int(x) for x in np.random.default_rng(seed).permutation(872)[:20]],
    })
with open("numpy_streams.json", "w") as f:
    json.dump(out, f, indent=1)

r42, r7 = random.Random(42), random.Random(7)
with open("python_random.json", "w") as f:
    json.dump({"seed42_bits1": [r42.getrandbits(1) for _ in range(64)],
               "seed7_bits32": [r7.getrandbits(32) for _ in range(5)]}, f)
