//! Several phrasings of one request in one search: each phrasing is ranked as a search of
//! its own and the rankings are fused into one, each document once.
//!
//! With a ready semantic layer, the first phrasing (the request as the agent was given it,
//! in the user's words) is ranked with it, and the phrasings the agent adds, written in a
//! tool's words, lexically: one query embedding per search, whatever the number of
//! phrasings. Ranking the added phrasings semantically too gains little (cross-validated
//! R@1 0.915 against 0.905 with three phrasings on both development sets) for two more
//! embeddings, each as slow as the whole lexical search.
//!
//! The fusion is a weighted quadratic mean of each phrasing's normalised score: a
//! document scores
//!
//! ```text
//! sqrt( sum over the phrasings of  weight(position) * (score / best score) ^ 2
//!       / sum of the weights )
//! ```
//!
//! each phrasing's scores read relative to its own best (its best `DEPTH` documents take
//! part; a document outside them counts 0), with the weight of the first phrasing `FIRST`
//! and of every other 1, so the order of the added phrasings does not matter. Squaring
//! gives most of each phrasing's vote to its own best few documents, so one phrasing's
//! confident answer is not outvoted by documents every phrasing ranks middling; the root
//! keeps scores on the scale of one search's relative scores (a document first in every
//! ranking scores 1, one at half the best in every ranking 0.5), so afd-discover's
//! relevance floor reads them alike.
//!
//! The mechanism, `FIRST` and the exponent were chosen by 5-fold cross-validation over both
//! development query sets with an agent's phrasings, lexically and with the semantic layer
//! as above (one choice for both), among reciprocal rank (K of 1 to 60), normalised score
//! sums with and without a count of the rankings that agree, and sums of powers 2 to 6 of
//! the normalised scores, each with a weight for the request and one for the last phrasing,
//! on the phrasings shuffled (so a weight that only pays when the best phrasing comes first
//! is not chosen), with `afd-search-eval/tune/cv_phrasings.py`; no query was looked at one
//! by one. Reciprocal rank, which throws away how far ahead a phrasing's best document is,
//! ranked below every score sum.

use super::MAX_PHRASINGS;
use super::hit::{self, Hit};
use super::index::SearchIndex;
use super::judge::{Judged, judge};
use super::query::{self, Query};
use super::rank::rank_parsed;
use super::ranking::{rank_one, rank_one_parsed};

/// The weight of the first phrasing's ranking; every other phrasing's is 1.
const FIRST: f32 = 0.75;
/// The order of the power mean: each normalised score is squared.
const EXPONENT: u8 = 2;
/// How many documents of each phrasing's ranking take part (at least the page asked for).
const DEPTH: usize = 50;

impl SearchIndex {
    /// The best `limit` documents for up to [`MAX_PHRASINGS`] phrasings of one request
    /// (more are ignored), best first, each document once: each phrasing is ranked as
    /// [`search`](Self::search) ranks it and the rankings are fused (see the module
    /// documentation). One phrasing ranks exactly as [`search`](Self::search); blank
    /// phrasings are left out.
    ///
    /// ```
    /// use afd_runtime::search::{Document, SearchIndex};
    /// let index = SearchIndex::build([
    ///     Document::new("invoice-send", "Email an invoice to its customer."),
    ///     Document::new("invoice-void", "Cancel an invoice so it cannot be paid."),
    ///     Document::new("customer-notify", "Send a message to a customer."),
    /// ]);
    /// let hits = index.search_phrasings(&["bill is wrong, scrap it", "void invoice"], 3);
    /// assert_eq!(hits[0].doc, 1);
    /// ```
    pub fn search_phrasings(&self, phrasings: &[&str], limit: usize) -> Vec<Hit> {
        self.search_phrasings_where(phrasings, limit, |_| 0.0, |_| true)
    }

    /// As [`search_phrasings`](Self::search_phrasings), with `tie_break` ordering documents
    /// of equal score, and over the documents `keep` accepts only (as
    /// [`search_where`](Self::search_where)).
    pub fn search_phrasings_where(
        &self,
        phrasings: &[&str],
        limit: usize,
        tie_break: impl Fn(usize) -> f32,
        keep: impl Fn(usize) -> bool,
    ) -> Vec<Hit> {
        let phrasings = usable(phrasings);
        if phrasings.len() <= 1 {
            let phrasing = phrasings.first().copied().unwrap_or_default();
            return self.search_where(phrasing, limit, tie_break, keep);
        }
        if limit == 0 || self.n_docs == 0 {
            return Vec::new();
        }
        let started = crate::metrics::is_installed().then(std::time::Instant::now);
        let (rankings, semantic) = self.rank_each(&phrasings, limit.max(DEPTH), &tie_break, &keep);
        let hits = fuse(&rankings, limit, &tie_break);
        if let Some(started) = started {
            crate::metrics::search(semantic, started.elapsed().as_secs_f64());
        }
        hits
    }

