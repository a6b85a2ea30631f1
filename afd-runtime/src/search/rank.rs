//! The lexical ranking of a parsed query over a [`SearchIndex`]: BM25F sums along the postings of the query's terms (and their synonyms and typo
//! corrections), the lexical signals that plain BM25 lacks (coverage, name and category
//! coverage, intent, listing, bigrams; see [`SearchIndex`]), and the best documents in
//! order.
//!
//! The weights were set on a development set of agent queries against real MCP catalogs,
//! coarse values only, and are checked on a held-out set of the same kind.

use std::cell::RefCell;

use super::hit::Hit;
use super::index::SearchIndex;
use super::query::Query;
use super::vocabulary::Vocabulary;

/// How much the share of the query a document covers counts: the score is multiplied by
/// `1 - COVERAGE + COVERAGE * share`.
const COVERAGE: f32 = 0.5;
/// How much the share of a document's name words the query asks for counts: the score is
/// multiplied by `1 + NAME_COVERAGE * share`.
const NAME_COVERAGE: f32 = 0.25;
/// How much the share of a document's category words the query names counts ("... in
/// Notion" favours the `notion` server's tools): the score is multiplied by
/// `1 + CATEGORY * share`.
const CATEGORY: f32 = 0.3;
/// How much a document whose read-only flag agrees with the query's intent gains: the
/// score is multiplied by `1 + INTENT`.
const INTENT: f32 = 0.3;
/// How much a listing command gains when the query names things in the plural and does
/// not ask for a change ("datasource UIDs", "planner slots"): the score of a command whose
/// name's verb is `list` is multiplied by `1 + LISTING`.
const LISTING: f32 = 0.2;
/// The score added for each query bigram found in a name or title, times the bigram's
/// mean idf.
const BIGRAM: f32 = 0.25;

/// The lexical ranking of a parsed query: nothing for a query with no searchable word.
pub(super) fn rank_parsed(
    index: &SearchIndex,
    query: &Query,
    limit: usize,
    tie_break: &impl Fn(usize) -> f32,
    keep: &impl Fn(usize) -> bool,
) -> Vec<Hit> {
    if query.concepts.is_empty() {
        Vec::new()
    } else {
        rank(index, query, limit, tie_break, keep)
    }
}

/// Per-search working memory, kept per thread and reused.
#[derive(Default)]
struct Scratch {
    /// Document -> BM25F sum.
    score: Vec<f32>,
    /// Document -> idf-weighted share of the query matched.
    cover: Vec<f32>,
    /// Document -> best score of the current concept.
    best: Vec<f32>,
    /// Document -> strength (expansion weight) of that best match.
    strength: Vec<f32>,
    /// Documents with a score.
    touched: Vec<u32>,
    /// Documents matched by the current concept.
    concept_touched: Vec<u32>,
    /// Document -> bigram bonus.
    bonus: Vec<f32>,
    /// `(score, tie-break, document)` of the candidates.
    ranked: Vec<(f32, f32, u32)>,
}

impl Scratch {
    fn reset(&mut self, n_docs: usize) {
        for array in [
            &mut self.score,
            &mut self.cover,
            &mut self.best,
            &mut self.strength,
            &mut self.bonus,
        ] {
            array.clear();
            array.resize(n_docs, 0.0);
        }
        self.touched.clear();
        self.concept_touched.clear();
        self.ranked.clear();
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// The best `limit` documents for `query`, best first; equal scores go to the higher
/// `tie_break`, then to the earlier document.
pub(super) fn rank(
    index: &SearchIndex,
    query: &Query,
    limit: usize,
    tie_break: &impl Fn(usize) -> f32,
    keep: &impl Fn(usize) -> bool,
) -> Vec<Hit> {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => run(index, query, limit, tie_break, keep, &mut scratch),
        // Re-entered from `tie_break`: use fresh memory rather than fail.
        Err(_) => run(
            index,
            query,
            limit,
            tie_break,
            keep,
            &mut Scratch::default(),
        ),
    })
}

fn run(
    index: &SearchIndex,
    query: &Query,
    limit: usize,
    tie_break: &impl Fn(usize) -> f32,
    keep: &impl Fn(usize) -> bool,
    s: &mut Scratch,
) -> Vec<Hit> {
    s.reset(index.n_docs);
    let total_cover = sum_concepts(index, query, s);
    add_bigram_bonus(index, query, s);
    lower_bounds(index, query, total_cover.max(f32::MIN_POSITIVE), s);
    s.ranked.retain(|&(_, _, doc)| keep(doc as usize));
    drop_hopeless(limit, s);
    for entry in &mut s.ranked {
        let d = entry.2 as usize;
        entry.0 *= name_and_category(index, query, d);
        if query.list.is_some_and(|list| list == index.name_verb[d]) {
            entry.0 *= 1.0 + LISTING;
        }
        entry.1 = tie_break(d);
    }
    let order = |a: &(f32, f32, u32), b: &(f32, f32, u32)| {
        b.0.total_cmp(&a.0)
            .then(b.1.total_cmp(&a.1))
            .then(a.2.cmp(&b.2))
    };
    if s.ranked.len() > limit {
        s.ranked.select_nth_unstable_by(limit, order);
        s.ranked.truncate(limit);
    }
    s.ranked.sort_unstable_by(order);
    s.ranked
        .iter()
        .map(|&(score, _, doc)| Hit {
            doc: doc as usize,
            score,
        })
        .collect()
}

