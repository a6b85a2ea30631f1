"""Diagnostics for the learned rankers of run.py: (1) the pool oracle (share of queries with a
gold tool among the candidates) and each learner's in-sample ceiling (trained and scored on all
queries: how far the features can separate gold tools at all, not a held-out figure);
(2) the Rocchio feedback weight's in-sample sensitivity; (3) a per-query paired comparison of
three learners' held-out rankings against the shipped fusion's, with paired-bootstrap 95%
intervals (2000 resamples, seed 0) of the MRR and R@5 differences.
"""
import numpy as np
from run import (ALL, EVID, G, ROCCHIO_A, crossval_grid, evaluate, fit_lgb, fit_listwise,
                 fit_pairwise, items, n, obj, rank_of, roc_grid, roc_r, run_learner, shipped_r)

def rr(held, i):
    r = next((k + 1 for k, t in enumerate(held[i]) if t in items[i]["gold"]), None)
    return 1 / r if r else 0.0

allq = list(range(n))
print("pool oracle (gold anywhere in pool):", np.mean([G[i][1].any() for i in allq]))
for name, fitter, cols, hp in [("pair_all", fit_pairwise, ALL, 1.0), ("list_all", fit_listwise, ALL, 1.0),
                               ("lgb_all", fit_lgb, ALL, 150), ("lgb_all_400", fit_lgb, ALL, 400)]:
    sc, _ = fitter(allq, cols, hp)
    m = evaluate(allq, {i: rank_of(i, sc(i)) for i in allq})
    print(f"in-sample {name}: R@1 {m['R@1']:.3f} R@5 {m['R@5']:.3f} R@10 {m['R@10']:.3f} MRR {m['MRR']:.3f}")
for a in ROCCHIO_A:
    best = max([p for p in roc_grid if p[2] == a], key=lambda p: obj(evaluate(allq, roc_r[p])))
    m = evaluate(allq, roc_r[best])
    print(f"rocchio in-sample a={a}: best LEXICAL {best[0]}: R@5 {m['R@5']:.3f} MRR {m['MRR']:.3f}")

base, _ = crossval_grid(shipped_r)
rng = np.random.default_rng(0)
for name, fitter, cols, hps in [("pair_all", fit_pairwise, ALL, [0.01, 0.1, 1.0]),
                                ("list_all", fit_listwise, ALL, [0.01, 0.1, 1.0]),
                                ("lgb_evid", fit_lgb, EVID, [50, 150, 400])]:
    held, _, _ = run_learner(fitter, cols, hps)
    d_rr = np.array([rr(held, i) - rr(base, i) for i in allq])
    in5 = lambda h, i: any(t in items[i]["gold"] for t in h[i][:5])
    d5 = np.array([in5(held, i) - in5(base, i) for i in allq], dtype=float)
    boots = [(d_rr[s].mean(), d5[s].mean()) for s in (rng.integers(0, n, n) for _ in range(2000))]
    b = np.array(boots)
    print(f"{name} vs shipped: MRR {d_rr.mean():+.3f} (95% boot {np.percentile(b[:,0],2.5):+.3f}..{np.percentile(b[:,0],97.5):+.3f}); "
          f"R@5 {d5.mean():+.3f} (95% {np.percentile(b[:,1],2.5):+.3f}..{np.percentile(b[:,1],97.5):+.3f}); "
          f"queries better/worse in RR: {(d_rr>1e-9).sum()}/{(d_rr<-1e-9).sum()}; into/out of top5: {(d5>0).sum()}/{(d5<0).sum()}")
