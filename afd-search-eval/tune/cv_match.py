#!/usr/bin/env python3
"""Chooses how afd-discover tells a request the catalog can serve from one it cannot (its
`match`: strong, weak or none), by k-fold cross-validation.

Input: pairs of a query file and the match-evidence file `afd-search-eval
--match-evidence FILE.jsonl` wrote for it (same order): `--answerable Q.jsonl E.jsonl`
for sets with gold tools, `--none Q.jsonl E.jsonl` for requests no tool can serve. Each
evidence line holds, for the fused best commands, their fused score and what each covers
of every phrasing (`SearchIndex::coverage`: the share of its concepts, whether the name
names the action it leads with, whether the command is of a category it names), and each
phrasing's own best commands.

Every query gets a *fit* from its best command (a family of small formulas
below, one weight grid each); `none` is answered under a threshold. The threshold is set,
on the training folds, at the fit under which the share LOSS of the answerable requests
falls (2% by default: the target is at most 3% lost on held-out queries, which 2% on the
training folds keeps on both development sets and 1.5% did not on the first), and the
family member that then answers `none` to the most no-tool requests (ties: to the fewest
answerable ones) is chosen. Folds are by query (`cv.py`'s, stratified by set
and style; the no-tool queries dealt the same way), so no figure comes from a query its
threshold was set on. `strong` is answered above a second threshold, set on the training
folds where 95% of the answers above it have the right command first.

The figures: the held-out share of no-tool requests answered `none` (near misses apart),
the share of answerable requests answered `none` (and of those whose right command was on
the page), the share answered `weak`, and Recall@1 / MRR of the answerable ones, which the
decision does not change (it only labels the page). The last lines give the member and
thresholds chosen on all queries together: what afd-runtime ships.

    python3 cv_match.py --answerable dev.jsonl e1.jsonl --answerable dev2.jsonl e2.jsonl \
        --none none.jsonl e3.jsonl [--folds 5] [--loss 0.02]
"""
import argparse
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cv import assign_folds, read_jsonl  # noqa: E402

PAGE = 10


def features(evidence):
    """What the decision may read of one query's evidence: its best command's coverage of
    each phrasing, whether its name names each phrasing's action and its category the one
    they name, the phrasings' agreement on it, the runner-up's distance."""
    best = evidence["best"]
    if not best:
        return None
    top = best[0]
    cov = [c["share"] for c in top["coverage"]]
    missed = [c["missed"] for c in top["coverage"]]
    firsts = [r[0][0] for r in evidence["rankings"] if r]
    agree = sum(1 for t in firsts if t == top["tool"]) / max(len(evidence["rankings"]), 1)
    second = best[1]["score"] / top["score"] if len(best) > 1 and top["score"] > 0 else 0.0
    # Each phrasing's best coverage among the fused best few: does any listed command cover
    # what that phrasing asks?
    best_cov = [max(b["coverage"][p]["share"] for b in best) for p in range(len(cov))]
    # Whether the name's verb names the action each phrasing leads with (None: unknown).
    actions = [c.get("action") for c in top["coverage"]]
    # Whether the best command is of the category the phrasings name (None: none named).
    named = [c.get("category") for c in top["coverage"] if c.get("category") is not None]
    return {
        "category_other": 1.0 if named and not any(named) else 0.0,
        "conflict_share": sum(1 for a in actions if a is False) / len(actions),
        "cov_req": cov[0],
        "cov_mean": sum(cov) / len(cov),
        "cov_min": min(cov),
        "cov_max": max(cov),
        "cov_alts": sum(cov[1:]) / len(cov[1:]) if len(cov) > 1 else cov[0],
        "missed_max": max(missed),
        "missed_mean": sum(missed) / len(missed),
        "unknown": top["coverage"][0]["unknown"],
        "agree": agree,
        "gap": 1.0 - second,
        "fused": top["score"],
        "cosine": top.get("cosine"),
        "top_cosine": evidence.get("topCosine"),
    }


def members(semantic):
    """The family: (name, fit function). Each is a weighted mean of coverage (a choice of
    which), agreement and one minus the rarest missed word, with coarse weights; with the
    semantic layer, the best command's cosine too; less a penalty for the share of
    phrasings that lead with an action the best command's name does not name, and one for
    a best command of another category than the phrasings name."""
    out = []
    for cov in ["cov_req", "cov_mean", "cov_min", "cov_alts"]:
        for wa, wm in itertools.product([0, 0.25, 0.5, 1.0], [0, 0.25, 0.5, 1.0]):
            for wc in [0, 0.5, 1.0] if semantic else [0]:
                for wv, wk in itertools.product([0, 0.1, 0.2, 0.3, 0.4, 0.5], [0, 0.1, 0.2, 0.3, 0.5]):

                    def fit(f, cov=cov, wa=wa, wm=wm, wc=wc, wv=wv, wk=wk):
                        total = 1 + wa + wm + wc
                        s = f[cov] + wa * f["agree"] + wm * (1 - f["missed_max"])
                        if wc:
                            s += wc * (f["cosine"] if f["cosine"] is not None else 0.0)
                        return s / total - wv * f["conflict_share"] - wk * f["category_other"]

                    out.append((f"{cov} + {wa} agree + {wm} (1 - missed) + {wc} cosine"
                                f" - {wv} action conflicts - {wk} other category", fit))
    return out


