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
    /// Whether the verb of the document's name does what the phrasing leads with:
    /// `Some(true)` when it is the same action or a synonym (or both read), `Some(false)`
    /// when it is another ("delete the customer" and `create_customer`; "which ..." and
    /// `delete_...`; a leading word no command knows in any form, "tweet the notes"),
    /// `None` when the phrasing leads with no verb or question, or the name has no verb.
    pub action: Option<bool>,
    /// Whether the document is of a category the phrasing names: `Some(true)` when the
    /// phrasing names the document's category ("github" and a GitHub command),
    /// `Some(false)` when it names only others ("create a GitHub team" and a Sentry
    /// command), `None` when it names no category of the catalog.
    pub category: Option<bool>,
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
        out.action = self.action_agrees(parsed, doc);
        out.category = self.category_named(parsed, doc);
        out
    }

    /// Whether `doc`'s name names the action the phrasing leads with (see
    /// [`Coverage::action`]): a read agrees with a name whose verb reads; a change, with a
    /// name that has its verb or a synonym among its words (`create_refund` for "refund").
    fn action_agrees(&self, parsed: &Query, doc: usize) -> Option<bool> {
        let action = parsed.action.as_ref()?;
        let verb = *self.name_verb.get(doc)?;
        if verb == u32::MAX {
            return None;
        }
        if action.reads {
            return Some(self.name_verb_reads[doc]);
        }
        let (start, end) = (self.name_offsets[doc], self.name_offsets[doc + 1]);
        Some(
            self.name_terms[start as usize..end as usize]
                .iter()
                .any(|term| action.terms.binary_search(term).is_ok()),
        )
    }

    /// Whether `doc`'s category is one the phrasing names by its own words (see
    /// [`Coverage::category`]); synonyms and typo corrections do not name one.
    fn category_named(&self, parsed: &Query, doc: usize) -> Option<bool> {
        let (start, end) = (self.category_offsets[doc], self.category_offsets[doc + 1]);
        let own = &self.category_terms[start as usize..end as usize];
        let mut named = false;
        for concept in &parsed.concepts {
            for &(term, weight) in &concept.expansions {
                if weight < 1.0 || self.category_vocab.binary_search(&term).is_err() {
                    continue;
                }
                if own.contains(&term) {
                    return Some(true);
                }
                named = true;
            }
        }
        named.then_some(false)
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
        assert_eq!(update.action, Some(true));
        assert_eq!(merge.action, Some(false));
        assert_eq!(index.coverage("list the issues", 1).action, Some(true));
        assert_eq!(index.coverage("show the issues", 0).action, Some(false));
        assert_eq!(index.coverage("issues of project", 1).action, None);
        assert_eq!(index.coverage("update the issue", 0).category, None);
        assert_eq!(index.coverage("", 0), Default::default());
        assert_eq!(index.coverage("update", 9).share, 0.0);
    }

    #[test]
    fn a_typo_in_the_verb_and_another_category_are_told() {
        let in_category = |category: &str, name: &str, description: &str| Document {
            category: category.into(),
            ..Document::new(name, description)
        };
        let index = SearchIndex::build([
            in_category("sentry", "create_team", "Create a team in an organization."),
            in_category("github", "list_teams", "List the teams of an organization."),
            in_category("github", "delete_file", "Delete a file from a repository."),
        ]);
        assert_eq!(index.coverage("creaet a team", 0).action, Some(true));
        assert_eq!(index.coverage("delet the team", 0).action, Some(false));
        assert_eq!(
            index.coverage("create a github team", 0).category,
            Some(false)
        );
        assert_eq!(
            index.coverage("create a sentry team", 0).category,
            Some(true)
        );
        assert_eq!(index.coverage("which github teams", 1).category, Some(true));
        assert_eq!(index.coverage("which github teams", 1).action, Some(true));
        // A leading word no command knows, in no form (nor a typo of a known word, nor a
        // synonym): no name names that action. One the catalog knows is not an action.
        assert_eq!(index.coverage("levitate the team", 0).action, Some(false));
        assert_eq!(index.coverage("organization teams", 1).action, None);
        assert_eq!(index.coverage("levitate the team", 0).unknown, 1.0);
        assert_eq!(index.coverage("10 teams", 1).action, None);
    }
}
