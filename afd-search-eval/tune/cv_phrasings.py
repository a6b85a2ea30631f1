#!/usr/bin/env python3
"""Chooses how afd-runtime fuses the rankings of several phrasings of one request, by k-fold
cross-validation.

Input: for each development query set, its queries (`--queries`) and the lists file that
`afd-search-eval --alternatives ALTS --lists FILE.jsonl` wrote for it (`--lists`, same
order): per query, each phrasing's own ranking (its best 50 with their scores), the request
first; and, optionally, the same lists ranked with the semantic layer (`--model`), as
`--semantic-lists`. With both, one mechanism is chosen for both modes (the objective is
averaged over them; a query's two modes sit in the same fold), as the runtime has one.

The family compared (a small one, so that the choice generalises):
- `rrf`: reciprocal rank, sum of weight / (K + rank), K in RRF_K;
- `sum`: normalised score sum, sum of weight * score / best score of that ranking;
- `mnz`: the same sum times the number of rankings that hold the document;
- `pow`: a sharpened sum, sum of weight * (score / best score) ** K, K in POW (K = 1 is
  `sum`): the larger K, the more a phrasing's vote goes to its own best few documents
  (the runtime reports the K-th root of the weighted mean, the power mean of order K,
  which ranks alike);
each with a weight per position: FIRST for the request, 1 for the first added phrasing,
LAST for the second (LAST < 1 trusts the order the phrasings were written in).

Conditions: 2 and 3 phrasings (the request and the first added one, or all), with the added
phrasings in their order ("kept") and shuffled (each query's added phrasings in a random
order, SHUFFLES seeded draws). The union of the sets is cut into the folds of `cv.py`
(stratified by set and query style). For each fold, the mechanism with the best objective
on the other folds with the added phrasings shuffled (2 and 3 phrasings, averaged) is
scored on the held-out fold, in every condition; the figures are those held-out scores.
Choosing on shuffled phrasings means the order an agent happens to write them in is not
counted on: a weight that wins only when the order is kept (the development phrasings'
writer tended to put the best first) is not chosen. The objective is the mean of Recall@1
and MRR, the figures the fusion is judged by. The last line names the mechanism best on
all queries together: what `afd-runtime/src/search/phrasings.rs` ships.

    python3 cv_phrasings.py --queries dev.jsonl dev2.jsonl --lists l1.jsonl l2.jsonl \
        [--semantic-lists s1.jsonl s2.jsonl] [--folds 5]
"""
import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cv import STYLES, assign_folds, choose_per_fold, figures, metrics, read_jsonl, set_label  # noqa: E402

RRF_K = [1, 3, 10, 30, 60]
FIRST = [0.25, 0.5, 0.75, 1.0, 1.5, 2.0]
LAST = [1.0, 0.75, 0.5]
POW = [2, 3, 4, 6]
SHUFFLES = 5
DEPTH = 50


def family():
    out = []
    for first in FIRST:
        for last in LAST:
            for k in RRF_K:
                out.append(("rrf", k, first, last))
            out.append(("sum", None, first, last))
            out.append(("mnz", None, first, last))
            for k in POW:
                out.append(("pow", k, first, last))
    return out


def name(p):
    kind, k, first, last = p
    text = f"{kind}(K={k}," if kind in ("rrf", "pow") else f"{kind}("
    return f"{text}FIRST={first},LAST={last})"


def fuse(lists, p):
    """lists: each phrasing's [(tool, score)], the request first. Returns the top 10."""
    kind, k, first, last = p
    scores, counts = {}, {}
    for position, ranking in enumerate(lists):
        weight = first if position == 0 else (1.0 if position == 1 else last)
        best = ranking[0][1] if ranking else 0.0
        for at, (tool, score) in enumerate(ranking[:DEPTH]):
            if kind == "rrf":
                share = weight / (k + 1 + at)
            elif kind == "pow":
                share = weight * ((score / best) ** k if best > 0 else 0.0)
            else:
                share = weight * (score / best if best > 0 else 0.0)
            scores[tool] = scores.get(tool, 0.0) + share
            counts[tool] = counts.get(tool, 0) + 1
    if kind == "mnz":
        scores = {t: s * counts[t] for t, s in scores.items()}
    return [t for t, _ in sorted(scores.items(), key=lambda x: -x[1])][:10]


