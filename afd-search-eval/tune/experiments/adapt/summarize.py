"""Prints a compact table from the cv-TAG.txt files (written by eval_model.py) in the experiment
directory. usage: summarize.py TAG... For each TAG, dense-only and fused held-out (cv.py's
5-fold CV) R@1/R@5/R@10/MRR, per set (dev, dev2, both) and, for dev2 and both, per style.
"""
import sys
from common import WORK

def parse(tag):
    secs, cur = {}, None
    for line in open(WORK / f"cv-{tag}.txt"):
        if line.startswith("cross-validated"): cur = "fused"
        elif line.startswith("dense only"): cur = "dense"
        elif line.startswith(("chosen on all", "lexical only")): cur = None
        elif cur and line.split() and line.split()[0] in ("queries-dev", "queries-dev2", "both"):
            f = line.split(); secs[(cur, f[0].replace("queries-", ""), f[1])] = [float(x) for x in f[3:7]]
    return secs

tags = sys.argv[1:]; P = {t: parse(t) for t in tags}
for kind in ("dense", "fused"):
    print(f"\n{kind}{' (5-fold CV held-out)' if kind=='fused' else ' (cosine only)'}   R@1/R@5/R@10/MRR")
    for s in ("dev", "dev2", "both"):
        for st in ("all", "intent", "keywords", "synonym", "typo", "multi"):
            if st != "all" and s == "dev": continue
            print(f"{s:5} {st:8} " + " | ".join(f"{t}: " + "/".join(f"{x:.3f}".lstrip("0") for x in P[t][(kind, s, st)]) for t in tags))
