"""Held-out evaluation of learned rankers against the shipped fusion, on cv.py's 5 folds. Each
name given on the command line (default: all) is one ranker: `shipped` is cv.py's fusion with
its (LEXICAL, DEPTH) grid point chosen on the training folds; `rocchio` adds pseudo-relevance
feedback in embedding space to the cosine and chooses its weight the same way; `pair_*`
(pairwise logistic regression), `list_*` (listwise softmax regression) and `lgb_*` (LightGBM
lambdarank) learn from the evidence features only (`*_evid`) or all features (`*_all`), with
their one hyper-parameter chosen by inner 4-fold CV on the training queries only. Prints each
ranker's held-out table (set, style, n, R@1, R@5, R@10, MRR) and writes them all to
`results-<names>.json` in the experiment directory.
"""
import importlib.util, sys, json, warnings
import numpy as np
from scipy.optimize import minimize
from sklearn.linear_model import LogisticRegression
import lightgbm as lgb
import features as F
from data import CV_PY, WORK, folds, metrics, STYLES

warnings.filterwarnings("ignore")
spec = importlib.util.spec_from_file_location("cv", CV_PY)
cv = importlib.util.module_from_spec(spec); spec.loader.exec_module(cv)

items, X, G = F.build()
n = len(items)
fold = folds(items)
K = 5
NF = len(F.FEATURES)
EVID = [F.FEATURES.index(f) for f in ["lex_norm", "has_lex", "log_lex_rank", "lex_z", "cos", "cos_minus_best",
                                       "cos_norm", "log_cos_rank", "cos_z", "rrf", "both"]]
ALL = list(range(NF))
obj = lambda m: (m["R@5"] + m["MRR"]) / 2

def rank_of(i, scores):
    tools = G[i][0]
    return [tools[j] for j in np.argsort(-scores, kind="stable")[:10]]

def evaluate(idx, rankings):
    return metrics([(items[i]["gold"], rankings[i]) for i in idx])

# ---------- shipped fusion (cv.py's grid, chosen per fold on training folds) ----------
grid = [(w, d) for w in cv.LEXICAL_GRID for d in cv.DEPTH_GRID]
shipped_r = {p: [cv.ranked(it["cands"], *p) for it in items] for p in grid}
def fit_grid(rankings_by_p, train, tie=lambda p: -abs(p[0] - 0.5)):
    return max(rankings_by_p, key=lambda p: (obj(evaluate(train, rankings_by_p[p])), tie(p)))

# ---------- Rocchio PRF in embedding space: cos' = cos + a * (d . mean of top-3 dense) ----------
ROCCHIO_A = [0.0, 0.25, 0.5, 1.0, 2.0]
ci = F.FEATURES.index("prf_dense3")
def rocchio_cands(i, a):
    return [{**c, "cosine": c["cosine"] + a * X[i][j, ci]} for j, c in enumerate(items[i]["cands"])]
roc_grid = [(w, 50, a) for w in cv.LEXICAL_GRID for a in ROCCHIO_A]
roc_r = {p: [cv.ranked(rocchio_cands(i, p[2]), p[0], p[1]) for i in range(n)] for p in roc_grid}

# ---------- learners ----------
def standardizer(train, cols):
    A = np.vstack([X[i][:, cols] for i in train])
    mu, sd = A.mean(0), A.std(0) + 1e-9
    return lambda i: (X[i][:, cols] - mu) / sd

def fit_pairwise(train, cols, C):
    z = standardizer(train, cols)
    D = []
    for i in train:
        y = G[i][1]
        if not y.any():
            continue
        Z = z(i)
        for g in np.where(y)[0]:
            D.append(Z[g] - Z[~y])
    D = np.vstack(D)
    # every (gold, non-gold) difference is one example, in both signs so the classes balance;
    # no intercept, so the scorer is linear in the features
    Xp = np.vstack([D, -D]); yp = np.r_[np.ones(len(D)), np.zeros(len(D))]
    m = LogisticRegression(C=C, fit_intercept=False, max_iter=2000).fit(Xp, yp)
    w = m.coef_[0]
    return (lambda i: z(i) @ w), w

def fit_listwise(train, cols, C):
    z = standardizer(train, cols)
    data = [(z(i), G[i][1]) for i in train if G[i][1].any()]
    def f(w):
        loss = 0.5 / C * w @ w; grad = w / C
        for Z, y in data:
            s = Z @ w; s = s - s.max(); p = np.exp(s); p /= p.sum()
            # -log sum_{gold} p  (any gold counts)
            pg = p[y].sum(); loss -= np.log(pg + 1e-12)
            q = np.where(y, p / (pg + 1e-12), 0.0)
            grad += Z.T @ (p - q)
        return loss, grad
    w = minimize(f, np.zeros(len(cols)), jac=True, method="L-BFGS-B").x
    return (lambda i: z(i) @ w), w

