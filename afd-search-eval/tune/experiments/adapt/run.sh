#!/usr/bin/env bash
# Catalog-only adaptation experiment: does fine-tuning the all-MiniLM-L6-v2 encoder on the tool
# catalog's own text lift held-out search quality, dense only and fused with the lexical score
# as afd ships it (../../cv.py's 5-fold CV)? Trains three variants (recipe R1 for 1 and 2
# epochs, R2 for 1 epoch; train.py describes them) with MultipleNegativesRankingLoss, evaluates
# each against the base model, and cross-checks one in the Rust binary.
#
# The training pairs come from the catalogs alone: no evaluation query, gold label or score is
# ever used for training, and the recipes and settings were fixed before any adapted model was
# evaluated. Fusion weights are chosen per fold on the other folds only.
#
# Takes about 45 minutes on 2 cores (three trainings of 5-12 minutes each; plus the first venv
# install, which downloads PyPI's torch).
#
#   run.sh          the whole experiment
#   run.sh base     only the base evidence and its Python re-embedding check (a few minutes)
#
# Needs: `cargo build --release -p afd-search-eval --features semantic`, and
#   AFD_EMBED_MODEL     the all-MiniLM-L6-v2 sentence-transformers folder (required)
#   AFD_EVAL_DIR        the evaluation data (default <repo>/../shared/eval)
#   AFD_SEARCH_EVAL     the binary (default <repo>/target/release/afd-search-eval)
#   AFD_EXPERIMENT_DIR  venv, evidence, models, outputs (default <repo>/target/experiments/adapt)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
: "${AFD_EMBED_MODEL:?set AFD_EMBED_MODEL to the all-MiniLM-L6-v2 model folder}"
export AFD_EMBED_MODEL
export AFD_EVAL_DIR="${AFD_EVAL_DIR:-$repo/../shared/eval}"
export AFD_EXPERIMENT_DIR="${AFD_EXPERIMENT_DIR:-$repo/target/experiments/adapt}"
export OMP_NUM_THREADS=2 HF_HUB_OFFLINE=1
bin="${AFD_SEARCH_EVAL:-$repo/target/release/afd-search-eval}"
[ -x "$bin" ] || { echo "no $bin: cargo build --release -p afd-search-eval --features semantic" >&2; exit 1; }
mkdir -p "$AFD_EXPERIMENT_DIR"
work="$AFD_EXPERIMENT_DIR"
eval_dir="$AFD_EVAL_DIR"
cv="$repo/afd-search-eval/tune/cv.py"
cd "$work"

py="$work/venv/bin/python"
if [ ! -x "$py" ]; then
    python3 -m venv "$work/venv"
    "$work/venv/bin/pip" install --quiet --disable-pip-version-check \
        torch==2.15.0 sentence-transformers==6.2.0 transformers==5.24.0 numpy==2.4.6
fi

# Ranks both query sets and cross-validates the fusion on the binary's evidence.
rust_cv() {  # MODEL TAG
    for s in dev dev2; do
        nice -n 19 "$bin" --catalogs "$eval_dir/catalogs" --queries "$eval_dir/queries-$s.jsonl" \
            --model "$1" --evidence "evrust-$2-$s.jsonl" > "ranked-$2-$s.jsonl"
    done
    nice -n 19 python3 "$cv" --queries "$eval_dir/queries-dev.jsonl" "$eval_dir/queries-dev2.jsonl" \
        --evidence "evrust-$2-dev.jsonl" "evrust-$2-dev2.jsonl" > "cv-$2-rust.txt"
}

# 1. The base model in the binary: cv-base-rust.txt equals ../../cv-results.txt.
rust_cv "$AFD_EMBED_MODEL" base
# 2. The base model re-embedded in Python (prints the largest cosine difference from the
#    binary's evidence); cv-base.txt must equal cv-base-rust.txt.
nice -n 19 "$py" "$here/eval_model.py" "$AFD_EMBED_MODEL" base
[ "${1:-}" = base ] && exit 0

# 3. Adapt on the catalog text only, then evaluate each variant against the base model.
: > paired.txt
for v in "R1 1" "R2 1" "R1 2"; do
    set -- $v
    tag=$1-e$2
    nice -n 19 "$py" "$here/train.py" "$1" "$2" "model-$tag" > "train-$tag.log" 2>&1
    nice -n 19 "$py" "$here/eval_model.py" "model-$tag" "$tag"
    "$py" "$here/export_afd.py" "model-$tag" "model-$tag-afd"   # the folder afd-runtime loads
    echo "== $tag" | tee -a paired.txt
    nice -n 19 "$py" "$here/paired.py" "$tag" | tee -a paired.txt
done
# 4. Cross-check in the binary: cv-R1-e1-rust.txt gives the same figures as cv-R1-e1.txt.
rust_cv "model-R1-e1-afd" R1-e1
"$py" "$here/summarize.py" base R1-e1 R2-e1 R1-e2 | tee summary.txt
