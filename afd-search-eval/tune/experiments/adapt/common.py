"""Paths and catalog helpers shared by the adaptation experiment's scripts. Resolves the
repository from this file's location, the evaluation data (`AFD_EVAL_DIR`, default
`<repo>/../shared/eval`), the working directory (`AFD_EXPERIMENT_DIR`, default
`<repo>/target/experiments/adapt`, created if missing) and the base model (`AFD_EMBED_MODEL`,
required by the scripts that need it). Loads the catalog tools and builds the text afd-runtime
embeds for each tool, mirroring document_text in afd-runtime/src/search/semantic/mod.rs and
split_summary in afd-runtime/src/search/semantic/build.rs.
"""
import json, os, re
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]
EVAL = Path(os.environ.get("AFD_EVAL_DIR") or REPO.parent / "shared" / "eval")
CATALOGS = EVAL / "catalogs"
WORK = Path(os.environ.get("AFD_EXPERIMENT_DIR") or REPO / "target" / "experiments" / "adapt")
WORK.mkdir(parents=True, exist_ok=True)
TUNE = REPO / "afd-search-eval" / "tune"


def base_model():
    """The all-MiniLM-L6-v2 sentence-transformers folder the adaptation starts from."""
    path = os.environ.get("AFD_EMBED_MODEL")
    if not path:
        raise SystemExit("set AFD_EMBED_MODEL to the all-MiniLM-L6-v2 model folder")
    return path


def split_summary(d):
    for i, ch in enumerate(d):
        nxt = d[i + 1] if i + 1 < len(d) else None
        if ch in ".!?" and nxt in (None, " ", "\n", "\r", "\t"):
            return d[: i + 1], d[i + 1 :]
        if ch == "\n" and nxt == "\n":
            return d[: i + 1], d[i + 1 :]
    return d, ""


def humanise(name):
    return "".join(" " if c in "_-./" else c for c in name)


def load_tools():
    tools = []
    for fn in sorted(os.listdir(CATALOGS)):
        if not fn.endswith(".json"):
            continue
        stem = fn[:-5]
        cat = json.load(open(CATALOGS / fn))
        for t in cat["tools"]:
            if not isinstance(t.get("name"), str):
                continue
            props = (t.get("inputSchema") or {}).get("properties") or {}
            params = [(k, (v.get("description") or "") if isinstance(v, dict) and isinstance(v.get("description"), str) else "")
                      for k, v in list(props.items())[:64]]
            tools.append({
                "id": f"{stem}/{t['name']}", "server": stem, "name": t["name"],
                "title": t.get("title") if isinstance(t.get("title"), str) else "",
                "description": t.get("description") if isinstance(t.get("description"), str) else "",
                "params": params,
            })
    return tools


def document_text(t):
    text = t["server"].strip()
    if text:
        text += " "
    text += humanise(t["name"])
    summary = split_summary(t["description"])[0]
    for part in (t["title"], summary):
        part = part.strip()
        if part:
            text += ": " + part
    return text


def read_jsonl(p):
    return [json.loads(l) for l in open(p) if l.strip()]


def ws(s):
    return re.sub(r"\s+", " ", s).strip()
