#!/usr/bin/env python3
"""Chooses the fusion weights of afd-runtime's semantic search by k-fold cross-validation.

Input: for each development query set, its queries (`--queries`) and the evidence file that
`afd-search-eval --model DIR --evidence FILE.jsonl` wrote for it (`--evidence`, same order).
The union of the sets is cut into K folds stratified by set and query style (the queries of
each (set, style) group, in id order, are dealt round-robin). For each fold, the grid point
with the best mean of Recall@5 and MRR on the other folds is scored on the held-out fold;
the figures reported are those held-out scores. The last line gives the grid point that is
best on all queries together: the constants `LEXICAL` and `DEPTH` of
`afd-runtime/src/search/semantic/fuse.rs`.

The fused score mirrors fuse.rs: the union of the best DEPTH documents lexically and by
cosine, each scored LEXICAL * lexical / best_lexical
+ (1 - LEXICAL) * max(0, cosine - floor) / (best_cosine - floor), floor being the DEPTH-th
best cosine. Only grid points are compared: no query is looked at one by one.

    python3 cv.py --queries dev.jsonl dev2.jsonl --evidence ev1.jsonl ev2.jsonl [--folds 5]
"""
import argparse
import json
from collections import defaultdict
from pathlib import Path

LEXICAL_GRID = [round(0.05 * i, 2) for i in range(21)]
DEPTH_GRID = [5, 10, 20, 30, 40, 50]
STYLES = ["intent", "keywords", "synonym", "typo", "multi"]


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def ranked(candidates, lexical_weight, depth):
    lexical_top = {c["tool"] for c in [c for c in candidates if c["lexical"] is not None][:depth]}
    dense_top = {c["tool"] for c in sorted(candidates, key=lambda c: -c["cosine"])[:depth]}
    pool = {
        c["tool"]: {**c, "lexical": c["lexical"] if c["tool"] in lexical_top else None}
        for c in candidates
        if c["tool"] in lexical_top or c["tool"] in dense_top
    }
    if not pool:
        return []
    best_lex = max((c["lexical"] for c in pool.values() if c["lexical"] is not None), default=0.0)
    cos = sorted((c["cosine"] for c in pool.values()), reverse=True)
    best_cos = cos[0]
    floor = cos[depth - 1] if len(cos) >= depth else cos[-1]
    spread = max(best_cos - floor, 1e-6)

    def score(c):
        lex = c["lexical"] / best_lex if c["lexical"] is not None and best_lex > 0 else 0.0
        dense = max(0.0, (c["cosine"] - floor) / spread)
        return lexical_weight * lex + (1 - lexical_weight) * dense

    return [t for t, _ in sorted(((t, score(c)) for t, c in pool.items()), key=lambda x: -x[1])][:10]


def metrics(rows):
    """rows: (gold set, ranked list). Returns R@1, R@5, R@10, MRR."""
    n = max(len(rows), 1)
    r1 = r5 = r10 = mrr = 0.0
    for gold, ranking in rows:
        rank = next((i + 1 for i, t in enumerate(ranking) if t in gold), None)
        if rank:
            r1 += rank <= 1
            r5 += rank <= 5
            r10 += rank <= 10
            mrr += 1 / rank
    return {"R@1": r1 / n, "R@5": r5 / n, "R@10": r10 / n, "MRR": mrr / n}


def assign_folds(keys, folds):
    """keys: (set index, style, id) per query. Returns the fold of each query's position:
    the queries of each (set, style) group, in id order, dealt round-robin, each group
    starting where the previous one left off."""
    groups = defaultdict(list)
    for i, (s, style, _) in enumerate(keys):
        groups[(s, style)].append(i)
    fold_of = {}
    offset = 0
    for key in sorted(groups):
        for j, i in enumerate(sorted(groups[key], key=lambda i: str(keys[i][2]))):
            fold_of[i] = (j + offset) % folds
        offset += len(groups[key])
    return fold_of


