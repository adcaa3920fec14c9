"""Reference values for package metrics' seed, bootstrap and multiple-comparison
statistics, computed independently with Debian's python3-numpy and python3-scipy
(scipy 1.10.1):
  /usr/bin/python3 gen_statistics.py > statistics.json

* mean_se: numpy mean and scipy.stats.sem (ddof=1);
  paired t-test: scipy.stats.ttest_rel (two-sided).
* bootstrap: stratified percentile bootstrap. Per replicate and per group, in
  order, np.random.RandomState(seed).randint(0, len(group), size=len(group))
  indexes the resample; the statistic is evaluated on the resampled groups and
  the interval is np.nanpercentile(stats, [100*(1-level)/2, 100*(1+level)/2]).
  Statistics: pass rate = 100*nanmean; suite score = 100*mean over groups of
  nanmean (all-NaN groups left out); G = scipy.stats.hmean(100*mean(iid), suite).
  "hierarchical": the two-stage bootstrap. Per replicate, first per cluster
  u = randint(0, n, size=n) (n functionalities, one draw shared by all the
  cluster's blocks); then per group in order, the group's source (itself, or
  for position k of a block the block's group u[k]) is resampled with
  randint(0, len(src), size=len(src)). "suite2" is the mean of the suite
  scores of two blocks (two seeds of one row).
  "scipy" holds scipy.stats.bootstrap's percentile interval of the same pass
  rate (its own draws, 9,999 resamples): a loose cross-check of the method.
* spread: min, np.percentile(x, [25, 50, 75]) (linear) and max over seeds.
* bh: Benjamini-Hochberg q-values. scipy.stats.false_discovery_control arrived
  in scipy 1.11, after Debian 12's 1.10, so this implements its documented
  definition (sorted p, p_(i)*m/i, running minimum from the largest, clipped to
  [0, 1]) as scipy 1.11's source does; NaN p-values are dropped from the family.
"""
import json
import math

import numpy as np
from scipy import stats

out = {}

# --- mean ± SE over seeds, paired t-test ---------------------------------
out["mean_se"] = []
for xs in [[71.25, 73.5], [70.0, 72.5, 69.75], [88.1, 87.9, 88.4, 88.0, 87.2], [5.0]]:
    se = float(stats.sem(xs)) if len(xs) > 1 else None
    out["mean_se"].append({"x": xs, "mean": float(np.mean(xs)), "se": se})

out["ttest"] = []
for a, b in [([70.0, 72.5, 69.75], [74.0, 73.0, 75.5]),
             ([88.1, 87.9, 88.4, 88.0, 87.2], [88.3, 88.2, 88.0, 88.9, 87.0]),
             ([50.0, 60.0], [55.0, 61.0])]:
    out["ttest"].append({"a": a, "b": b, "p": float(stats.ttest_rel(b, a).pvalue)})

# --- bootstrap --------------------------------------------------------------
def pass_rate(groups):
    return 100 * np.nanmean(groups[0]) if not np.all(np.isnan(groups[0])) else math.nan

def suite(groups):
    rates = [np.nanmean(g) for g in groups if not np.all(np.isnan(g))]
    return 100 * np.mean(rates) if rates else math.nan

def g_score(groups):
    iid, s = 100 * np.mean(groups[0]), suite(groups[1:])
    if math.isnan(s):
        return math.nan
    if iid <= 0 or s <= 0:
        return 0.0
    return float(stats.hmean([iid, s]))

def suite2(groups):
    half = len(groups) // 2
    return (suite(groups[:half]) + suite(groups[half:])) / 2

STATS = {"pass_rate": pass_rate, "suite": suite, "g": g_score, "suite2": suite2}

