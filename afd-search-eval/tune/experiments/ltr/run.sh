#!/usr/bin/env bash
# Learning-to-rank experiment: does a learned ranker beat the shipped fusion of lexical and
# dense scores (afd-runtime/src/search/semantic/fuse.rs, tuned by ../../cv.py) on held-out
# queries? Ranks both development query sets with afd-search-eval --evidence, reproduces
# cv.py's held-out figures, then scores pairwise and listwise logistic regression, LightGBM
# lambdarank and Rocchio pseudo-relevance feedback on cv.py's 5 folds.
#
# Nothing is ever trained or tuned on the queries it is scored on: every model and every
# hyper-parameter is chosen on the training folds only (hyper-parameters by inner 4-fold CV
# inside them); the only in-sample figures are analysis.py's ceilings, labelled as such.
#
# Takes about 4 minutes on 2 cores (plus the first venv install).
#
#   run.sh              the whole experiment
#   run.sh NAME...      only the evidence, the cv.py reproduction and `run.py NAME...`
#                       (e.g. `run.sh shipped`, the cheapest check, under a minute)
#
# Needs: `cargo build --release -p afd-search-eval --features semantic`, and
#   AFD_EMBED_MODEL     the all-MiniLM-L6-v2 sentence-transformers folder (required)
#   AFD_EVAL_DIR        the evaluation data (default <repo>/../shared/eval)
#   AFD_SEARCH_EVAL     the binary (default <repo>/target/release/afd-search-eval)
#   AFD_EXPERIMENT_DIR  venv, evidence, outputs (default <repo>/target/experiments/ltr)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
: "${AFD_EMBED_MODEL:?set AFD_EMBED_MODEL to the all-MiniLM-L6-v2 model folder}"
export AFD_EMBED_MODEL
export AFD_EVAL_DIR="${AFD_EVAL_DIR:-$repo/../shared/eval}"
export AFD_EXPERIMENT_DIR="${AFD_EXPERIMENT_DIR:-$repo/target/experiments/ltr}"
bin="${AFD_SEARCH_EVAL:-$repo/target/release/afd-search-eval}"
[ -x "$bin" ] || { echo "no $bin: cargo build --release -p afd-search-eval --features semantic" >&2; exit 1; }
mkdir -p "$AFD_EXPERIMENT_DIR"
work="$AFD_EXPERIMENT_DIR"
eval_dir="$AFD_EVAL_DIR"

py="$work/venv/bin/python"
if [ ! -x "$py" ]; then
    python3 -m venv "$work/venv"
    "$work/venv/bin/pip" install --quiet --disable-pip-version-check \
        numpy==2.4.6 scipy==1.17.1 scikit-learn==1.9.1 lightgbm==4.7.0
fi

# Evidence (each query's lexical and dense candidates with their scores); --cache also leaves
# the document vectors, which data.py reads for the pseudo-relevance-feedback features.
for s in dev dev2; do
    nice -n 19 "$bin" --catalogs "$eval_dir/catalogs" --queries "$eval_dir/queries-$s.jsonl" \
        --model "$AFD_EMBED_MODEL" --cache "$work/vec" --evidence "$work/ev-$s.jsonl" \
        > "$work/ranked-$s.jsonl"
done
# cv.py on that evidence: cv-repro.txt equals ../../cv-results.txt.
nice -n 19 python3 "$repo/afd-search-eval/tune/cv.py" \
    --queries "$eval_dir/queries-dev.jsonl" "$eval_dir/queries-dev2.jsonl" \
    --evidence "$work/ev-dev.jsonl" "$work/ev-dev2.jsonl" > "$work/cv-repro.txt"

cd "$here"
if [ "$#" -gt 0 ]; then
    nice -n 19 "$py" run.py "$@" | tee "$work/out-$(IFS=-; echo "$*").txt"
    exit 0
fi
nice -n 19 "$py" run.py shipped rocchio | tee "$work/out-shipped.txt"
nice -n 19 "$py" run.py pair_evid pair_all | tee "$work/out-pair.txt"
nice -n 19 "$py" run.py list_evid list_all lgb_evid lgb_all | tee "$work/out-list-lgb.txt"
nice -n 19 "$py" analysis.py | tee "$work/out-analysis.txt"
