"""Reference values for package metrics' calibration measures (calibration.go),
computed independently with Debian's python3-sklearn (1.2.1) and python3-numpy
(1.24.2):
  /usr/bin/python3 gen_calibration.py > calibration.json

For each fixture (probability vectors, predicted classes, gold classes) and each
number of bins and strategy:
* "sklearn": sklearn.calibration.calibration_curve(correct, confidence, n_bins,
  strategy) with confidence = the predicted class's probability and correct =
  predicted == gold: the accuracy (prob_true) and mean confidence (prob_pred) of
  the non-empty bins, in order.
* "numpy": the same bins built without sklearn: edges np.linspace(0, 1, n+1)
  ("uniform") or np.percentile(confidence, np.linspace(0, 1, n+1)*100)
  ("quantile"); bin ids np.digitize(confidence, edges[1:-1], right=True), i.e.
  edge_b < c <= edge_b+1; per-bin counts with np.bincount; and
  ECE = sum over bins of count/N * |accuracy - mean confidence|.
* "brier": np.mean(np.sum((P - onehot(gold))**2, axis=1)), Brier's multi-class
  form; for two classes also 2 * sklearn.metrics.brier_score_loss(gold, P[:, 1]).
* "wilson": scipy.stats.binomtest(k, n).proportion_ci(0.95, method="wilson"),
  the interval of a worst group's pass rate (scipy 1.10.1).
"""
import json

import numpy as np
from sklearn.calibration import calibration_curve
from scipy.stats import binomtest
from sklearn.metrics import brier_score_loss


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def fixtures():
    rng = np.random.RandomState(1)
    # Three classes, an over-confident model: logits scaled up, labels drawn
    # from the unscaled probabilities.
    z = rng.normal(size=(300, 3)) * 1.5
    p_true = softmax(z)
    gold = np.array([rng.choice(3, p=p) for p in p_true])
    probs = softmax(z * 2.5)
    yield "three-class overconfident", probs, probs.argmax(axis=1), gold
    # Two classes, an under-confident model.
    z = rng.normal(size=(250, 1)) * 2
    p1 = 1 / (1 + np.exp(-z[:, 0]))
    gold = (rng.uniform(size=250) < p1).astype(int)
    q1 = 1 / (1 + np.exp(-z[:, 0] * 0.5))
    probs = np.stack([1 - q1, q1], axis=1)
    yield "binary underconfident", probs, probs.argmax(axis=1), gold
    # Confidences on the equal-width edges and heavy ties: which bin an edge
    # value falls into, and equal-mass bins that collapse (empty bins).
    conf = np.array([0.5, 0.6, 0.6, 0.7, 0.7, 0.7, 0.8, 0.9, 1.0, 1.0, 1.0, 1.0,
                     0.55, 0.65, 0.75, 0.85, 0.95, 0.3 + 0.3, 0.1 * 7, 0.5])
    probs = np.stack([conf, 1 - conf], axis=1)
    gold = np.array([0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0, 1, 1])
    yield "edges and ties", probs, np.zeros(len(conf), dtype=int), gold
    # A prediction whose class is not its argmax (a pred_and_softmax file):
    # the confidence is the predicted class's probability.
    probs = np.array([[0.2, 0.5, 0.3], [0.6, 0.3, 0.1], [0.1, 0.1, 0.8], [0.4, 0.35, 0.25]])
    yield "class not argmax", probs, np.array([2, 0, 2, 1]), np.array([2, 1, 2, 1])


out = []
for name, probs, pred, gold in fixtures():
    conf = probs[np.arange(len(pred)), pred]
    correct = (pred == gold).astype(int)
    f = {"name": name, "probs": probs.tolist(), "pred": pred.tolist(), "gold": gold.tolist(), "curves": []}
    for n in (1, 5, 10, 15):
        for strategy in ("uniform", "quantile"):
            prob_true, prob_pred = calibration_curve(correct, conf, n_bins=n, strategy=strategy)
            if strategy == "uniform":
                edges = np.linspace(0, 1, n + 1)
            else:
                edges = np.percentile(conf, np.linspace(0, 1, n + 1) * 100)
            ids = np.digitize(conf, edges[1:-1], right=True)
            counts = np.bincount(ids, minlength=n)
            acc = np.bincount(ids, weights=correct, minlength=n)
            mean = np.bincount(ids, weights=conf, minlength=n)
            nz = counts > 0
            ece = float(np.sum(counts[nz] / len(conf) * np.abs(acc[nz] / counts[nz] - mean[nz] / counts[nz])))
            f["curves"].append({
                "bins": n, "strategy": strategy,
                "sklearn": {"accuracy": prob_true.tolist(), "confidence": prob_pred.tolist()},
                "numpy": {"edges": edges.tolist(), "counts": counts.tolist(), "ece": ece},
            })
    onehot = np.eye(probs.shape[1])[gold]
    f["brier"] = float(np.mean(np.sum((probs - onehot) ** 2, axis=1)))
    if probs.shape[1] == 2:
        f["brier_sklearn2x"] = float(2 * brier_score_loss(gold, probs[:, 1]))
    out.append(f)

wilson = []
for k, n in [(0, 10), (3, 10), (10, 10), (37, 40), (1, 1), (120, 313)]:
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    wilson.append({"k": k, "n": n, "lo": float(ci.low), "hi": float(ci.high)})

print(json.dumps({"fixtures": out, "wilson": wilson}, indent=1))
