//! Whether a search's best commands do what was asked: the [`Match`] of a search (strong,
//! weak or none) and a calibrated confidence per hit ([`SearchIndex::search_judged_where`]).
//!
//! A search always ranks something first, even when no command of the catalog can do what
//! was asked ("buy 10 shares of Apple", or "merge two Sentry issues" against a catalog that
//! can update an issue but not merge two). What tells the two apart is how much of the
//! request the best command covers, phrasing by phrasing: the idf-weighted share of the
//! request's concepts it matches ([`Coverage`](super::Coverage): a word no command knows
//! counts as missed), whether its name names the action the phrasings lead with ("delete
//! the customer" against `create_customer`), whether it is of the category they name
//! ("create a GitHub team" against Sentry's `create_team`), whether the phrasings' own
//! rankings agree on it, and how rare the rarest word it misses is. The *fit* of a command
//! is
//!
//! ```text
//! fit = (coverage + AGREE * agreement + MISSED * (1 - rarest missed)) / (1 + AGREE + MISSED)
//!       - CONFLICT * (share of phrasings whose action its name does not name)
//!       - OTHER_CATEGORY * (whether the phrasings name only other categories than its own)
//! ```
//!
//! with `coverage` the mean over the phrasings an agent added (the request's own wording,
//! often idiomatic, is left out when there are others); the weights chosen are 0 for
//! agreement and the rarest word, 0.3 for the action and 0.3 for the category with three
//! phrasings (0.1 for the action and none for the category with one). A phrasing that
//! leads with a word no command knows in any form ("tweet the release notes") names an
//! action no command's name names. A search whose best command fits under `NONE_BELOW`
//! answers `none`; from `STRONG_FROM` on, `strong`; between, `weak`. Each hit's
//! confidence, the probability that it is a command that does the job, is a logistic
//! function of its coverage, agreement, rarest missed word, score relative to the best and
//! whether it is first.
//!
//! The formula's family (which coverage: the request's, the mean, the least, the added
//! phrasings'; the weights on a coarse grid), the thresholds and the confidence weights were
//! chosen by 5-fold cross-validation (`afd-search-eval/tune/cv_match.py`) over both
//! development query sets with an agent's phrasings and the requests no tool can serve
//! (`queries-none-dev.jsonl`, the public catalogs' and the shop's, and
//! `afd-search-eval/tune/queries-none-extra.jsonl`), lexically: `NONE_BELOW` keeps 98% of
//! the answerable requests of the training folds above it, and the member that then
//! answers `none` to the most requests no tool serves was chosen. The weights and
//! thresholds were never set by hand for a query; the reading of an unknown leading word
//! as an action came from reading the shop's misses, and the cross-validation measures it
//! like the rest. Figures: the guide's search chapter.

use super::coverage::Coverage;
use super::hit::Hit;
use super::index::SearchIndex;
use super::query::Query;

/// The weight of the phrasings' agreement on a command in its fit (cross-validation chose
/// none: agreement adds nothing that coverage does not already say).
const AGREE: f32 = 0.0;
/// The weight of one minus the rarest word a command misses, in its fit (chosen: none).
const MISSED: f32 = 0.0;
/// What a name that names another action than the phrasings costs a command's fit, by the
/// number of phrasings (two take the one-phrasing value).
const CONFLICT: [f32; 3] = [0.1, 0.1, 0.3];
/// What being of another category than the one the phrasings name costs a command's fit,
/// by the number of phrasings (as for [`CONFLICT`]).
const OTHER_CATEGORY: [f32; 3] = [0.0, 0.0, 0.3];
/// Under this fit of the best command, no command does what was asked, by the number of
/// phrasings: chosen on all development queries with one phrasing (0.0895) and with three
/// (0.578); two phrasings were not measured and take the one-phrasing value, the cautious
/// side (fewer `none`).
const NONE_BELOW: [f32; 3] = [0.0895, 0.0895, 0.578];
/// From this fit of the best command on, the match is strong: with three phrasings, where
/// 95% of the development queries' answers above it have the right command first (0.916);
/// with fewer, cross-validation found no such fit, so only a command that covers every
/// concept of every phrasing is strong.
const STRONG_FROM: [f32; 3] = [1.0, 1.0, 0.92];
/// The confidence's logistic weights: bias, then coverage, agreement, one minus the rarest
/// missed word, the score relative to the best, and whether the hit is first (fitted on
/// all development queries with three phrasings).
const CONFIDENCE: [f32; 6] = [-6.424, 3.148, 2.459, 0.247, 0.549, 2.346];
/// Most hits given a confidence (each costs a look at its coverage of every phrasing).
pub const CONFIDENT_HITS: usize = 50;

