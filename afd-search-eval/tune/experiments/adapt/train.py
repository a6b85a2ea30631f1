"""Adapts all-MiniLM-L6-v2 to the tool catalog's own text, never to evaluation queries.
usage: train.py RECIPE EPOCHS OUTDIR. Builds (anchor, positive) pairs from the catalog alone and
fine-tunes the base model (AFD_EMBED_MODEL) with MultipleNegativesRankingLoss (scale 20,
in-batch negatives), lr 2e-5, AdamW (weight decay 0.01), batch 32, 10% linear warm-up then
linear decay, gradient clipping at 1.0, seed 0, max_seq_length 128 while training (256, the
shipped folder's value, when saved); a batch never holds two pairs of the same tool. The recipes
were fixed before any adapted model was evaluated. R1 "to-doc-text": the positive is always
the text afd-runtime embeds (document_text), the anchors are the description's remainder after
its first sentence (when >= 4 words), the parameter text "name words: description; ..." (when
the tool has parameters), and the title plus first sentence paired with "server name words"
(when either exists). R2 "brief": (server + name words + title, full description), (first
sentence, remainder when >= 4 words), (parameter text, "name words: full description").
"""
import os, random, sys, time
os.environ.setdefault("HF_HUB_OFFLINE", "1")
import torch
torch.set_num_threads(2)
from sentence_transformers import SentenceTransformer, losses
from common import base_model, document_text, humanise, load_tools, split_summary, ws

recipe, epochs, outdir = sys.argv[1], int(sys.argv[2]), sys.argv[3]
random.seed(0); torch.manual_seed(0)


def param_text(t):
    return ws("; ".join(f"{humanise(k)}: {d}" if d else humanise(k) for k, d in t["params"]))


pairs = []  # (tool index, anchor, positive)
for i, t in enumerate(load_tools()):
    desc = ws(t["description"]); first, rest = split_summary(t["description"]); first, rest = ws(first), ws(rest)
    name = humanise(t["name"])
    if recipe == "R1":
        doc = document_text(t)
        if len(rest.split()) >= 4: pairs.append((i, rest, doc))
        if t["params"]: pairs.append((i, param_text(t), doc))
        fs = ws(" ".join(x for x in [t["title"], first] if x))
        if fs: pairs.append((i, fs, f"{t['server']} {name}"))
    elif recipe == "R2":
        head = ws(f"{t['server']} {name} {t['title']}")
        if desc: pairs.append((i, head, desc))
        if len(rest.split()) >= 4: pairs.append((i, first, rest))
        if t["params"]: pairs.append((i, param_text(t), f"{name}: {desc}"))
    else:
        sys.exit("unknown recipe")
print(f"{recipe}: {len(pairs)} pairs", flush=True)

BATCH = 32


def batches():
    """Shuffles the pairs and deals them into batches with at most one pair per tool."""
    order = pairs[:]; random.shuffle(order); out = []
    while order:
        b, seen, rest = [], set(), []
        for p in order:
            if len(b) < BATCH and p[0] not in seen:
                b.append(p); seen.add(p[0])
            else:
                rest.append(p)
        out.append(b); order = rest
    return out


model = SentenceTransformer(base_model(), device="cpu")
model.max_seq_length = 128
loss_fn = losses.MultipleNegativesRankingLoss(model)
opt = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.01)
# counting the batches draws a shuffle: reseed so training starts from the same state
steps = epochs * len(batches()); random.seed(0)
warm = max(1, int(0.1 * steps))
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm))))
model.train(); t0 = time.time()
for ep in range(epochs):
    tot = 0.0; bs = batches()
    for b in bs:
        fa = model.tokenize([p[1] for p in b]); fp = model.tokenize([p[2] for p in b])
        loss = loss_fn([fa, fp], None)
        loss.backward(); torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step(); sched.step(); opt.zero_grad(); tot += loss.item()
    print(f"epoch {ep+1}: {len(bs)} batches, mean loss {tot/len(bs):.4f}, {(time.time()-t0)/60:.1f} min", flush=True)
model.eval()
model.max_seq_length = 256  # the shipped folder's value (sentence_bert_config.json)
model.save(outdir, safe_serialization=True)
print(f"saved {outdir}; training {(time.time()-t0)/60:.2f} min on 2 threads", flush=True)
