"""Golden McNemar p-values of beluga test compare, from scipy.

For each test, of the cases both models scored (neither verdict "filtered"),
counts those A passes and B fails and those A fails and B passes, and
computes McNemar's exact test as scipy computes it: the two-sided
scipy.stats.binomtest of the cases B passes among the discordant ones,
p = 1/2 (p = 1 when there is none). Prints {test: {"a_only", "b_only", "p"}}.

Run (Debian's python3-scipy 1.10), from the repository root:
  go run ./cmd/beluga test --model models/testdata/hfsaved/classifier --suite cmd/beluga/testdata/testcompare/suite.jsonl -o /tmp/a
  go run ./cmd/beluga test --model models/testdata/hfsaved/electra --suite cmd/beluga/testdata/testcompare/suite.jsonl -o /tmp/b
  /usr/bin/python3 cmd/beluga/testdata/testcompare/mcnemar_scipy.py /tmp/a/cases.jsonl /tmp/b/cases.jsonl > cmd/beluga/testdata/testcompare/mcnemar.json
"""
import json
import sys

from scipy.stats import binomtest


def verdicts(path):
    out = {}
    with open(path) as f:
        for line in f:
            c = json.loads(line)
            out[(c["functionality"], c["case"])] = c["verdict"]
    return out


a, b = verdicts(sys.argv[1]), verdicts(sys.argv[2])
tests = {}
for (name, case), va in a.items():
    vb = b[(name, case)]
    t = tests.setdefault(name, {"a_only": 0, "b_only": 0})
    if "filtered" in (va, vb):
        continue
    if va == "pass" and vb == "fail":
        t["a_only"] += 1
    elif va == "fail" and vb == "pass":
        t["b_only"] += 1
for t in tests.values():
    n = t["a_only"] + t["b_only"]
    t["p"] = binomtest(t["b_only"], n, 0.5).pvalue if n else 1.0
json.dump(tests, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
