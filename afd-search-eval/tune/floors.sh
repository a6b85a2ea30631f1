#!/usr/bin/env bash
# Search-quality floors, checked by CI: ranks both development query sets lexically and
# with the semantic layer, each query alone and with the two phrasings an agent added
# (queries-dev-alts.jsonl, fused as afd-discover fuses a `search` array), scores them with
# the evaluation's scorer, and fails when an overall Recall@5 or MRR falls under its floor;
# then checks the search's `match` on the requests no tool can serve (below).
# The floors sit a little under the measured figures (the guide's search chapter,
# afd-runtime/src/_guide/06_search.md), so they catch regressions, not noise.
# `cargo test --workspace --features semantic` runs it (afd-search-eval/tests/floors.rs).
#
#   floors.sh BINARY EVAL_DIR [MODEL_DIR]   without MODEL_DIR, the lexical rows only
set -euo pipefail
bin=$1 eval_dir=$2 model=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# set  method    phrasings  R@5 floor  MRR floor
floors="
dev      lexical  1 0.92 0.75
dev2     lexical  1 0.78 0.69
dev      semantic 1 0.90 0.76
dev2     semantic 1 0.82 0.71
dev      lexical  3 0.97 0.93
dev2     lexical  3 0.97 0.93
dev      semantic 3 0.96 0.92
dev2     semantic 3 0.97 0.92
"
failed=0
while read -r set method phrasings r5 mrr; do
    [ -n "$set" ] || continue
    if [ "$method" = semantic ] && [ -z "$model" ]; then
        echo "$set $method, $phrasings phrasing(s): skipped (no model folder given)"
        continue
    fi
    queries="$eval_dir/queries-$set.jsonl"
    args=(--catalogs "$eval_dir/catalogs" --queries "$queries")
    if [ "$phrasings" -gt 1 ]; then
        args+=(--alternatives "$eval_dir/queries-dev-alts.jsonl" --phrasings "$phrasings")
    fi
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
    echo "$set $method, $phrasings phrasing(s) (n=$n): R@5 $got_r5 (floor $r5), MRR $got_mrr (floor $mrr): $verdict"
done <<< "$floors"

# Whether search says so when nothing fits: the share of the requests no tool can serve
# (queries-none-dev.jsonl, the public catalogs' and the shop's, the shop's catalog being
# tune/shop-catalog; and tune/queries-none-extra.jsonl) answered `match: none`, and the
# share of answerable requests answered `none` (their command lost), three phrasings each,
# lexically and with the semantic layer ranking.
# set          method    none floor  (for no-tool sets) | lost ceiling (answerable sets)
match_floors="
dev            lexical   lost 0.03
dev2           lexical   lost 0.03
none-public    lexical   none 0.90
none-shop      lexical   none 0.75
none-extra     lexical   none 0.88
dev            semantic  lost 0.03
dev2           semantic  lost 0.03
none-public    semantic  none 0.90
none-shop      semantic  none 0.75
none-extra     semantic  none 0.88
"
here=$(cd "$(dirname "$0")" && pwd)
python3 - "$eval_dir/queries-none-dev.jsonl" "$work" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
for name in ["public", "shop"]:
    with open(f"{sys.argv[2]}/none-{name}.jsonl", "w") as out:
        out.writelines(json.dumps(r) + "\n" for r in rows if r.get("set", "public") == name)
PY
while read -r set method kind bound; do
    [ -n "$set" ] || continue
    if [ "$method" = semantic ] && [ -z "$model" ]; then
        echo "match $set $method: skipped (no model folder given)"
        continue
    fi
    case $set in
        none-extra) queries="$here/queries-none-extra.jsonl" alts="$here/queries-none-extra-alts.jsonl" ;;
        none-*) queries="$work/$set.jsonl" alts="$eval_dir/queries-none-dev-alts.jsonl" ;;
        *) queries="$eval_dir/queries-$set.jsonl" alts="$eval_dir/queries-dev-alts.jsonl" ;;
    esac
    catalogs="$eval_dir/catalogs"
    [ "$set" = none-shop ] && catalogs="$here/shop-catalog"
    args=(--catalogs "$catalogs" --queries "$queries" --alternatives "$alts" --phrasings 3
          --match-evidence "$work/match.jsonl")
    if [ "$method" = semantic ]; then
        args+=(--model "$model" --cache "$work/vectors")
    fi
    "$bin" "${args[@]}" > /dev/null
    got=$(python3 -c "
import json, sys
rows = [json.loads(l) for l in open('$work/match.jsonl') if l.strip()]
print(f'{sum(r[\"evidence\"][\"match\"] == \"none\" for r in rows) / len(rows):.3f}')")
    if [ "$kind" = none ]; then
        ok=$(python3 -c "print(int($got >= $bound))") what="answered none $got (floor $bound)"
    else
        ok=$(python3 -c "print(int($got <= $bound))") what="answerable answered none $got (ceiling $bound)"
    fi
    verdict=ok
    if [ "$ok" != 1 ]; then verdict=FAILED; failed=1; fi
    echo "match $set $method, 3 phrasings: $what: $verdict"
done <<< "$match_floors"
exit $failed