    /// As [`search_phrasings_where`](Self::search_phrasings_where), judged: with whether
    /// the best hits do what was asked (strong, weak or none) and the probability that each
    /// of the first `confident` hits does the job (see [`Match`](super::Match)).
    ///
    /// ```
    /// use afd_runtime::search::{Document, Match, SearchIndex};
    /// let index = SearchIndex::build([
    ///     Document::new("invoice-send", "Email an invoice to its customer."),
    ///     Document::new("invoice-void", "Cancel an invoice so it cannot be paid."),
    ///     Document::new("customer-notify", "Send a message to a customer."),
    /// ]);
    /// let found = index.search_judged_where(&["void the invoice", "invoice void"], 3, 3, |_| 0.0, |_| true);
    /// assert_eq!(found.hits[0].doc, 1);
    /// assert_ne!(found.verdict, Match::None);
    /// let none = index.search_judged_where(&["buy ten shares of Apple"], 3, 3, |_| 0.0, |_| true);
    /// assert_eq!(none.verdict, Match::None);
    /// ```
    pub fn search_judged_where(
        &self,
        phrasings: &[&str],
        limit: usize,
        confident: usize,
        tie_break: impl Fn(usize) -> f32,
        keep: impl Fn(usize) -> bool,
    ) -> Judged {
        let phrasings = usable(phrasings);
        let queries: Vec<Query> = phrasings.iter().map(|p| query::parse(self, p)).collect();
        if limit == 0 || self.n_docs == 0 || phrasings.is_empty() {
            return judge(self, &queries, &[], Vec::new(), 0);
        }
        let started = crate::metrics::is_installed().then(std::time::Instant::now);
        let depth = if phrasings.len() == 1 {
            limit
        } else {
            limit.max(DEPTH)
        };
        let (rankings, semantic) =
            self.rank_parsed_each(&phrasings, &queries, depth, &tie_break, &keep);
        let firsts: Vec<Option<usize>> = rankings
            .iter()
            .map(|ranking| ranking.first().map(|hit| hit.doc))
            .collect();
        let hits = match rankings.as_slice() {
            [one] => one.clone(),
            _ => fuse(&rankings, limit, &tie_break),
        };
        if let Some(started) = started {
            crate::metrics::search(semantic, started.elapsed().as_secs_f64());
        }
        judge(self, &queries, &firsts, hits, confident)
    }

    /// Each phrasing's ranking of its parsed query (the first with a ready semantic layer),
    /// and whether the semantic layer ranked the first.
    fn rank_parsed_each(
        &self,
        phrasings: &[&str],
        queries: &[Query],
        depth: usize,
        tie_break: &impl Fn(usize) -> f32,
        keep: &impl Fn(usize) -> bool,
    ) -> (Vec<Vec<Hit>>, bool) {
        let (Some(phrasing), Some(query)) = (phrasings.first(), queries.first()) else {
            return (Vec::new(), false);
        };
        let (first, semantic) = rank_one_parsed(self, phrasing, query, depth, tie_break, keep);
        let mut rankings = Vec::with_capacity(queries.len());
        rankings.push(first);
        rankings.extend(
            queries[1..]
                .iter()
                .map(|query| rank_parsed(self, query, depth, tie_break, keep)),
        );
        (rankings, semantic)
    }

    /// Each phrasing's own ranking, its best `depth` documents, as
    /// [`search_phrasings`](Self::search_phrasings) ranks them before fusing (with a ready
    /// semantic layer, the first with it and the others lexically): for tuning the fusion
    /// and explaining a fused ranking. Blank phrasings are left out, and those beyond
    /// [`MAX_PHRASINGS`].
    pub fn phrasing_rankings(&self, phrasings: &[&str], depth: usize) -> Vec<Vec<Hit>> {
        match usable(phrasings).as_slice() {
            [] => Vec::new(),
            [one] => vec![self.search(one, depth)],
            several => self.rank_each(several, depth, &|_| 0.0, &|_| true).0,
        }
    }

    /// Each phrasing's ranking (at least two phrasings), and whether the semantic layer
    /// ranked the first.
    fn rank_each(
        &self,
        phrasings: &[&str],
        depth: usize,
        tie_break: &impl Fn(usize) -> f32,
        keep: &impl Fn(usize) -> bool,
    ) -> (Vec<Vec<Hit>>, bool) {
        let (first, semantic) = rank_one(self, phrasings[0], depth, tie_break, keep);
        let mut rankings = vec![first];
        rankings.extend(phrasings[1..].iter().map(|phrasing| {
            rank_parsed(self, &query::parse(self, phrasing), depth, tie_break, keep)
        }));
        (rankings, semantic)
    }
}

/// The phrasings that take part: trimmed, the blank ones left out, at most
/// [`MAX_PHRASINGS`].
fn usable<'a>(phrasings: &[&'a str]) -> Vec<&'a str> {
    phrasings
        .iter()
        .map(|phrasing| phrasing.trim())
        .filter(|phrasing| !phrasing.is_empty())
        .take(MAX_PHRASINGS)
        .collect()
}

/// The weight of the ranking of the phrasing at `position` (from 0).
fn weight(position: usize) -> f32 {
    if position == 0 { FIRST } else { 1.0 }
}

