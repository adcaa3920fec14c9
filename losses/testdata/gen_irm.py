# Writes irm_torch.json: BeLUGA's IRM penalty (behaviour_training.py,
# get_compute_loss with get_dummy_loss=True, then
# (grad(dummy, w, create_graph=True)[0] ** 2).sum()) and its gradient with
# respect to the logits by torch's double backward, on fixed random logits.
# Run: /usr/bin/python3 losses/testdata/gen_irm.py  (Debian python3-torch).
import json

import torch

torch.manual_seed(7)
half = 3
z = torch.randn(2 * half, 2, dtype=torch.float64) * 1.5
targets = torch.tensor([[1, 0], [0.5, 0.5], [1 / 3, 2 / 3], [0, 1], [1, 0], [0.5, 0.5]], dtype=torch.float64)
ce = torch.nn.CrossEntropyLoss()
bce = torch.nn.BCELoss()


def penalty(kind, zz):
    w = torch.ones(1, 2, dtype=torch.float64, requires_grad=True)
    if kind == "inv":
        dummy = ce(zz[half:] * w, torch.softmax(zz[:half], dim=-1))
    elif kind == "mft_ce":
        dummy = ce(zz * w, targets)
    elif kind == "dir":
        # directions not_more_conf, not_less_0, not_less_conf for the 3 pairs
        s = zz * w
        po, pp = torch.softmax(s[:half], -1), torch.softmax(s[half:], -1)
        d = pp - po
        pred = po.argmax(-1)
        dconf = d.gather(1, pred[:, None])[:, 0]
        errs = torch.stack([torch.relu(dconf[0]), torch.relu(-d[1, 0]), torch.relu(-dconf[2])])
        dummy = bce(errs, torch.zeros(3, dtype=torch.float64))
    (g,) = torch.autograd.grad(dummy, w, create_graph=True)
    return (g ** 2).sum()


out = {"logits": z.flatten().tolist(), "targets": targets.flatten().tolist(), "cases": {}}
for kind in ["inv", "mft_ce", "dir"]:
    zz = z.clone().requires_grad_(True)
    p = penalty(kind, zz)
    p.backward()
    out["cases"][kind] = {"penalty": p.item(), "grad": zz.grad.flatten().tolist()}
with open(__file__.replace("gen_irm.py", "irm_torch.json"), "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
print({k: v["penalty"] for k, v in out["cases"].items()})