/// Adds every concept's BM25F score (the best of its expansions) and coverage to the
/// documents it matches; returns the query's whole coverage worth.
fn sum_concepts(index: &SearchIndex, query: &Query, s: &mut Scratch) -> f32 {
    let mut total_cover = 0.0f32;
    let Scratch {
        score,
        cover,
        best,
        strength,
        touched,
        concept_touched,
        ..
    } = s;
    for concept in &query.concepts {
        total_cover += concept.weight * concept.idf;
        // A concept's strength never exceeds its top weight, so this is at most the
        // concept's whole worth.
        let cover_unit = concept.weight * concept.idf / concept.top.max(f32::MIN_POSITIVE);
        concept_touched.clear();
        for &(term, weight) in &concept.expansions {
            let factor = weight * index.idf(term);
            for posting in index.postings(term) {
                let d = posting.doc as usize;
                let value = factor * posting.saturation;
                let (Some(best), Some(strength)) = (best.get_mut(d), strength.get_mut(d)) else {
                    continue;
                };
                if *best == 0.0 {
                    concept_touched.push(posting.doc);
                }
                *best = best.max(value);
                *strength = strength.max(weight);
            }
        }
        for &doc in concept_touched.iter() {
            let d = doc as usize;
            if score[d] == 0.0 {
                touched.push(doc);
            }
            score[d] += concept.weight * best[d];
            cover[d] += cover_unit * strength[d];
            best[d] = 0.0;
            strength[d] = 0.0;
        }
    }
    total_cover
}

/// Adds the bonus of the query's bigrams to the documents whose name or title has them.
fn add_bigram_bonus(index: &SearchIndex, query: &Query, s: &mut Scratch) {
    for &(key, weight) in &query.bigrams {
        let start = index.bigrams.partition_point(|&(k, _)| k < key);
        for &(k, doc) in &index.bigrams[start..] {
            if k != key {
                break;
            }
            s.bonus[doc as usize] += BIGRAM * weight;
        }
    }
}

/// Ranks every matched document by the cheap part of its score (sums, bigrams, coverage,
/// intent), a lower bound of the final one: the name and category factors are at least 1.
fn lower_bounds(index: &SearchIndex, query: &Query, total_cover: f32, s: &mut Scratch) {
    for &doc in &s.touched {
        let d = doc as usize;
        let share = (s.cover[d] / total_cover).min(1.0);
        let intent = match (query.read_intent, index.read_only[d]) {
            (Some(wanted), Some(is)) if wanted == is => 1.0 + INTENT,
            _ => 1.0,
        };
        let score = (s.score[d] + s.bonus[d]) * (1.0 - COVERAGE + COVERAGE * share) * intent;
        if score.is_finite() && score > 0.0 {
            s.ranked.push((score, 0.0, doc));
        }
    }
}

/// Drops the candidates that cannot reach the best `limit`: the limit-th best lower bound
/// is a threshold that a document whose upper bound falls short of cannot reach, so only
/// the others get the rest of the scoring.
fn drop_hopeless(limit: usize, s: &mut Scratch) {
    let descending = |a: &(f32, f32, u32), b: &(f32, f32, u32)| b.0.total_cmp(&a.0);
    let threshold = if s.ranked.len() > limit {
        s.ranked.select_nth_unstable_by(limit - 1, descending);
        s.ranked[limit - 1].0
    } else {
        0.0
    };
    // Margin for rounding between the bound and the score computed in another order.
    let max_boost = (1.0 + NAME_COVERAGE) * (1.0 + CATEGORY) * (1.0 + LISTING) * 1.001;
    s.ranked
        .retain(|&(lower, _, _)| lower * max_boost >= threshold);
}

/// The factor of document `d`'s name and category coverage.
fn name_and_category(index: &SearchIndex, query: &Query, d: usize) -> f32 {
    let name = field_share(
        index,
        &index.name_offsets,
        &index.name_terms,
        d,
        &query.matches,
    );
    let category = field_share(
        index,
        &index.category_offsets,
        &index.category_terms,
        d,
        &query.matches,
    );
    (1.0 + NAME_COVERAGE * name) * (1.0 + CATEGORY * category)
}

/// The share of a document's name (or category) terms the query asks for, each counted by
/// its idf (so that a prefix shared by a whole server, like `browser_`, counts little) and
/// by the strength of its match (1 for the query's own word, less through a synonym).
fn field_share(
    index: &SearchIndex,
    offsets: &[u32],
    terms: &[u32],
    doc: usize,
    matches: &[(u32, f32)],
) -> f32 {
    let (Some(&start), Some(&end)) = (offsets.get(doc), offsets.get(doc + 1)) else {
        return 0.0;
    };
    let (mut matched, mut total) = (0.0, 0.0);
    for &term in &terms[start as usize..end as usize] {
        let idf = index.idf(term);
        total += idf;
        if let Ok(at) = matches.binary_search_by_key(&term, |&(t, _)| t) {
            matched += matches[at].1 * idf;
        }
    }
    if total > 0.0 { matched / total } else { 0.0 }
}
