//! Searching a [`SearchIndex`] with one query: the query is parsed against the index's
//! vocabulary, then ranked by fusing lexical and dense evidence when the semantic layer is
//! ready (`semantic::fuse`), lexically otherwise (`rank`). The entry points
//! [`SearchIndex::search`], [`search_with`](SearchIndex::search_with) and
//! [`search_where`](SearchIndex::search_where).

use super::hit::Hit;
use super::index::SearchIndex;
use super::query::{self, Query};
use super::rank::rank_parsed;

impl SearchIndex {
    /// The best `limit` documents for `query`, best first; ties go to the earlier document.
    /// A query with no searchable word (empty, only spaces, punctuation or stop words)
    /// finds nothing; so does a query no document matches even through synonyms or typo
    /// corrections. Queries are cut to [`MAX_QUERY_BYTES`](super::MAX_QUERY_BYTES).
    ///
    /// With a ready semantic layer (feature `semantic`, `SearchIndex::build_semantic`),
    /// lexical and dense evidence are fused, and any query with a letter or digit finds
    /// the commands closest in meaning, even when none of its words matches.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        self.search_with(query, limit, |_| 0.0)
    }

    /// As [`search`](Self::search), with `tie_break` ordering documents of equal score
    /// (higher first, for example a usage count) before the earlier-document rule.
    pub fn search_with(
        &self,
        query: &str,
        limit: usize,
        tie_break: impl Fn(usize) -> f32,
    ) -> Vec<Hit> {
        self.search_where(query, limit, tie_break, |_| true)
    }

    /// As [`search_with`](Self::search_with), over the documents `keep` accepts only: the
    /// best `limit` of those, scored as in the whole index (how one caller searches the
    /// part of a catalog its scopes cover).
    pub fn search_where(
        &self,
        query: &str,
        limit: usize,
        tie_break: impl Fn(usize) -> f32,
        keep: impl Fn(usize) -> bool,
    ) -> Vec<Hit> {
        if limit == 0 || self.n_docs == 0 {
            return Vec::new();
        }
        let started = crate::metrics::is_installed().then(std::time::Instant::now);
        let (hits, semantic) = rank_one(self, query, limit, &tie_break, &keep);
        if let Some(started) = started {
            crate::metrics::search(semantic, started.elapsed().as_secs_f64());
        }
        hits
    }
}

/// One query's ranking, fused with the semantic layer when it is ready, and whether it was.
pub(super) fn rank_one(
    index: &SearchIndex,
    text: &str,
    limit: usize,
    tie_break: &impl Fn(usize) -> f32,
    keep: &impl Fn(usize) -> bool,
) -> (Vec<Hit>, bool) {
    rank_one_parsed(
        index,
        text,
        &query::parse(index, text),
        limit,
        tie_break,
        keep,
    )
}

/// [`rank_one`] of a query already parsed (`parsed` is `text`'s analysis).
pub(super) fn rank_one_parsed(
    index: &SearchIndex,
    text: &str,
    parsed: &Query,
    limit: usize,
    tie_break: &impl Fn(usize) -> f32,
    keep: &impl Fn(usize) -> bool,
) -> (Vec<Hit>, bool) {
    #[cfg(feature = "semantic")]
    if let Some(hits) = super::semantic::fuse::search(index, text, parsed, limit, tie_break, keep) {
        return (hits, true);
    }
    let _ = text;
    (rank_parsed(index, parsed, limit, tie_break, keep), false)
}