def hit_rows(evidence, cov_key, gold):
    """Per hit of the page: (features, whether it is a right command)."""
    best = evidence["best"]
    if not best:
        return []
    firsts = [r[0][0] for r in evidence["rankings"] if r]
    n = max(len(evidence["rankings"]), 1)
    top = best[0]["score"] or 1.0
    rows = []
    for position, hit in enumerate(best):
        cov = [c["share"] for c in hit["coverage"]]
        pick = {"cov_req": cov[0], "cov_mean": sum(cov) / len(cov), "cov_min": min(cov),
                "cov_alts": sum(cov[1:]) / len(cov[1:]) if len(cov) > 1 else cov[0]}[cov_key]
        agree = sum(1 for t in firsts if t == hit["tool"]) / n
        missed = max(c["missed"] for c in hit["coverage"])
        rows.append(([pick, agree, 1 - missed, hit["score"] / top, 1.0 if position == 0 else 0.0],
                     hit["tool"] in gold))
    return rows


def sigmoid(z):
    import math
    return 1 / (1 + math.exp(-max(min(z, 30), -30)))


def logistic(rows, steps=2000, rate=0.5, l2=1e-3):
    """Weights (bias first) of a logistic regression by gradient descent."""
    d = len(rows[0][0])
    w = [0.0] * (d + 1)
    n = len(rows)
    for _ in range(steps):
        g = [0.0] * (d + 1)
        for x, y in rows:
            p = sigmoid(w[0] + sum(wi * xi for wi, xi in zip(w[1:], x)))
            e = p - y
            g[0] += e
            for j, xi in enumerate(x):
                g[j + 1] += e * xi
        w = [wi - rate * (gi / n + l2 * wi * (j > 0)) for j, (wi, gi) in enumerate(zip(w, g))]
    return w


def calibration(pairs):
    """Brier score and expected calibration error (10 bins) of (confidence, right) pairs."""
    brier = sum((p - y) ** 2 for p, y in pairs) / len(pairs)
    bins = [[] for _ in range(10)]
    for p, y in pairs:
        bins[min(int(p * 10), 9)].append((p, y))
    ece = sum(abs(sum(p for p, _ in b) - sum(y for _, y in b)) for b in bins if b) / len(pairs)
    table = [(i / 10, len(b), sum(p for p, _ in b) / len(b), sum(y for _, y in b) / len(b)) for i, b in enumerate(bins) if b]
    return brier, ece, table


def rank_of(gold, ranked):
    return next((i + 1 for i, t in enumerate(ranked) if t in gold), None)


def threshold(fits_answerable, loss):
    """The fit under which at most `loss` of the answerable fits fall."""
    values = sorted(fits_answerable)
    if not values:
        return 0.0
    k = int(loss * len(values))
    return values[k] - 1e-6 if k < len(values) else values[-1]


def strong_threshold(rows):
    """The lowest fit above which 95% of the answerable answers have the right command
    first and no-tool answers count as wrong."""
    ordered = sorted(rows, key=lambda r: -r[0])
    right = total = 0
    best = 1.01
    for fit, correct in ordered:
        total += 1
        right += correct
        if total >= 10 and right / total >= 0.95:
            best = fit
    return best


def choose(items, idx, family, loss):
    """The family member and thresholds best on the queries `idx`."""
    best = None
    for name, fit in family:
        ans = [fit(items[i]["f"]) for i in idx if items[i]["kind"] == "answerable"]
        t = threshold(ans, loss)
        none = [fit(items[i]["f"]) < t for i in idx if items[i]["kind"] == "none"]
        lost = sum(1 for a in ans if a < t)
        key = (sum(none) / max(len(none), 1), -lost)
        if best is None or key > best[0]:
            rows = [
                (fit(items[i]["f"]), items[i]["kind"] == "answerable" and items[i]["rank"] == 1)
                for i in idx
            ]
            best = (key, name, fit, t, strong_threshold(rows))
    return best[1:]