def objective(m):
    return (m["R@1"] + m["MRR"]) / 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", nargs="+", required=True)
    ap.add_argument("--lists", nargs="+", required=True)
    ap.add_argument("--semantic-lists", nargs="+", default=[])
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args()

    modes = [("lexical", args.lists)] + ([("semantic", args.semantic_lists)] if args.semantic_lists else [])
    items = []  # (set index, style, gold, lists, id, mode)
    for mode, lpaths in modes:
        if len(lpaths) != len(args.queries):
            sys.exit(f"one {mode} lists file per query set")
        for s, (qpath, lpath) in enumerate(zip(args.queries, lpaths)):
            lists = {json.dumps(e["id"]): e["lists"] for e in read_jsonl(lpath)}
            for q in read_jsonl(qpath):
                ranked = lists.get(json.dumps(q["id"]))
                if ranked is None or len(ranked) < 3:
                    sys.exit(f"{lpath}: no three phrasings for query {q['id']}")
                ranked = [[(c["tool"], c["score"]) for c in ranking] for ranking in ranked]
                items.append((s, q["style"], set(q["gold"]), ranked, q["id"], mode))
    # The folds of the queries (the first mode's items); each query's other modes follow it.
    first_mode = [it for it in items if it[5] == modes[0][0]]
    fold_of_query = assign_folds([(it[0], it[1], it[4]) for it in first_mode], args.folds)
    fold_by_id = {(it[0], json.dumps(it[4])): fold_of_query[i] for i, it in enumerate(first_mode)}
    fold_of = {i: fold_by_id[(it[0], json.dumps(it[4]))] for i, it in enumerate(items)}

    # Each condition: for each query, the phrasings' rankings in the order fused.
    orders = {}
    for n in (2, 3):
        orders[(n, "kept")] = [[it[3][:n]] for it in items]
        draws = []
        for it in items:
            per = []
            for seed in range(SHUFFLES):
                alts = it[3][1:]
                random.Random(f"{seed}/{it[4]}").shuffle(alts)
                per.append([it[3][0]] + alts[: n - 1])
            draws.append(per)
        orders[(n, "shuffled")] = draws
    conditions = list(orders)
    grid = family()
    # rankings[p][cond][i] = the top 10 of each draw.
    rankings = {
        p: {c: [[fuse(lists, p) for lists in orders[c][i]] for i in range(len(items))] for c in conditions}
        for p in grid
    }
    alone = [[[t for t, _ in it[3][0]][:10]] for it in items]

    def score(top, idx):
        rows = [(items[i][2], r) for i in idx for r in top[i]]
        return metrics(rows)

    chosen_on = [c for c in conditions if c[1] == "shuffled"]

    def overall(p, idx):
        return sum(objective(score(rankings[p][c], idx)) for c in chosen_on) / len(chosen_on)

    chosen = {}
    print("fold  chosen                                   n")
    for f, (best, _) in choose_per_fold(grid, fold_of, len(items), args.folds, overall).items():
        chosen[f] = best
        print(f"{f:<5} {name(best):<40} {sum(1 for i, it in enumerate(first_mode) if fold_of_query[i] == f)}")

    def table(title, top_of):
        print(f"\n{title}")
        print("mode      set          phrasings  order     n    R@1    R@5    R@10   MRR")
        sets = list(enumerate(args.queries)) + [(None, "both")]
        for mode, _ in modes:
            for s, path in sets:
                idx = [i for i in range(len(items)) if items[i][5] == mode and (s is None or items[i][0] == s)]
                label = "both" if s is None else set_label(path)
                m = score(alone, idx)
                print(f"{mode:<9} {label:<12} 1          -         {len(idx):<4} {figures(m)}")
                for c in conditions:
                    m = score({i: top_of(c, i) for i in idx}, idx)
                    print(f"{mode:<9} {label:<12} {c[0]}          {c[1]:<9} {len(idx):<4} {figures(m)}")

    table(
        "cross-validated (each query fused by the mechanism chosen on the other folds)",
        lambda c, i: rankings[chosen[fold_of[i]]][c][i],
    )

    def styles(title, top_of):
        print(f"\n{title}")
        print("mode      style      n    R@1    R@5    R@10   MRR")
        for mode, _ in modes:
            for style in STYLES:
                idx = [i for i in range(len(items)) if items[i][1] == style and items[i][5] == mode]
                m = score({i: top_of(i) for i in idx}, idx)
                print(f"{mode:<9} {style:<10} {len(idx):<4} {figures(m)}")

    styles("cross-validated, both sets, 3 phrasings shuffled, by style", lambda i: rankings[chosen[fold_of[i]]][(3, "shuffled")][i])
    everything = range(len(items))
    ranked_grid = sorted(grid, key=lambda p: -overall(p, everything))
    print("\nthe family on all queries (objective: mean of R@1 and MRR, shuffled, 2 and 3 phrasings;")
    print("then the mean of R@1 and MRR per condition: 2k = 2 phrasings kept, 3s = 3 shuffled, ...)")
    for p in ranked_grid[:8] + [q for q in grid if q[2] == 1.0 and q[3] == 1.0 and q not in ranked_grid[:8]]:
        parts = "  ".join(f"{c[0]}{c[1][0]} {objective(score(rankings[p][c], everything)):.3f}" for c in conditions)
        print(f"{name(p):<40} {overall(p, everything):.4f}   {parts}")
    best = ranked_grid[0]
    table(f"chosen on all queries: {name(best)} (in-sample)", lambda c, i: rankings[best][c][i])
    print(f"\nchosen: {name(best)}")


if __name__ == "__main__":
    main()
