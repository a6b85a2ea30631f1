"""Per-query paired comparison of an adapted model TAG against the base model. usage:
paired.py TAG. From ev-base-*.jsonl and ev-TAG-*.jsonl in the experiment directory, ranks every
query with cv.py's fusion held out (cv.py's folds; on each fold, the grid point best on the
other folds) and dense only (LEXICAL 0, DEPTH 50), and prints, for each, how many queries
improve and worsen in reciprocal rank and the MRR and R@5 differences with paired-bootstrap
95% intervals (2000 resamples, seed 0).
"""
import sys, json, random
from common import EVAL, TUNE, WORK, read_jsonl
sys.path.insert(0, str(TUNE))
import cv

def held_out(tag):
    items = []
    for s, name in enumerate(["dev", "dev2"]):
        ev = {json.dumps(e["id"]): e["candidates"] for e in read_jsonl(WORK / f"ev-{tag}-{name}.jsonl")}
        for q in read_jsonl(EVAL / f"queries-{name}.jsonl"):
            items.append((s, q["style"], set(q["gold"]), ev[json.dumps(q["id"])], q["id"]))
    # cv.py's folds: each (set, style) group in id order, dealt round-robin with an offset
    groups = {}
    for i, it in enumerate(items): groups.setdefault((it[0], it[1]), []).append(i)
    fold, off = {}, 0
    for k in sorted(groups):
        for j, i in enumerate(sorted(groups[k], key=lambda i: str(items[i][4]))): fold[i] = (j + off) % 5
        off += len(groups[k])
    grid = [(w, d) for w in cv.LEXICAL_GRID for d in cv.DEPTH_GRID]
    R = {p: [cv.ranked(it[3], *p) for it in items] for p in grid}
    sc = lambda p, idx: cv.metrics([(items[i][2], R[p][i]) for i in idx])
    out = {}
    for f in range(5):
        tr = [i for i in range(len(items)) if fold[i] != f]
        best = max(grid, key=lambda p: (cv.objective(sc(p, tr)), -abs(p[0] - 0.5)))
        for i in range(len(items)):
            if fold[i] == f: out[i] = R[best][i]
    dense = R[(0.0, 50)]
    rr = lambda g, r: next((1 / (k + 1) for k, t in enumerate(r) if t in g), 0.0)
    return [(rr(items[i][2], out[i]), rr(items[i][2], dense[i])) for i in range(len(items))]

a, b = held_out("base"), held_out(sys.argv[1])
random.seed(0)
for k, name in ((0, "fused held-out"), (1, "dense only")):
    d = [y[k] - x[k] for x, y in zip(a, b)]
    # in the top 5 <=> reciprocal rank >= 1/5
    d5 = [(y[k] >= 0.2) - (x[k] >= 0.2) for x, y in zip(a, b)]
    boot = sorted(sum(random.choice(d) for _ in d) / len(d) for _ in range(2000))
    boot5 = sorted(sum(random.choice(d5) for _ in d5) / len(d5) for _ in range(2000))
    print(f"{name}: better {sum(x > 0 for x in d)}, worse {sum(x < 0 for x in d)} queries; "
          f"dMRR {sum(d)/len(d):+.3f} [95% {boot[50]:+.3f},{boot[1949]:+.3f}]; "
          f"dR@5 {sum(d5)/len(d5):+.3f} [95% {boot5[50]:+.3f},{boot5[1949]:+.3f}]")
