"""Exact-arithmetic reference for package metrics' randomisation test:
  python3 gen_exact_randomisation.py > exact_randomisation.json
(standard library only: fractions and random).

BeLUGA's randomized_test_avg compares numpy floats: a trial's |dG| is summed
in another order than the observed one, so a trial that ties the observed
statistic exactly may come out an ulp below it and not count, which makes p
smaller than it is. Here every mean, harmonic mean and difference is a
Fraction, so a tie is a tie. The trials are BeLUGA's: per trial, every item
where the two models differ (NaN != NaN) is swapped with probability 1/2,
one random.Random(seed).getrandbits(1) per item, i.i.d. items of all tasks
first, then suite items by task, score, functionality and case;
G = hmean(i.i.d. accuracy, mean of per-functionality pass rates), 0 when
either is 0; a task without i.i.d. items is tested on its suite score alone;
p = (count + 1) / (trials + 1).

Fixtures:
  "significance": the fixture of significance.json (gen_significance.py,
     BeLUGA's float computation), whose cells all hold 11 scored cases;
  "hatecheck": a suite-only comparison of two models on equal-size
     functionalities (HateCheck's layout: 6 functionalities of 10 cases),
     the shape of a per-group p-value of the report.
For each, "p_float" is the float computation BeLUGA does (the count with
`d >= observed` on floats summed as numpy sums short arrays), for the record
of which p-values exact ties change."""
import json
import math
import random
from fractions import Fraction


def run(a, b, tasks, scores, funcs, trials, seed, exact):
    num = Fraction if exact else float

    def mean(xs):
        xs = [x for x in xs if not math.isnan(x)]
        if not xs:
            return None
        if exact:
            return Fraction(int(sum(xs)), len(xs))
        s = 0.0
        for x in xs:
            s += x
        return s / len(xs)

    def hmean(x, y):
        if x <= 0 or y <= 0:
            return num(0)
        return 2 * x * y / (x + y) if exact else 2 / (1 / x + 1 / y)

    def stats(m):
        gs = []
        for t in tasks:
            acc = mean(m["iid"].get(t, [])) if m["iid"].get(t) else None
            for s in scores:
                rates = [r for r in (mean(m["suite"][t][s][f]) for f in funcs[t]) if r is not None]
                total = num(0)
                for r in rates:
                    total += r
                score = total / len(rates)
                gs.append(score if acc is None else hmean(acc, score))
        avg = num(0)
        for g in gs:
            avg += g
        return gs + [avg / len(gs)]

    def flat(m):
        xs = []
        for t in tasks:
            xs += m["iid"].get(t, [])
        for t in tasks:
            for s in scores:
                for f in funcs[t]:
                    xs += m["suite"][t][s][f]
        return xs

    def unflat(xs, like):
        m, i = {"iid": {}, "suite": {}}, 0
        for t in tasks:
            n = len(like["iid"].get(t, []))
            if n:
                m["iid"][t] = xs[i:i + n]
            i += n
        for t in tasks:
            m["suite"][t] = {}
            for s in scores:
                m["suite"][t][s] = {}
                for f in funcs[t]:
                    n = len(like["suite"][t][s][f])
                    m["suite"][t][s][f] = xs[i:i + n]
                    i += n
        return m

    obs = [abs(x - y) for x, y in zip(stats(a), stats(b))]
    fa, fb = flat(a), flat(b)
    counts = [0] * len(obs)
    rng = random.Random(seed)
    for _ in range(trials):
        xa, xb = list(fa), list(fb)
        for i in range(len(xa)):
            if xa[i] != xb[i] and rng.getrandbits(1):
                xa[i], xb[i] = xb[i], xa[i]
        d = [abs(x - y) for x, y in zip(stats(unflat(xa, a)), stats(unflat(xb, b)))]
        for i in range(len(d)):
            counts[i] += d[i] >= obs[i]
    return [(c + 1) / (trials + 1) for c in counts]


def nan(m):
    """JSON null (a filtered case) back to NaN."""
    if isinstance(m, dict):
        return {k: nan(v) for k, v in m.items()}
    if isinstance(m, list):
        return [float("nan") if x is None else (nan(x) if isinstance(x, (dict, list)) else float(x)) for x in m]
    return m


out = {}
ref = json.load(open("significance.json"))["randomisation"]
a, b = nan(ref["a"]), nan(ref["b"])
args = (ref["tasks"], ref["scores"], ref["functionalities"], ref["trials"], ref["seed"])
exact, flt = run(a, b, *args, True), run(a, b, *args, False)
# The suite score of sa's seen functionalities alone, as gen_significance.py's "suite_only".
only = lambda m: {"iid": {}, "suite": {"sa": {"seen": m["suite"]["sa"]["seen"]}}}
oargs = (["sa"], ["seen"], {"sa": ref["functionalities"]["sa"]}, ref["trials"], ref["seed"])
out["significance"] = {
    "p_g": exact[:-1], "p_avg": exact[-1], "p_g_float": flt[:-1], "p_avg_float": flt[-1],
    "suite_only": run(only(a), only(b), *oargs, True)[0], "suite_only_float": run(only(a), only(b), *oargs, False)[0],
}

rng = random.Random(7)
funcs = ["f%d" % i for i in range(6)]
def model(rate):
    return {f: [float(rng.random() < rate) for _ in range(10)] for f in funcs}
ha, hb = model(0.7), model(0.6)
hargs = (["hc"], ["seen"], {"hc": funcs}, 3000, 42)
wrap = lambda m: {"iid": {}, "suite": {"hc": {"seen": m}}}
out["hatecheck"] = {
    "functionalities": funcs, "trials": 3000, "seed": 42, "a": ha, "b": hb,
    "p": run(wrap(ha), wrap(hb), *hargs, True)[0], "p_float": run(wrap(ha), wrap(hb), *hargs, False)[0],
}
print(json.dumps(out, indent=1))
