//! Fusing lexical and dense evidence: a [`SearchIndex`] with a ready semantic layer ranks
//! the union of the best documents by lexical score and by cosine similarity to the query,
//! each scored as
//!
//! ```text
//! LEXICAL * lexical / best_lexical + (1 - LEXICAL) * (cosine - floor) / (best_cosine - floor)
//! ```
//!
//! where `floor` is the cosine of the `DEPTH`-th most similar document (so the dense
//! evidence is read relative to this query's own spread of similarities, as the lexical
//! score is relative to its best), and a document outside a list counts 0 for it.
//!
//! `LEXICAL` and `DEPTH` were chosen by k-fold cross-validation over the union of the two
//! development query sets (folds stratified by set and query style), on the grid and with
//! the script in `afd-search-eval/tune/`; no single query was looked at.

use std::sync::Arc;

use super::super::document::{Document, truncate};
use super::super::hit::{self, Hit};
use super::super::index::SearchIndex;
use super::super::query::{self, Query};
use super::super::rank::rank_parsed;
use super::{Ready, SemanticLayer, SemanticOptions};

/// The weight of the normalised lexical score; the normalised cosine has `1 - LEXICAL`.
const LEXICAL: f32 = 0.7;
/// How many documents each list (lexical, dense) contributes to the candidates; the
/// cosine of the last of the dense list is the floor of the normalised cosine.
const DEPTH: usize = 50;

/// The evidence about one document for one query: what fusion ranks by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evidence {
    /// The document's position.
    pub doc: usize,
    /// Its lexical score, when it is among the best lexically.
    pub lexical: Option<f32>,
    /// Its cosine similarity to the query.
    pub cosine: f32,
}

impl SearchIndex {
    /// Builds the index of `docs` with a semantic layer ([`SemanticLayer::start`]): the
    /// model loads and the documents' vectors are computed (or read from the cache) on a
    /// background thread; search is lexical until they are ready, and stays so when the
    /// model fails to load (a warning is logged).
    pub fn build_semantic(docs: Vec<Document>, options: SemanticOptions) -> Self {
        let layer = SemanticLayer::start(options, &docs);
        let mut index = SearchIndex::build(docs);
        index.semantic = Some(layer);
        index
    }

    /// The semantic layer, when the index was built with one.
    pub fn semantic(&self) -> Option<&SemanticLayer> {
        self.semantic.as_ref()
    }

    /// The best `depth` documents by lexical score and by cosine similarity to `query`,
    /// with both scores each: what fusion ranks (for tuning and for explaining a ranking).
    /// Empty until the semantic layer is ready or when the query cannot be embedded.
    pub fn evidence(&self, query: &str, depth: usize) -> Vec<Evidence> {
        let Some(ready) = self.semantic.as_ref().and_then(SemanticLayer::ready) else {
            return Vec::new();
        };
        let parsed = query::parse(self, query);
        gather(self, &ready, query, &parsed, depth, &|_| 0.0, &|_| true).unwrap_or_default()
    }
}

/// Fused search, or `None` when the index has no ready semantic layer or the query cannot
/// be embedded (the caller then ranks lexically).
pub(in crate::search) fn search(
    index: &SearchIndex,
    text: &str,
    query: &Query,
    limit: usize,
    tie_break: &impl Fn(usize) -> f32,
    keep: &impl Fn(usize) -> bool,
) -> Option<Vec<Hit>> {
    let ready = index.semantic.as_ref()?.ready()?;
    if !text.chars().any(char::is_alphanumeric) {
        return Some(Vec::new());
    }
    let evidence = gather(
        index,
        &ready,
        text,
        query,
        DEPTH.max(limit),
        tie_break,
        keep,
    )?;
    Some(fuse(&evidence, limit, tie_break))
}

/// The candidates: the best `depth` by lexical score and by cosine, with both scores.
fn gather(
    index: &SearchIndex,
    ready: &Arc<Ready>,
    text: &str,
    query: &Query,
    depth: usize,
    tie_break: &impl Fn(usize) -> f32,
    keep: &impl Fn(usize) -> bool,
) -> Option<Vec<Evidence>> {
    let text = truncate(text, super::super::MAX_QUERY_BYTES);
    let vector = ready.encoder.embed_one(text).ok()?;
    candidates(index, ready, &vector, query, depth, tie_break, keep)
}

/// As [`gather`], for a query already embedded as `vector`.
fn candidates(
    index: &SearchIndex,
    ready: &Arc<Ready>,
    vector: &[f32],
    query: &Query,
    depth: usize,
    tie_break: &impl Fn(usize) -> f32,
    keep: &impl Fn(usize) -> bool,
) -> Option<Vec<Evidence>> {
    let dim = vector.len();
    if dim == 0 || ready.vectors.len() != index.n_docs * dim {
        return None;
    }
    let cosines: Vec<f32> = ready
        .vectors
        .chunks_exact(dim)
        .map(|doc| doc.iter().zip(vector).map(|(a, b)| a * b).sum())
        .collect();
    let lexical = rank_parsed(index, query, depth, tie_break, keep);
    let mut dense: Vec<usize> = (0..index.n_docs).filter(|&doc| keep(doc)).collect();
    let by_cosine = |a: &usize, b: &usize| cosines[*b].total_cmp(&cosines[*a]).then(a.cmp(b));
    if dense.len() > depth {
        dense.select_nth_unstable_by(depth, by_cosine);
        dense.truncate(depth);
    }
    dense.sort_unstable_by(by_cosine);
    let mut out: Vec<Evidence> = lexical
        .iter()
        .map(|hit| Evidence {
            doc: hit.doc,
            lexical: Some(hit.score),
            cosine: cosines[hit.doc],
        })
        .collect();
    for doc in dense {
        if !lexical.iter().any(|hit| hit.doc == doc) {
            out.push(Evidence {
                doc,
                lexical: None,
                cosine: cosines[doc],
            });
        }
    }
    Some(out)
}

/// Ranks candidates by the fused score (see the module documentation).
fn fuse(evidence: &[Evidence], limit: usize, tie_break: &impl Fn(usize) -> f32) -> Vec<Hit> {
    let best_lexical = evidence
        .iter()
        .filter_map(|e| e.lexical)
        .fold(0.0f32, f32::max);
    let mut cosines: Vec<f32> = evidence.iter().map(|e| e.cosine).collect();
    cosines.sort_unstable_by(|a, b| b.total_cmp(a));
    let best_cosine = cosines.first().copied().unwrap_or(0.0);
    let floor = cosines
        .get(DEPTH.saturating_sub(1))
        .or(cosines.last())
        .copied()
        .unwrap_or(0.0);
    let spread = (best_cosine - floor).max(1e-6);
    let ranked: Vec<(f32, f32, usize)> = evidence
        .iter()
        .map(|e| {
            let lexical = match e.lexical {
                Some(score) if best_lexical > 0.0 => score / best_lexical,
                _ => 0.0,
            };
            let dense = ((e.cosine - floor) / spread).max(0.0);
            let score = LEXICAL * lexical + (1.0 - LEXICAL) * dense;
            (score, tie_break(e.doc), e.doc)
        })
        .collect();
    hit::best(ranked, limit)
}
