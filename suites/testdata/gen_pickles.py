"""Writes tiny CheckList-shaped suite pickles for the importer's tests.

The classes are stand-ins registered under CheckList's module names, so the
pickles reference checklist.test_suite.TestSuite and checklist.test_types.*
exactly as real suites do, without needing CheckList installed.
Run: python3 gen_pickles.py (from this directory).
"""
import collections
import pickle
import sys
import types

ts = types.ModuleType("checklist.test_suite")
tt = types.ModuleType("checklist.test_types")
sys.modules["checklist"] = types.ModuleType("checklist")
sys.modules["checklist.test_suite"] = ts
sys.modules["checklist.test_types"] = tt


def cls(module, name):
    c = type(name, (), {})
    c.__module__ = module.__name__
    setattr(module, name, c)
    return c


TestSuite = cls(ts, "TestSuite")
MFT, INV, DIR, FOO = (cls(tt, n) for n in ("MFT", "INV", "DIR", "FOO"))


def test(klass, name, capability, data, labels=None, agg="all", meta=None):
    t = klass()
    t.data, t.labels, t.name, t.capability = data, labels, name, capability
    t.agg_fn, t.meta, t.description = agg, meta, ""
    return t


def suite(tests):
    s = TestSuite()
    s.tests = collections.OrderedDict((t.name, t) for t in tests)
    s.info = {}
    return s


good = suite([
    test(MFT, "my words", "Vocabulary", ["good", "bad"], labels=[2, 0]),
    test(MFT, "single positive words", "Vocabulary", [("is it big?", "is it large?")], labels=2),
    test(INV, "change neutral words with BERT", "Vocabulary",
         [["it is fine", "it is ok"], ["we flew", "we travelled", "we went"]],
         agg="all_except_first"),
])
# suite.add keeps descriptions in suite.info, a defaultdict of
# defaultdicts; the release sentiment suite also has a "description]" key.
described = suite([test(MFT, "my words", "Vocabulary", ["good", "bad"], labels=[2, 0])])
described.info = collections.defaultdict(dict)
described.info["my words"] = collections.defaultdict(str, {"capability": "Vocabulary", "type": "MFT",
                                                         "description": "Short positive and negative words", "description]": ""})
unknown_class = suite([test(FOO, "strange", "Vocabulary", ["x"])])
unknown_inv = suite([test(INV, "my own invariance", "Robustness", [["a", "b"]], agg="all_except_first")])

for name, obj in [("tiny_suite.pkl", good), ("described_suite.pkl", described), ("unknown_class.pkl", unknown_class), ("unknown_inv.pkl", unknown_inv)]:
    with open(name, "wb") as f:
        pickle.dump(obj, f, protocol=3)


# dill_shaped.pkl: a suite shaped as the released ones are (CheckList pickles
# with dill): labels as a numpy array and numpy scalars, meta as a Munch,
# and the expectation a dill function record — _create_function of a code
# object made by calling _load_type('CodeType'), its globals naming
# builtins through _get_attr(_import_module(...)) and its closure cells.
# dill, munch and CheckList need not be installed: stand-ins are registered
# under their module names, so the pickle names exactly what a real suite
# names.
import numpy as np

dd = types.ModuleType("dill._dill")
sys.modules["dill"] = types.ModuleType("dill")
sys.modules["dill._dill"] = dd
mm = types.ModuleType("munch")
sys.modules["munch"] = mm


def stub(module, name):
    def f(*args):
        raise RuntimeError("never called when pickling")
    f.__module__, f.__name__, f.__qualname__ = module.__name__, name, name
    setattr(module, name, f)
    return f


_create_function = stub(dd, "_create_function")
_create_cell = stub(dd, "_create_cell")
_load_type = stub(dd, "_load_type")
_import_module = stub(dd, "_import_module")
_get_attr = stub(dd, "_get_attr")


class Reduced:
    """An object that pickles as func(*args), and may itself be called."""

    def __init__(self, func, args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args

    def __call__(self, *a):
        raise RuntimeError("never called")


Munch = type("Munch", (dict,), {"__module__": "munch"})
mm.Munch = Munch

code_type = Reduced(_load_type, ("CodeType",))
code = Reduced(code_type, (1, 0, 0, 1, 2, 67, b"|\x00S\x00", (None,), (), ("x",), "<expect>", "f", 1, b""))
glob = {"len": Reduced(_get_attr, ("builtins", "len")), "np": Reduced(_import_module, ("numpy",)),
        "zip": Reduced(_load_type, ("zip",))}
cell = Reduced(_create_cell, (0.1,))
expect = Reduced(_create_function, (code, glob, "expect_fn", None, (cell,)))

dill_mft = test(MFT, "dill-shaped words", "Vocabulary", ["good", "bad", "fine"],
                labels=[np.int64(2), 0, np.int64(1)],
                meta=[Munch(word="good", n=np.int64(1)), None, Munch(word="fine", x=np.float64(0.5))])
dill_mft.expect = expect
dill_inv = test(INV, "change neutral words with BERT", "Vocabulary",
                [["a b", "a  b"], ["c", "c!", "c?"]], labels=[np.array([1, 1]), np.array([0, 0, 0], dtype=np.int32)],
                agg="all_except_first")
dill_inv.expect = expect
dill_inv.run_idxs = np.arange(2)
with open("dill_shaped.pkl", "wb") as f:
    pickle.dump(suite([dill_mft, dill_inv, test(MFT, "single positive words", "Vocabulary", ["nice"], labels=np.int64(2))]),
                f, protocol=3)
