//! How much of one phrasing a command covers: the evidence that tells a command that does
//! what was asked from the nearest one that does not ([`SearchIndex::coverage`]).

use super::index::SearchIndex;
use super::query::{self, Query};

/// What one document covers of one phrasing of a request.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Coverage {
    /// The idf-weighted share of the phrasing's concepts the document matches, 0 to 1: a
    /// synonym or typo correction counts at its weight, a word no command knows counts as
    /// missed at the catalog's highest idf.
    pub share: f32,
    /// The largest idf among the concepts the document does not match at all, relative to
    /// the catalog's highest (0 when it matches every known one; 1 when it misses the
    /// rarest word there is).
    pub missed: f32,
    /// How many content words of the phrasing no command knows (step-weighted).
    pub unknown: f32,
    /// How many concepts the phrasing has.
    pub concepts: usize,
}

impl SearchIndex {
    /// What document `doc` covers of `phrasing`, as the ranking reads it (the same
    /// concepts, synonyms and typo corrections). An empty phrasing, or a document out of
    /// range, covers nothing.
    ///
    /// ```
    /// use afd_runtime::search::{Document, SearchIndex};
    /// let index = SearchIndex::build([
    ///     Document::new("customer-delete", "Delete a customer."),
    ///     Document::new("invoice-send", "Email an invoice."),
    /// ]);
    /// assert_eq!(index.coverage("delete the customer", 0).share, 1.0);
    /// assert!(index.coverage("delete the invoice", 0).share < 0.6);
    /// assert!(index.coverage("buy shares", 0).unknown >= 1.0);
    /// ```
    pub fn coverage(&self, phrasing: &str, doc: usize) -> Coverage {
        self.coverage_of(&query::parse(self, phrasing), doc)
    }

    /// [`coverage`](Self::coverage) of a parsed phrasing.
    pub(super) fn coverage_of(&self, parsed: &Query, doc: usize) -> Coverage {
        let most = self.highest_idf();
        let mut out = Coverage {
            unknown: parsed.unknown,
            concepts: parsed.concepts.len(),
            ..Coverage::default()
        };
        if doc >= self.n_docs {
            return out;
        }
        let (mut covered, mut total) = (0.0f32, parsed.unknown * most);
        if parsed.unknown > 0.0 {
            out.missed = 1.0;
        }
        for concept in &parsed.concepts {
            let worth = concept.weight * concept.idf;
            total += worth;
            let strength = concept
                .expansions
                .iter()
                .filter(|&&(term, _)| {
                    self.postings(term)
                        .binary_search_by_key(&(doc as u32), |posting| posting.doc)
                        .is_ok()
                })
                .map(|&(_, weight)| weight)
                .fold(0.0f32, f32::max);
            if strength > 0.0 {
                covered += worth * strength / concept.top.max(f32::MIN_POSITIVE);
            } else if most > 0.0 {
                out.missed = out.missed.max(concept.idf / most);
            }
        }
        if total > 0.0 {
            out.share = (covered / total).min(1.0);
        }
        out
    }

    /// The idf of a term found in one document only: the highest the catalog has.
    pub(super) fn highest_idf(&self) -> f32 {
        let n = self.n_docs as f32;
        (1.0 + (n - 0.5) / 1.5).ln()
    }
}

#[cfg(test)]
mod tests {
    use crate::search::{Document, SearchIndex};

    #[test]
    fn a_command_that_misses_the_action_covers_less_than_one_that_has_it() {
        let index = SearchIndex::build([
            Document::new("issue-update", "Update an issue's status or assignee."),
            Document::new("issue-list", "List the issues of a project."),
            Document::new("comment-add", "Add a comment to an issue."),
        ]);
        let update = index.coverage("update the issue", 0);
        let merge = index.coverage("merge the issues", 0);
        assert_eq!(update.share, 1.0);
        assert_eq!(update.missed, 0.0);
        assert!(merge.share < update.share);
        assert!(merge.unknown >= 1.0);
        assert_eq!(index.coverage("", 0), Default::default());
        assert_eq!(index.coverage("update", 9).share, 0.0);
    }
}
