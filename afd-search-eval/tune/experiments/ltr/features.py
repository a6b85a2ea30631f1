"""Features of each (query, candidate) pair for the learned rankers.
For every query, builds one row per evidence candidate from the evidence scores (lexical score
and cosine, their ranks and normalisations, an untuned reciprocal-rank fusion), from the catalog
text (overlap of the query's words with the tool's name, title, description and parameters,
IDF-weighted coverage, name trigrams, sizes) and from the document vectors (similarity to the
centroid of the top dense, lexical and fused candidates, the pseudo-relevance-feedback
features). The features are catalog-independent: no word lists except scikit-learn's generic
English stop words. `build()` returns the items, one feature matrix per query and, per query,
the candidate tool ids with their gold labels.
"""
import math, re
from collections import Counter
import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS as STOP
from data import load_tools, load_vectors, load_items

def split_words(s):
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", s)
    return [w for w in re.split(r"[^A-Za-z0-9]+", s.lower()) if w]

def stem(w):
    if len(w) > 4:
        for suf, rep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
            if w.endswith(suf) and not w.endswith("ss"):
                return w[: len(w) - len(suf)] + rep
    elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w

def toks(s, content=True):
    return [stem(w) for w in split_words(s) if not (content and w in STOP)]

def trigrams(s):
    s = " " + " ".join(split_words(s)) + " "
    return {s[i:i + 3] for i in range(len(s) - 2)}

FEATURES = ["lex_norm", "has_lex", "log_lex_rank", "lex_z", "cos", "cos_minus_best", "cos_norm",
            "log_cos_rank", "cos_z", "rrf", "both", "name_cov", "q_in_name",
            "q_in_title_desc", "q_in_params", "idf_cov_all", "verb_match", "first_in_name",
            "server_mentioned", "tri_name", "n_name_tokens", "log_desc_len",
            "prf_dense3", "prf_lex3", "prf_rrf5", "server_share10"]

def build(items=None, tools=None, vecs=None):
    tools = tools or load_tools()
    vecs = vecs or load_vectors(tools)
    items = items or load_items()
    # catalog-level IDF over each tool's name+title+description tokens
    tdoc = {tid: set(toks(t["name"] + " " + t["title"] + " " + t["desc"])) for tid, t in tools.items()}
    df = Counter(w for s in tdoc.values() for w in s)
    N = len(tools)
    idf = lambda w: math.log(1 + N / (1 + df.get(w, 0)))
    tinfo = {}
    for tid, t in tools.items():
        name_t = toks(t["name"], content=False)
        tinfo[tid] = dict(name=set(name_t), name_first=name_t[0] if name_t else "",
                          td=set(toks(t["title"] + " " + t["desc"])), params=set(toks(" ".join(t["params"]))),
                          stem=set(toks(t["stem"], content=False)) - {"mcp"}, tri=trigrams(t["name"]),
                          n_name=len(name_t), desc_len=len(split_words(t["desc"])))
    X, groups = [], []
    for it in items:
        cands = it["cands"]
        q_all = toks(it["query"], content=False)
        q = [w for w in toks(it["query"]) if w] or q_all
        qs = set(q)
        qtri = trigrams(it["query"])
        lex = [c for c in cands if c["lexical"] is not None]
        lex_rank = {c["tool"]: r + 1 for r, c in enumerate(lex)}
        best_lex = max([c["lexical"] for c in lex], default=0.0) or 1.0
        lex_vals = np.array([c["lexical"] for c in lex]) if lex else np.array([0.0])
        by_cos = sorted(cands, key=lambda c: -c["cosine"])
        cos_rank = {c["tool"]: r + 1 for r, c in enumerate(by_cos)}
        cosv = np.array([c["cosine"] for c in by_cos])
        best_cos = cosv[0]; floor = cosv[min(49, len(cosv) - 1)]; spread = max(best_cos - floor, 1e-6)
        # untuned pseudo-relevant list: reciprocal-rank fusion of the two lists (k = 60)
        rrf = {c["tool"]: (1 / (60 + lex_rank[c["tool"]]) if c["tool"] in lex_rank else 0)
               + (1 / (60 + cos_rank[c["tool"]]) if cos_rank[c["tool"]] <= 50 else 0) for c in cands}
        fused_top = sorted(rrf, key=lambda t: -rrf[t])
        V = {c["tool"]: vecs[c["tool"]] for c in cands}
        def centroid(ts):
            return np.mean([V[t] for t in ts], axis=0) if ts else np.zeros(384)
        cen_dense = centroid([c["tool"] for c in by_cos[:3]])
        cen_lex = centroid([c["tool"] for c in lex[:3]])
        cen_fused = centroid(fused_top[:5])
        top10_servers = Counter(tools[t]["stem"] for t in fused_top[:10])
        rows = []
        for c in cands:
            tid = c["tool"]; ti = tinfo[tid]
            lr = lex_rank.get(tid)
            rows.append([
                (c["lexical"] / best_lex) if lr else 0.0,
                1.0 if lr else 0.0,
                math.log(lr if lr else 51 + 10),
                ((c["lexical"] - lex_vals.mean()) / (lex_vals.std() + 1e-6)) if lr else -3.0,
                c["cosine"],
                c["cosine"] - best_cos,
                max(0.0, (c["cosine"] - floor) / spread),
                math.log(cos_rank[tid]),
                (c["cosine"] - cosv.mean()) / (cosv.std() + 1e-6),
                (1 / (60 + lr) if lr else 0) + (1 / (60 + cos_rank[tid]) if cos_rank[tid] <= 50 else 0),
                1.0 if (lr and cos_rank[tid] <= 50) else 0.0,
                len(ti["name"] & set(q_all)) / max(len(ti["name"]), 1),
                len(qs & ti["name"]) / max(len(qs), 1),
                len(qs & ti["td"]) / max(len(qs), 1),
                len(qs & ti["params"]) / max(len(qs), 1),
                sum(idf(w) for w in qs if w in ti["name"] or w in ti["td"]) / max(sum(idf(w) for w in qs), 1e-6),
                1.0 if q_all and q_all[0] == ti["name_first"] else 0.0,
                1.0 if q_all and q_all[0] in ti["name"] else 0.0,
                1.0 if ti["stem"] & set(q_all) else 0.0,
                len(qtri & ti["tri"]) / max(len(ti["tri"]), 1),
                ti["n_name"],
                math.log(1 + ti["desc_len"]),
                float(V[tid] @ cen_dense),
                float(V[tid] @ cen_lex) if lex else 0.0,
                float(V[tid] @ cen_fused),
                top10_servers.get(tools[tid]["stem"], 0) / 10,
            ])
        X.append(np.array(rows, dtype=np.float64).reshape(-1, len(FEATURES)))
        groups.append(([c["tool"] for c in cands], np.array([c["tool"] in it["gold"] for c in cands])))
    return items, X, groups