/// Fuses the rankings (see the module documentation): the best `limit` documents, equal
/// scores to the higher `tie_break`, then to the earlier document.
fn fuse(rankings: &[Vec<Hit>], limit: usize, tie_break: &impl Fn(usize) -> f32) -> Vec<Hit> {
    let mut shares: Vec<(usize, f32)> = Vec::new();
    let mut most = 0.0f32;
    for (position, ranking) in rankings.iter().enumerate() {
        let Some(best) = ranking
            .first()
            .map(|hit| hit.score)
            .filter(|&best| best > 0.0)
        else {
            continue;
        };
        let weight = weight(position);
        most += weight;
        for hit in ranking.iter().take(DEPTH.max(limit)) {
            shares.push((
                hit.doc,
                weight * (hit.score / best).powi(i32::from(EXPONENT)),
            ));
        }
    }
    // Each document's shares side by side, summed in position order.
    shares.sort_by_key(|&(doc, _)| doc);
    let mut ranked: Vec<(f32, f32, usize)> = Vec::with_capacity(shares.len());
    for &(doc, share) in &shares {
        match ranked.last_mut() {
            Some(last) if last.2 == doc => last.0 += share,
            _ => ranked.push((share, 0.0, doc)),
        }
    }
    for entry in &mut ranked {
        entry.0 = (entry.0 / most.max(f32::MIN_POSITIVE)).powf(1.0 / f32::from(EXPONENT));
        entry.1 = tie_break(entry.2);
    }
    hit::best(ranked, limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Document;

    fn index() -> SearchIndex {
        SearchIndex::build([
            Document::new("order-cancel", "Cancel an order before it ships."),
            Document::new("order-refund", "Refund a paid order to its customer."),
            Document::new("order-list", "List the orders, newest first."),
            Document::new("customer-get", "Read one customer's profile."),
        ])
    }

    #[test]
    fn one_phrasing_ranks_as_a_search() {
        let index = index();
        assert_eq!(
            index.search_phrasings(&["give the money back"], 4),
            index.search("give the money back", 4)
        );
        assert_eq!(
            index.search_phrasings(&["  ", "give the money back", ""], 4),
            index.search("give the money back", 4)
        );
    }

    #[test]
    fn each_document_is_listed_once_and_scores_at_most_one() {
        let index = index();
        let hits = index.search_phrasings(&["cancel order", "order cancel", "stop order"], 10);
        let mut docs: Vec<usize> = hits.iter().map(|hit| hit.doc).collect();
        assert_eq!(hits[0].doc, 0);
        assert!(hits[0].score <= 1.0 + 1e-6);
        docs.sort_unstable();
        docs.dedup();
        assert_eq!(docs.len(), hits.len());
    }

    #[test]
    fn a_phrasing_that_finds_what_the_others_miss_adds_it() {
        let index = index();
        let alone = index.search("profile", 10);
        assert!(alone.iter().all(|hit| hit.doc != 1));
        let fused = index.search_phrasings(&["profile", "refund"], 10);
        assert!(fused.iter().any(|hit| hit.doc == 1));
        assert!(fused.iter().any(|hit| hit.doc == 3));
    }

    #[test]
    fn two_phrasings_first_choice_beats_a_document_every_phrasing_ranks_second() {
        let hit = |doc, score| Hit { doc, score };
        // Document 3 is in every ranking at 0.8 of its best; document 1 is the best of
        // both added phrasings. A plain normalised sum ranks 3 first (0.8 against 0.73).
        let rankings = vec![
            vec![hit(0, 10.0), hit(3, 8.0)],
            vec![hit(1, 5.0), hit(3, 4.0)],
            vec![hit(1, 2.0), hit(3, 1.6)],
        ];
        let fused = fuse(&rankings, 3, &|_| 0.0);
        let docs: Vec<usize> = fused.iter().map(|hit| hit.doc).collect();
        assert_eq!(docs, vec![1, 3, 0]);
    }

    #[test]
    fn the_order_of_the_added_phrasings_does_not_matter() {
        let index = index();
        let docs = |phrasings: &[&str]| -> Vec<usize> {
            let hits = index.search_phrasings(phrasings, 10);
            hits.iter().map(|hit| hit.doc).collect()
        };
        assert_eq!(
            docs(&["order", "cancel it", "list orders"]),
            docs(&["order", "list orders", "cancel it"])
        );
    }

    #[test]
    fn phrasings_beyond_the_most_are_ignored_and_keep_filters() {
        let index = index();
        let three = index.search_phrasings(&["cancel", "refund", "list"], 10);
        let four = index.search_phrasings(&["cancel", "refund", "list", "customer"], 10);
        assert_eq!(three, four);
        let kept = index.search_phrasings_where(&["cancel", "refund"], 10, |_| 0.0, |doc| doc != 0);
        assert!(kept.iter().all(|hit| hit.doc != 0));
        assert!(index.search_phrasings(&["cancel", "refund"], 0).is_empty());
    }
}
