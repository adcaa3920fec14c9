"""Writes numpy_streams.json: reference values of numpy's random streams for
the Go port in package nprand. Run with Debian's python3-numpy from this
directory: /usr/bin/python3 gen_numpy.py"""
import json
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
