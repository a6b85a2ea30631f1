#!/usr/bin/env bash
# Search-quality floors, checked by CI: ranks both development query sets lexically and
# with the semantic layer, scores them with the evaluation's scorer, and fails when an
# overall Recall@5 or MRR falls under its floor. The floors sit a little under the
# measured figures (README.md, "Ranked search"), so they catch regressions, not noise.
#
#   floors.sh BINARY EVAL_DIR MODEL_DIR
set -euo pipefail
bin=$1 eval_dir=$2 model=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# set  method    R@5 floor  MRR floor
floors="
dev      lexical  0.92 0.75
dev2     lexical  0.78 0.69
dev      semantic 0.90 0.76
dev2     semantic 0.82 0.71
"
failed=0
while read -r set method r5 mrr; do
    [ -n "$set" ] || continue
    queries="$eval_dir/queries-$set.jsonl"
    args=(--catalogs "$eval_dir/catalogs" --queries "$queries")
    if [ "$method" = semantic ]; then
        args+=(--model "$model" --cache "$work/vectors")
    fi
    "$bin" "${args[@]}" > "$work/ranked.jsonl"
    line=$(python3 "$eval_dir/score.py" --queries "$queries" --ranked "$work/ranked.jsonl" | grep '^overall')
    read -r _ n _r1 got_r5 _r10 got_mrr <<< "$line"
    verdict=ok
    if python3 -c "import sys; sys.exit(0 if $got_r5 >= $r5 and $got_mrr >= $mrr else 1)"; then :; else
        verdict=FAILED
        failed=1
    fi
    echo "$set $method (n=$n): R@5 $got_r5 (floor $r5), MRR $got_mrr (floor $mrr): $verdict"
done <<< "$floors"
exit $failed
