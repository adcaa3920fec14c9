"""Reference values for package metrics' Classify, computed with Debian's
python3-sklearn (1.2.1):
  /usr/bin/python3 gen_classification.py > classification.json

Per fixture (predicted and gold classes among K classes): accuracy_score;
confusion_matrix(gold, pred, labels=range(K)); precision_recall_fscore_support
and f1_score(average="macro") with labels=range(K) and zero_division=0, so that
a class never predicted or never gold counts with 0 as beluga's macro_f1 does.
"""
import json

import numpy as np
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score, precision_recall_fscore_support


def fixtures():
    rng = np.random.RandomState(7)
    gold = rng.randint(0, 3, size=200)
    pred = np.where(rng.uniform(size=200) < 0.7, gold, rng.randint(0, 3, size=200))
    yield "three classes", 3, pred, gold
    # Class 3 neither gold nor predicted, class 2 gold but never predicted.
    gold = np.array([0, 0, 1, 1, 2, 2, 0, 1, 2, 0])
    pred = np.array([0, 1, 1, 1, 0, 1, 0, 0, 1, 0])
    yield "absent classes", 4, pred, gold
    yield "one example", 2, np.array([1]), np.array([1])


out = []
for name, k, pred, gold in fixtures():
    labels = list(range(k))
    p, r, f, s = precision_recall_fscore_support(gold, pred, labels=labels, zero_division=0)
    out.append({
        "name": name, "classes": k, "pred": pred.tolist(), "gold": gold.tolist(),
        "accuracy": float(accuracy_score(gold, pred)),
        "macro_f1": float(f1_score(gold, pred, labels=labels, average="macro", zero_division=0)),
        "precision": p.tolist(), "recall": r.tolist(), "f1": f.tolist(), "support": s.tolist(),
        "confusion": confusion_matrix(gold, pred, labels=labels).tolist(),
    })
print(json.dumps(out, indent=1))
