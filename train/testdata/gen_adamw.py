"""Reference for train.AdamW: torch.optim.AdamW with HuggingFace's linear
schedule and gradient clipping on two small tensors, one with weight decay
and one without. Run with Debian's python3-torch:
  /usr/bin/python3 gen_adamw.py > adamw.json"""
import json
import torch

torch.manual_seed(0)
w = torch.nn.Parameter(torch.randn(6))
b = torch.nn.Parameter(torch.randn(3))
init = {"w": w.detach().tolist(), "b": b.detach().tolist()}
opt = torch.optim.AdamW([{"params": [w], "weight_decay": 0.1}, {"params": [b], "weight_decay": 0.0}],
                        lr=1e-2, betas=(0.9, 0.999), eps=1e-8)
total = 5
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.0, (total - s) / total))
grads = []
for step in range(total):
    gw, gb = torch.randn(6) * 3, torch.randn(3) * 3
    grads.append({"w": gw.tolist(), "b": gb.tolist()})
    w.grad, b.grad = gw.clone(), gb.clone()
    torch.nn.utils.clip_grad_norm_([w, b], 1.0)
    opt.step()
    sched.step()
print(json.dumps({"init": init, "grads": grads, "final": {"w": w.detach().tolist(), "b": b.detach().tolist()}}))