def bootstrap(groups, stat, b, level, seed):
    rs = np.random.RandomState(seed)
    arrs = [np.asarray(g, dtype=float) for g in groups]
    reps = []
    for _ in range(b):
        res = []
        for g in arrs:
            if len(g) == 0:
                res.append(g)
                continue
            res.append(g[rs.randint(0, len(g), size=len(g))])
        reps.append(STATS[stat](res))
    lo, hi = np.nanpercentile(reps, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return float(lo), float(hi)

gen = np.random.RandomState(7)
def hits(n, rate, filtered=0.0):
    v = (gen.rand(n) < rate).astype(float)
    v[gen.rand(n) < filtered] = math.nan
    return v

iid = hits(200, 0.85)
funcs = [hits(12, 0.6, 0.1), hits(30, 0.9), hits(7, 0.3, 0.3), hits(25, 0.5)]
nonan = hits(40, 0.7)

def enc(g):
    return [None if math.isnan(x) else float(x) for x in g]

out["bootstrap"] = []
for name, groups, stat, b, level, seed in [
    ("pass rate, filtered cases", [funcs[0]], "pass_rate", 1000, 0.95, 42),
    ("pass rate, no filtered case", [nonan], "pass_rate", 2000, 0.90, 3),
    ("suite score", funcs, "suite", 1000, 0.95, 42),
    ("G", [iid] + funcs, "g", 500, 0.95, 1),
    ("G, 99 %", [iid] + funcs, "g", 777, 0.99, 123456789),
]:
    lo, hi = bootstrap(groups, stat, b, level, seed)
    out["bootstrap"].append({"name": name, "groups": [enc(g) for g in groups], "stat": stat,
                             "resamples": b, "level": level, "seed": seed, "lo": lo, "hi": hi})

def hierarchical(groups, clusters, stat, b, level, seed):
    rs = np.random.RandomState(seed)
    arrs = [np.asarray(g, dtype=float) for g in groups]
    where = {}
    for c, blocks in enumerate(clusters):
        for bi, blk in enumerate(blocks):
            for k, i in enumerate(blk):
                where[i] = (c, bi, k)
    reps = []
    for _ in range(b):
        u = [rs.randint(0, len(blocks[0]), size=len(blocks[0])) for blocks in clusters]
        res = []
        for i, g in enumerate(arrs):
            if i in where:
                c, bi, k = where[i]
                g = arrs[clusters[c][bi][u[c][k]]]
            if len(g) == 0:
                res.append(g)
                continue
            res.append(g[rs.randint(0, len(g), size=len(g))])
        reps.append(STATS[stat](res))
    lo, hi = np.nanpercentile(reps, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return float(lo), float(hi)

funcs2 = [hits(12, 0.5, 0.1), hits(30, 0.95), hits(7, 0.4, 0.3), hits(25, 0.6)]
out["hierarchical"] = []
for name, groups, clusters, stat, b, level, seed in [
    ("suite score", funcs, [[[0, 1, 2, 3]]], "suite", 1000, 0.95, 42),
    ("G", [iid] + funcs, [[[1, 2, 3, 4]]], "g", 500, 0.95, 1),
    ("suite score, two seeds sharing the draw", funcs + funcs2, [[[0, 1, 2, 3], [4, 5, 6, 7]]], "suite2", 800, 0.90, 7),
    ("suite score, one functionality", [nonan], [[[0]]], "suite", 300, 0.95, 5),
]:
    lo, hi = hierarchical(groups, clusters, stat, b, level, seed)
    out["hierarchical"].append({"name": name, "groups": [enc(g) for g in groups], "clusters": clusters,
                                "stat": stat, "resamples": b, "level": level, "seed": seed, "lo": lo, "hi": hi})

sp = stats.bootstrap((nonan,), lambda x: 100 * np.mean(x), n_resamples=9999, confidence_level=0.95,
                     method="percentile", random_state=np.random.RandomState(0))
out["scipy"] = {"groups": [enc(nonan)], "level": 0.95,
                "lo": float(sp.confidence_interval.low), "hi": float(sp.confidence_interval.high)}

# --- spread over seeds: min, quartiles (numpy's linear percentile), max ------
out["spread"] = []
for xs in [[71.25, 73.5], [70.0, 72.5, 69.75], [88.1, 87.9, 88.4, 88.0, 87.2], [5.0],
           [6.0, 54.0, 30.0, 12.5, 47.0, 33.3, 21.0]]:
    q1, med, q3 = np.percentile(xs, [25, 50, 75])
    out["spread"].append({"x": xs, "min": float(np.min(xs)), "q1": float(q1), "median": float(med),
                          "q3": float(q3), "max": float(np.max(xs))})

# --- Benjamini-Hochberg -------------------------------------------------------
def bh(ps):
    ps = np.asarray(ps, dtype=float)
    keep = ~np.isnan(ps)
    p = ps[keep]
    m = p.shape[-1]
    order = np.argsort(p, kind="stable")
    s = p[order]
    i = np.arange(1, m + 1)
    s = s * (m / i)
    s = np.minimum.accumulate(s[::-1])[::-1]
    q = np.empty(m)
    q[order] = np.clip(s, 0, 1)
    outq = np.full(ps.shape, math.nan)
    outq[keep] = q
    return outq

out["bh"] = []
for ps in [[0.01, 0.04, 0.03, 0.005, 0.5, 0.2],
           [0.0001, 0.0001, 0.9, math.nan, 0.049, 0.051, 1.0],
           list(np.random.RandomState(11).rand(53) ** 3),
           [0.5]]:
    out["bh"].append({"p": enc(ps), "q": enc(bh(ps))})

print(json.dumps(out))
