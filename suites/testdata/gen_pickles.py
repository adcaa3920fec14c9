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