def figures(m):
    """A row's Recall@1, @5, @10 and MRR, as the tables print them."""
    return f"{m['R@1']:.3f}  {m['R@5']:.3f}  {m['R@10']:.3f}  {m['MRR']:.3f}"


def set_label(path):
    """A query set's short name: `queries-dev2.jsonl` -> `dev2`."""
    return Path(path).stem.replace("queries-", "")


def choose_per_fold(grid, fold_of, n, folds, objective_on):
    """For each fold, the grid point with the best `objective_on(point, training indices)`
    on the other folds (the first such point on ties): {fold: (point, held-out indices)}."""
    chosen = {}
    for f in range(folds):
        train = [i for i in range(n) if fold_of[i] != f]
        test = [i for i in range(n) if fold_of[i] == f]
        chosen[f] = (max(grid, key=lambda p: objective_on(p, train)), test)
    return chosen


def objective(m):
    return (m["R@5"] + m["MRR"]) / 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", nargs="+", required=True)
    ap.add_argument("--evidence", nargs="+", required=True)
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args()

    items = []  # (set index, style, gold, candidates)
    for s, (qpath, epath) in enumerate(zip(args.queries, args.evidence)):
        queries = read_jsonl(qpath)
        evidence = {json.dumps(e["id"]): e["candidates"] for e in read_jsonl(epath)}
        for q in queries:
            items.append((s, q["style"], set(q["gold"]), evidence.get(json.dumps(q["id"]), []), q["id"]))

    fold_of = assign_folds([(item[0], item[1], item[4]) for item in items], args.folds)

    grid = [(w, d) for w in LEXICAL_GRID for d in DEPTH_GRID]
    rankings = {p: [ranked(item[3], *p) for item in items] for p in grid}

    def score(p, idx):
        return metrics([(items[i][2], rankings[p][i]) for i in idx])

    held_out = {}
    print("fold  chosen(LEXICAL, DEPTH)  n    R@1    R@5    R@10   MRR")
    chosen = choose_per_fold(
        grid, fold_of, len(items), args.folds, lambda p, train: (objective(score(p, train)), -abs(p[0] - 0.5))
    )
    for f, (best, test) in chosen.items():
        for i in test:
            held_out[i] = rankings[best][i]
        print(f"{f:<5} {str(best):<23} {len(test):<4} {figures(score(best, test))}")
        for name, p in [("  lexical only", (1.0, 50)), ("  dense only", (0.0, 50))]:
            print(f"{name:<29} {len(test):<4} {figures(score(p, test))}")

    def table(title, idx_rank):
        print(f"\n{title}")
        print("set     style      n    R@1    R@5    R@10   MRR")
        for s, path in list(enumerate(args.queries)) + [(None, "both")]:
            for style in [None] + STYLES:
                idx = [i for i in range(len(items)) if (s is None or items[i][0] == s) and (style is None or items[i][1] == style)]
                if not idx:
                    continue
                m = metrics([(items[i][2], idx_rank(i)) for i in idx])
                name = "both" if s is None else set_label(path)
                print(f"{name:<12} {style or 'all':<9} {len(idx):<4} {figures(m)}")

    table("cross-validated (each query ranked with the weights chosen on the other folds)", lambda i: held_out[i])
    best = max(grid, key=lambda p: (objective(score(p, range(len(items)))), -abs(p[0] - 0.5)))
    table(f"chosen on all queries: LEXICAL = {best[0]}, DEPTH = {best[1]} (in-sample)", lambda i: rankings[best][i])
    for name, p in [("dense only", (0.0, 50)), ("lexical only", (1.0, 50))]:
        table(f"{name} (LEXICAL = {p[0]})", lambda i, p=p: rankings[p][i])
    print(f"\nchosen: LEXICAL = {best[0]} DEPTH = {best[1]}")


if __name__ == "__main__":
    main()