/// How well a search's best commands do what was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Match {
    /// The best command covers the request: call it.
    Strong,
    /// The best command covers part of it: read the descriptions before calling one.
    Weak,
    /// No command does what was asked: the hits are the nearest, not a match.
    None,
}

impl Match {
    /// `strong`, `weak` or `none`.
    pub fn as_str(self) -> &'static str {
        match self {
            Match::Strong => "strong",
            Match::Weak => "weak",
            Match::None => "none",
        }
    }
}

/// A search's hits with how well they match.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// The hits, best first, as [`SearchIndex::search_phrasings_where`] ranks them.
    pub hits: Vec<Hit>,
    /// How well the best of them does what was asked; [`Match::None`] when there is no
    /// hit.
    pub verdict: Match,
    /// The best command's fit, 0 to 1 (see the module documentation).
    pub fit: f32,
    /// The probability that each hit does the job, for as many of the first hits as were
    /// asked for (at most [`CONFIDENT_HITS`]).
    pub confidence: Vec<f32>,
}

/// What one command covers of every phrasing, how many phrasings rank it first, how many
/// lead with an action its name does not name, and whether the phrasings name only other
/// categories than its own.
#[derive(Clone, Copy)]
struct Evidence {
    coverage: f32,
    agreement: f32,
    missed: f32,
    conflict: f32,
    other_category: bool,
}

/// Judges `hits` (ranked for `queries`, whose own rankings put `firsts` first), with a
/// confidence for the first `confident` of them.
pub(super) fn judge(
    index: &SearchIndex,
    queries: &[Query],
    firsts: &[Option<usize>],
    hits: Vec<Hit>,
    confident: usize,
) -> Judged {
    let Some(best) = hits.first().copied() else {
        return Judged {
            hits,
            verdict: Match::None,
            fit: 0.0,
            confidence: Vec::new(),
        };
    };
    let evidence = |doc: usize| -> Evidence {
        // The phrasings an agent added, or the request alone when it has none.
        let counted = if queries.len() > 1 { 1 } else { 0 };
        let (mut coverage, mut missed, mut conflicts) = (0.0f32, 0.0f32, 0usize);
        let (mut named_own, mut named_other) = (false, false);
        for (at, query) in queries.iter().enumerate() {
            let Coverage {
                share,
                missed: m,
                action,
                category,
                ..
            } = index.coverage_of(query, doc);
            named_own |= category == Some(true);
            named_other |= category == Some(false);
            if at >= counted {
                coverage += share;
            }
            missed = missed.max(m);
            conflicts += usize::from(action == Some(false));
        }
        let agreement = firsts.iter().filter(|&&first| first == Some(doc)).count() as f32;
        Evidence {
            coverage: coverage / (queries.len() - counted).max(1) as f32,
            agreement: agreement / firsts.len().max(1) as f32,
            missed,
            conflict: conflicts as f32 / queries.len().max(1) as f32,
            other_category: named_other && !named_own,
        }
    };
    // The best command's evidence decides the match and gives the first confidence.
    let best_evidence = evidence(best.doc);
    let confidence: Vec<f32> = hits
        .iter()
        .take(confident.min(CONFIDENT_HITS))
        .enumerate()
        .map(|(position, hit)| {
            let e = if position == 0 {
                best_evidence
            } else {
                evidence(hit.doc)
            };
            let relative = if best.score > 0.0 {
                hit.score / best.score
            } else {
                0.0
            };
            let first = if position == 0 { 1.0 } else { 0.0 };
            let [bias, w_cov, w_agree, w_missed, w_rel, w_first] = CONFIDENCE;
            let z = bias
                + w_cov * e.coverage
                + w_agree * e.agreement
                + w_missed * (1.0 - e.missed)
                + w_rel * relative
                + w_first * first;
            1.0 / (1.0 + (-z).exp())
        })
        .collect();
    let e = best_evidence;
    let n = queries.len().clamp(1, NONE_BELOW.len()) - 1;
    let fit = ((e.coverage + AGREE * e.agreement + MISSED * (1.0 - e.missed))
        / (1.0 + AGREE + MISSED)
        - CONFLICT[n] * e.conflict
        - if e.other_category {
            OTHER_CATEGORY[n]
        } else {
            0.0
        })
    .max(0.0);
    let verdict = if fit < NONE_BELOW[n] {
        Match::None
    } else if fit >= STRONG_FROM[n] {
        Match::Strong
    } else {
        Match::Weak
    };
    Judged {
        hits,
        verdict,
        fit,
        confidence,
    }
}
