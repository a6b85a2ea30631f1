"""Evaluates a sentence-transformers model folder in afd's fusion, without the Rust binary.
usage: eval_model.py MODEL TAG. Embeds the catalog (the text afd-runtime embeds) and both
development query sets with MODEL and rebuilds each query's evidence from the binary's base
evidence (evrust-base-dev.jsonl, evrust-base-dev2.jsonl in the experiment directory): the base
lexical top-50 with their lexical scores, plus MODEL's dense top-50, all cosines recomputed
with MODEL. Writes ev-TAG-dev.jsonl and ev-TAG-dev2.jsonl, then runs the project's cv.py on
them into cv-TAG.txt. With TAG `base` it also prints the largest difference between the
cosines recomputed here and those in the binary's evidence, a check that this re-embedding
matches afd-runtime's encoder.
"""
import json, os, subprocess, sys
os.environ.setdefault("HF_HUB_OFFLINE", "1")
import numpy as np, torch
torch.set_num_threads(2)
from sentence_transformers import SentenceTransformer
from common import EVAL, TUNE, WORK, document_text, load_tools, read_jsonl

model_dir, tag = os.path.abspath(sys.argv[1]), sys.argv[2]
os.chdir(WORK)
m = SentenceTransformer(model_dir, device="cpu")
tools = load_tools(); ids = [t["id"] for t in tools]
D = m.encode([document_text(t) for t in tools], batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
maxdiff = 0.0
for s in ["dev", "dev2"]:
    qs = read_jsonl(EVAL / f"queries-{s}.jsonl")
    base = {json.dumps(e["id"]): e["candidates"] for e in read_jsonl(f"evrust-base-{s}.jsonl")}
    Q = m.encode([q["query"] for q in qs], batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
    S = Q @ D.T
    with open(f"ev-{tag}-{s}.jsonl", "w") as out:
        for qi, q in enumerate(qs):
            cands = base[json.dumps(q["id"])]
            if tag == "base":
                for c in cands:
                    maxdiff = max(maxdiff, abs(c["cosine"] - float(S[qi, ids.index(c["tool"])])))
            lex = [c for c in cands if c["lexical"] is not None]
            have = {c["tool"] for c in lex}
            new = [{"tool": c["tool"], "lexical": c["lexical"], "cosine": float(S[qi, ids.index(c["tool"])])} for c in lex]
            for j in np.argsort(-S[qi])[:50]:
                if ids[j] not in have:
                    new.append({"tool": ids[j], "lexical": None, "cosine": float(S[qi, j])})
            out.write(json.dumps({"id": q["id"], "candidates": new}) + "\n")
if tag == "base":
    print(f"max |python cosine - evidence cosine| over all base candidates: {maxdiff:.2e}")
r = subprocess.run(["python3", str(TUNE / "cv.py"), "--queries",
                    str(EVAL / "queries-dev.jsonl"), str(EVAL / "queries-dev2.jsonl"),
                    "--evidence", f"ev-{tag}-dev.jsonl", f"ev-{tag}-dev2.jsonl"], capture_output=True, text=True)
open(f"cv-{tag}.txt", "w").write(r.stdout + r.stderr)
print(f"wrote {WORK / f'cv-{tag}.txt'}")
