"""Reference for metrics.Squash32: BeLUGA's utils.pred_and_conf (CheckList
tutorial 5) applied to a float32 softmax column, as BeLUGA applies it to its
float32 models' outputs, with Debian's python3-numpy:
  /usr/bin/python3 gen_squash32.py > squash32.json
Each p is a float32; the output keeps pp (float64) and the argmax."""
import json

import numpy as np


def pred_and_conf(pr):
    pp = np.zeros((pr.shape[0], 3))
    margin_neutral = 1 / 3.
    mn = margin_neutral / 2.
    neg = pr < 0.5 - mn
    pp[neg, 0] = 1 - pr[neg]
    pp[neg, 2] = pr[neg]
    pos = pr > 0.5 + mn
    pp[pos, 0] = 1 - pr[pos]
    pp[pos, 2] = pr[pos]
    neutral_pos = (pr >= 0.5) * (pr < 0.5 + mn)
    pp[neutral_pos, 1] = 1 - (1 / margin_neutral) * np.abs(pr[neutral_pos] - 0.5)
    pp[neutral_pos, 2] = 1 - pp[neutral_pos, 1]
    neutral_neg = (pr < 0.5) * (pr > 0.5 - mn)
    pp[neutral_neg, 1] = 1 - (1 / margin_neutral) * np.abs(pr[neutral_neg] - 0.5)
    pp[neutral_neg, 0] = 1 - pp[neutral_neg, 1]
    return np.argmax(pp, axis=1), pp


edges = [np.float32(1 / 3), np.float32(2 / 3), np.float32(0.5 - 1 / 6), np.float32(0.5 + 1 / 6)]
near = [np.nextafter(e, np.float32(d)) for e in edges for d in (0, 1)]
rand = np.random.RandomState(5).rand(40).astype(np.float32)
pr = np.array(edges + near + [np.float32(x) for x in (0.0, 1.0, 0.5, 0.2, 0.9, 0.4, 0.6, 0.45)] + list(rand),
              dtype=np.float32)
preds, pp = pred_and_conf(pr)
print(json.dumps([{"p": float(p), "class": int(c), "probs": [float(x) for x in row]}
                  for p, c, row in zip(pr, preds, pp)]))
