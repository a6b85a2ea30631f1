"""Paths and data loading for the learning-to-rank experiment.
Resolves the repository from this file's location, the evaluation data (`AFD_EVAL_DIR`,
default `<repo>/../shared/eval`) and the working directory (`AFD_EXPERIMENT_DIR`, default
`<repo>/target/experiments/ltr`, created if missing), where run.sh leaves the evidence files
and the vector cache. Loads the queries, the evidence candidates of each query, the catalog
tools (with the text afd-runtime embeds for each) and the document vectors from afd's vector
cache; defines cv.py's folds and the ranking metrics. `python data.py` prints a sanity check.
"""
import glob, hashlib, json, os, struct
from collections import defaultdict
from pathlib import Path
import numpy as np

REPO = Path(__file__).resolve().parents[4]
EVAL = Path(os.environ.get("AFD_EVAL_DIR") or REPO.parent / "shared" / "eval")
WORK = Path(os.environ.get("AFD_EXPERIMENT_DIR") or REPO / "target" / "experiments" / "ltr")
WORK.mkdir(parents=True, exist_ok=True)
CV_PY = REPO / "afd-search-eval" / "tune" / "cv.py"

SETS = [("dev", EVAL / "queries-dev.jsonl", WORK / "ev-dev.jsonl"),
        ("dev2", EVAL / "queries-dev2.jsonl", WORK / "ev-dev2.jsonl")]
STYLES = ["intent", "keywords", "synonym", "typo", "multi"]

def read_jsonl(p):
    return [json.loads(l) for l in open(p) if l.strip()]

def split_summary(d):
    """The first sentence of a description, as afd-runtime cuts it."""
    for i, ch in enumerate(d):
        nxt = d[i + 1] if i + 1 < len(d) else None
        if ch in ".!?" and (nxt is None or nxt in " \n\r\t"):
            return d[: i + 1]
        if ch == "\n" and nxt == "\n":
            return d[: i + 1]
    return d

def doc_text(stem, tool):
    """The text afd-runtime embeds for a tool: server, name words, title, first sentence."""
    name = "".join(" " if c in "_-./" else c for c in tool["name"])
    text = stem.strip()
    if text:
        text += " "
    text += name
    for part in [tool.get("title") or "", split_summary(tool.get("description") or "")]:
        part = part.strip()
        if part:
            text += ": " + part
    return text

def load_tools():
    tools = {}
    for path in sorted(glob.glob(str(EVAL / "catalogs" / "*.json"))):
        stem = os.path.basename(path)[:-5]
        cat = json.load(open(path))
        for t in cat["tools"]:
            if isinstance(t.get("name"), str):
                props = (t.get("inputSchema") or {}).get("properties") or {}
                tools[f"{stem}/{t['name']}"] = dict(
                    stem=stem, name=t["name"], title=t.get("title") or "",
                    desc=t.get("description") or "", params=list(props.keys()),
                    text=doc_text(stem, t))
    return tools

def load_vectors(tools, cache_dir=WORK / "vec"):
    """Reads afd's vector cache (AFDVEC1: sha256 of the document text -> f32 vector)."""
    path = glob.glob(str(Path(cache_dir) / "*.vectors"))[0]
    b = open(path, "rb").read()
    assert b[:8] == b"AFDVEC1\n"
    dim, count = struct.unpack("<II", b[8:16])
    by_key = {}
    off = 16
    for _ in range(count):
        key = b[off:off + 32]; off += 32
        by_key[key] = np.frombuffer(b[off:off + 4 * dim], dtype="<f4").copy(); off += 4 * dim
    vecs = {}
    for tid, t in tools.items():
        k = hashlib.sha256(t["text"].encode()).digest()
        if k in by_key:
            vecs[tid] = by_key[k]
    return vecs

def load_items():
    items = []
    for s, (name, qp, ep) in enumerate(SETS):
        ev = {json.dumps(e["id"]): e["candidates"] for e in read_jsonl(ep)}
        for q in read_jsonl(qp):
            items.append(dict(set=s, setname=name, id=q["id"], query=q["query"], style=q["style"],
                              gold=set(q["gold"]), cands=ev.get(json.dumps(q["id"]), [])))
    return items

def folds(items, k=5):
    """Same folds as cv.py: per (set, style) group in id order, dealt round-robin with offset."""
    groups = defaultdict(list)
    for i, it in enumerate(items):
        groups[(it["set"], it["style"])].append(i)
    fold_of, offset = {}, 0
    for key in sorted(groups):
        for j, i in enumerate(sorted(groups[key], key=lambda i: str(items[i]["id"]))):
            fold_of[i] = (j + offset) % k
        offset += len(groups[key])
    return [fold_of[i] for i in range(len(items))]

def metrics(rows):
    n = max(len(rows), 1); r1 = r5 = r10 = mrr = 0.0
    for gold, ranking in rows:
        rank = next((i + 1 for i, t in enumerate(ranking) if t in gold), None)
        if rank:
            r1 += rank <= 1; r5 += rank <= 5; r10 += rank <= 10; mrr += 1 / rank
    return {"R@1": r1 / n, "R@5": r5 / n, "R@10": r10 / n, "MRR": mrr / n}

if __name__ == "__main__":
    tools = load_tools(); vecs = load_vectors(tools); items = load_items()
    print(len(tools), "tools;", len(vecs), "vectors matched")
    v = np.stack(list(vecs.values())); print("norms", np.linalg.norm(v, axis=1)[:5])
    for s in (0, 1):
        its = [it for it in items if it["set"] == s]
        cov = np.mean([any(c["tool"] in it["gold"] for c in it["cands"]) for it in its])
        print("set", s, "n", len(its), "pool coverage", cov)