LGB_PARAMS = dict(objective="lambdarank", metric="ndcg", learning_rate=0.05, num_leaves=7, max_depth=3,
                  min_data_in_leaf=40, min_sum_hessian_in_leaf=1.0, feature_fraction=0.7, bagging_fraction=0.8,
                  bagging_freq=1, lambda_l2=10.0, lambdarank_truncation_level=20, verbose=-1, num_threads=1, seed=1)
def fit_lgb(train, cols, n_trees):
    tr = [i for i in train if G[i][1].any()]
    A = np.vstack([X[i][:, cols] for i in tr]); y = np.concatenate([G[i][1].astype(int) for i in tr])
    ds = lgb.Dataset(A, y, group=[len(G[i][1]) for i in tr])
    m = lgb.train(LGB_PARAMS, ds, num_boost_round=n_trees)
    return (lambda i: m.predict(X[i][:, cols])), m.feature_importance("gain")

def nested(fitter, cols, hps, train):
    """Chooses the hyper-parameter by inner 4-fold CV on the training queries only."""
    if len(hps) == 1:
        return hps[0]
    inner = {i: k % 4 for k, i in enumerate(sorted(train, key=lambda i: (items[i]["set"], items[i]["style"], str(items[i]["id"]))))}
    best, bestv = None, -1
    for hp in hps:
        rk = {}
        for f in range(4):
            itr = [i for i in train if inner[i] != f]; ite = [i for i in train if inner[i] == f]
            sc, _ = fitter(itr, cols, hp)
            for i in ite:
                rk[i] = rank_of(i, sc(i))
        v = obj(evaluate(train, rk))
        if v > bestv:
            best, bestv = hp, v
    return best

def run_learner(fitter, cols, hps):
    held, chosen, weights = {}, [], []
    for f in range(K):
        train = [i for i in range(n) if fold[i] != f]; test = [i for i in range(n) if fold[i] == f]
        hp = nested(fitter, cols, hps, train)
        sc, w = fitter(train, cols, hp)
        chosen.append(hp); weights.append(w)
        for i in test:
            held[i] = rank_of(i, sc(i))
    return held, chosen, np.mean(weights, axis=0)

def crossval_grid(rk_by_p):
    held, chosen = {}, []
    for f in range(K):
        train = [i for i in range(n) if fold[i] != f]
        p = fit_grid(rk_by_p, train); chosen.append(p)
        for i in range(n):
            if fold[i] == f:
                held[i] = rk_by_p[p][i]
    return held, chosen

def table(name, held, out):
    rows = []
    for s, sname in [(0, "dev"), (1, "dev2"), (None, "both")]:
        idx = [i for i in range(n) if s is None or items[i]["set"] == s]
        m = evaluate(idx, held); rows.append((sname, "all", len(idx), m))
    for st in STYLES:
        idx = [i for i in range(n) if items[i]["style"] == st]
        rows.append(("both", st, len(idx), evaluate(idx, held)))
    out[name] = {f"{a}/{b}": m for a, b, _, m in rows}
    print(f"\n== {name}")
    for a, b, k, m in rows:
        print(f"{a:<5} {b:<9} {k:<4} {m['R@1']:.3f} {m['R@5']:.3f} {m['R@10']:.3f} {m['MRR']:.3f}")

if __name__ == "__main__":
    out = {}
    which = sys.argv[1:] or ["shipped", "rocchio", "pair_evid", "pair_all", "list_evid", "list_all", "lgb_evid", "lgb_all"]
    Cs = [0.01, 0.1, 1.0]
    for name in which:
        if name == "shipped":
            held, ch = crossval_grid(shipped_r); print("chosen", ch)
        elif name == "rocchio":
            held, ch = crossval_grid(roc_r); print("chosen (LEXICAL, DEPTH, a)", ch)
        else:
            kind, fs = name.split("_"); cols = EVID if fs == "evid" else ALL
            fitter, hps = {"pair": (fit_pairwise, Cs), "list": (fit_listwise, Cs), "lgb": (fit_lgb, [50, 150, 400])}[kind]
            held, ch, w = run_learner(fitter, cols, hps)
            print("chosen", ch)
            order = np.argsort(-np.abs(w))
            print("weights/importance (mean over folds):", ", ".join(f"{F.FEATURES[cols[j]]}={w[j]:.3g}" for j in order))
        table(name, held, out)
        json.dump(out, open(WORK / f"results-{'-'.join(which)}.json", "w"), indent=1)
