"""Golden case choice of CheckList's suite.run(n=N, seed=SEED), from CheckList's own code.

CheckList's TestSuite.run calls every test's AbstractTest.run, whose
example_list_and_indices seeds numpy's global RandomState (np.random.seed)
and draws np.random.choice(range(cases), min(n, cases), replace=False): the
test's run_idxs. This script runs exactly that code, imported from a checkout
of github.com/marcotcr/checklist (4e6e5e3: checklist/__init__.py,
abstract_test.py, test_types.py, test_suite.py, expect.py) with stand-ins for
what the sampling does not touch (dill, munch, the Jupyter viewers), on one
test per size, and prints {"n", "seed", "tests": [{"name", "cases",
"run_idxs"}]} in suite order.

The sizes are the CheckList sentiment release suite's 38 tests (read from its
pickle, and their run_idxs stored there, from CheckList's authors' own
n=500, seed=1 run, are checked equal to the ones drawn here), then a few
edge sizes.

Run (numpy 1.24, Debian's python3-numpy):
  /usr/bin/python3 checklist_sample.py CHECKLIST_DIR sentiment_suite.pkl > checklist_sample_n500_seed1.json
"""
import collections
import json
import pickle
import sys
import types

import numpy as np

N, SEED = 500, 1
EDGE_SIZES = [1, 2, 3, 499, 500, 501, 1000]


def stand_ins():
    dill = types.ModuleType("dill")
    dill._dill = types.SimpleNamespace(_reverse_typemap={})
    sys.modules["dill"] = dill
    munch = types.ModuleType("munch")
    munch.Munch = type("Munch", (dict,), {"__getattr__": dict.__getitem__, "__setattr__": dict.__setitem__})
    sys.modules["munch"] = munch
    for mod, cls in [("checklist.viewer", None), ("checklist.viewer.test_summarizer", "TestSummarizer"),
                     ("checklist.viewer.suite_summarizer", "SuiteSummarizer")]:
        m = types.ModuleType(mod)
        if cls:
            setattr(m, cls, object)
        sys.modules[mod] = m


def release_sizes(path):
    """(name, cases, stored run_idxs) of each test of a release suite pickle."""
    class Stub:
        def __init__(self, *a, **k):
            self.args = a

        def __setstate__(self, s):
            self.__dict__.update(s if isinstance(s, dict) else {"state": s})

        def __call__(self, *a, **k):
            return Stub()

    class Loader(pickle.Unpickler):
        def find_class(self, mod, name):
            if mod == "collections":
                return getattr(collections, name)
            if mod == "builtins":
                import builtins
                return getattr(builtins, name)
            return type(name, (Stub,), {})

    with open(path, "rb") as f:
        suite = Loader(f).load()
    out = []
    for name, t in suite.tests.items():
        ri = t.__dict__["run_idxs"]  # a numpy array: (version, shape, dtype, fortran, bytes)
        stored = np.frombuffer(ri.state[4], dtype="<i8").tolist()
        out.append((name, len(t.__dict__["data"]), stored))
    return out


def main():
    sys.path.insert(0, sys.argv[1])
    stand_ins()
    from checklist.test_suite import TestSuite
    from checklist.test_types import MFT
    from checklist.expect import Expect

    sizes = release_sizes(sys.argv[2]) + [("edge %d" % n, n, None) for n in EDGE_SIZES]
    suite = TestSuite()
    for name, cases, _ in sizes:
        suite.add(MFT([["x"]] * cases, expect=Expect.single(lambda *a: True), name=name, capability="c"))
    suite.run(lambda xs: (np.zeros(len(xs), dtype=int), np.ones(len(xs))), verbose=False, n=N, seed=SEED)
    tests = []
    for name, cases, stored in sizes:
        drawn = [int(i) for i in suite.tests[name].run_idxs]
        if stored is not None and stored != drawn:
            sys.exit("%s: CheckList's run draws other cases than the release pickle stores" % name)
        tests.append({"name": name, "cases": cases, "run_idxs": drawn})
    json.dump({"n": N, "seed": SEED, "tests": tests}, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