def report(title, items, decide):
    print(f"\n{title}")
    print(f"{'set':<14}{'n':>5}  none   weak   strong  lost  lost(on page)  R@1    MRR")
    groups = {}
    for it in items:
        groups.setdefault(it["set"], []).append(it)
        if it["kind"] == "none":
            groups.setdefault(f"{it['set']}:{it['style'] == 'near-miss' and 'near' or 'other'}", []).append(it)
    for name in sorted(groups):
        rows = groups[name]
        labels = [decide(it) for it in rows]
        n = len(rows)
        share = lambda label: sum(1 for l in labels if l == label) / n  # noqa: E731
        ans = [it for it in rows if it["kind"] == "answerable"]
        if ans:
            lost_page = sum(1 for it, l in zip(rows, labels) if l == "none" and it["rank"]) / n
            r1 = sum(1 for it in ans if it["rank"] == 1) / n
            mrr = sum(1 / it["rank"] for it in ans if it["rank"]) / n
            print(f"{name:<14}{n:>5}  {share('none'):.3f}  {share('weak'):.3f}  {share('strong'):.3f}   "
                  f"{share('none'):.3f} {lost_page:.3f}          {r1:.3f}  {mrr:.3f}")
        else:
            print(f"{name:<14}{n:>5}  {share('none'):.3f}  {share('weak'):.3f}  {share('strong'):.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--answerable", nargs=2, action="append", default=[], metavar=("Q", "E"))
    ap.add_argument("--none", nargs=2, action="append", default=[], metavar=("Q", "E"))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--loss", type=float, default=0.02,
                    help="share of answerable training queries a threshold may answer `none`")
    ap.add_argument("--semantic", action="store_true", help="the evidence has cosines")
    args = ap.parse_args()

    items = []
    evidences = []
    for kind, pairs in [("answerable", args.answerable), ("none", args.none)]:
        for qpath, epath in pairs:
            name = Path(qpath).stem.replace("queries-", "")
            for q, e in zip(read_jsonl(qpath), read_jsonl(epath)):
                assert q["id"] == e["id"], (qpath, q["id"], e["id"])
                f = features(e["evidence"])
                ranked = [b["tool"] for b in e["evidence"]["best"]] + [
                    t for t, _ in (e["evidence"]["rankings"][0] if e["evidence"]["rankings"] else [])
                ]
                gold = set(q.get("gold", []))
                evidences.append(e["evidence"])
                set_name = name if kind == "answerable" else f"{name}:{q.get('set', 'public')}"
                items.append({
                    "id": q["id"], "kind": kind, "set": set_name, "style": q.get("style"),
                    "f": f or {k: 0.0 for k in ["cov_req", "cov_mean", "cov_min", "cov_max", "cov_alts",
                                                 "missed_max", "missed_mean", "unknown", "agree",
                                                 "gap", "fused", "category_other", "conflict_share"]} | {"cosine": None, "top_cosine": None},
                    "rank": rank_of(gold, ranked[:PAGE]) if gold else None,
                    "gold": gold,
                })
    keys = [(it["set"], it["style"], it["id"]) for it in items]
    fold_of = assign_folds(keys, args.folds)
    family = members(args.semantic)
    decision = {}
    for k in range(args.folds):
        train = [i for i in range(len(items)) if fold_of[i] != k]
        name, fit, t_none, t_strong = choose(items, train, family, args.loss)
        print(f"fold {k}: {name}, none under {t_none:.3f}, strong from {t_strong:.3f}")
        for i in range(len(items)):
            if fold_of[i] == k:
                s = fit(items[i]["f"])
                decision[i] = "none" if s < t_none else "strong" if s >= t_strong else "weak"
    index = {id(it): i for i, it in enumerate(items)}
    report("cross-validated (each query decided by the member and thresholds chosen on the other folds)",
           items, lambda it: decision[index[id(it)]])
    # Confidence per hit: a logistic regression on the hit's coverage (as the chosen
    # member reads it), agreement, rarest missed word, score relative to the best, and
    # whether it is first; held out by the same folds.
    cov_key = choose(items, range(len(items)), family, args.loss)[0].split(" ")[0]
    for it, e in zip(items, evidences):
        it["hits"] = hit_rows(e, cov_key, it["gold"])
    held = []
    for k in range(args.folds):
        train = [r for i, it in enumerate(items) if fold_of[i] != k for r in it["hits"]]
        w = logistic(train)
        for i, it in enumerate(items):
            if fold_of[i] == k:
                held += [(sigmoid(w[0] + sum(wi * xi for wi, xi in zip(w[1:], x))), y) for x, y in it["hits"]]
    brier, ece, table = calibration(held)
    print(f"\nconfidence per hit, cross-validated: Brier {brier:.4f}, ECE {ece:.4f} over {len(held)} hits")
    for low, n, mean_p, rate in table:
        print(f"  [{low:.1f}, {low + 0.1:.1f}): {n:>5} hits, mean confidence {mean_p:.3f}, right {rate:.3f}")
    w = logistic([r for it in items for r in it["hits"]])
    print("confidence weights on all queries (bias, coverage, agreement, 1 - missed, relative score, first):",
          ", ".join(f"{x:.3f}" for x in w))
    name, fit, t_none, t_strong = choose(items, range(len(items)), family, args.loss)
    report(f"chosen on all queries: {name}, none under {t_none:.3f}, strong from {t_strong:.3f} (in-sample)",
           items, lambda it: "none" if fit(it["f"]) < t_none else "strong" if fit(it["f"]) >= t_strong else "weak")


if __name__ == "__main__":
    main()
