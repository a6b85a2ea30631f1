//! [`SearchIndex`]: what a built index holds (postings, vocabulary, the names, categories,
//! bigrams and verbs of its documents) and the [`Vocabulary`] it offers query analysis.
//! `build` makes one ([`SearchIndex::build`]), `rank` searches it ([`SearchIndex::search`]).

use super::typo::TypoIndex;
use super::vocabulary::Vocabulary;
use super::word_map::WordMap;

/// One document in one term's postings.
#[derive(Debug, Clone, Copy)]
pub(super) struct Posting {
    pub(super) doc: u32,
    /// `tf / (K1 + tf)` with `tf` the BM25F pseudo-frequency.
    pub(super) saturation: f32,
}

/// A ranked, typo-tolerant search index over documents, built once.
///
/// Ranking is BM25F over the fields of the [`Document`](super::Document)s: a search adds, along the
/// postings of the query's terms (and of their synonyms and typo corrections), each
/// term's weight times its idf times its saturated field-weighted frequency in the
/// document, then adjusts the sums with lexical signals that plain BM25 lacks:
///
/// - **coverage**: the share of the query's (idf-weighted) concepts a document matches, so
///   a command that matches every part of the request beats one that repeats one word;
/// - **name coverage**: the share of the command name's words the query asks for, so that
///   of several similar commands the one whose name *is* the request wins;
/// - **category**: the share of the category's words the query names ("... in Notion");
/// - **intent**: a command whose read-only flag agrees with what the query asks for
///   (reading or changing, by the verb or question word that leads the query) gains a
///   little;
/// - **listing**: a query that names things in the plural without asking for a change
///   ("datasource UIDs") favours a command whose name's verb is `list`;
/// - **bigrams**: two query words in a row that stand in a row in the name or title.
///
/// The weights were set on a development set of agent queries against real MCP catalogs,
/// coarse values only, and are checked on a held-out set of the same kind.
///
/// ```
/// use afd_runtime::search::{Document, SearchIndex};
/// let index = SearchIndex::build([
///     Document::new("user-create", "Create a new user account."),
///     Document::new("user-delete", "Delete a user account for good."),
/// ]);
/// let hits = index.search("erase an account", 5);
/// assert_eq!(hits[0].doc, 1);
/// ```
#[derive(Debug)]
pub struct SearchIndex {
    pub(super) n_docs: usize,
    /// Stem -> term id.
    pub(super) terms: WordMap<Box<str>, u32>,
    /// Term id -> inverse document frequency.
    pub(super) idf: Vec<f32>,
    /// Term id -> its postings, `postings[offsets[t]..offsets[t + 1]]`, by document.
    pub(super) offsets: Vec<u32>,
    pub(super) postings: Vec<Posting>,
    /// Lowercase word (before stemming, stop words excluded) -> word id.
    pub(super) words: WordMap<Box<str>, u32>,
    /// Word id -> its text.
    pub(super) word_text: Vec<Box<str>>,
    /// Word id -> the term id of its stem.
    pub(super) word_term: Vec<u32>,
    /// Document -> the distinct term ids of its name, `name_terms[name_offsets[d]..]`.
    pub(super) name_offsets: Vec<u32>,
    pub(super) name_terms: Vec<u32>,
    /// Document -> the distinct term ids of its category, as for names.
    pub(super) category_offsets: Vec<u32>,
    pub(super) category_terms: Vec<u32>,
    /// Every term of some document's category, sorted.
    pub(super) category_vocab: Vec<u32>,
    /// `(bigram key, document)` for adjacent terms of names and titles, sorted.
    pub(super) bigrams: Vec<(u64, u32)>,
    /// Document -> [`Document::read_only`](super::Document::read_only).
    pub(super) read_only: Vec<Option<bool>>,
    /// Document -> the term of the first verb of its name, or `u32::MAX` when it has none.
    pub(super) name_verb: Vec<u32>,
    /// Document -> whether the first verb of its name asks to read ("list", "get").
    pub(super) name_verb_reads: Vec<bool>,
    pub(super) typos: TypoIndex,
    /// The semantic layer, when one was asked for.
    #[cfg(feature = "semantic")]
    pub(super) semantic: Option<super::semantic::SemanticLayer>,
}

impl SearchIndex {
    /// How many documents the index holds.
    pub fn len(&self) -> usize {
        self.n_docs
    }

    /// Whether the index holds no document.
    pub fn is_empty(&self) -> bool {
        self.n_docs == 0
    }

    /// How many distinct terms (stems) the index holds.
    pub fn term_count(&self) -> usize {
        self.terms.len()
    }

    /// The postings of a term, by document; empty for an unknown term.
    pub(super) fn postings(&self, term: u32) -> &[Posting] {
        let t = term as usize;
        match (self.offsets.get(t), self.offsets.get(t + 1)) {
            (Some(&start), Some(&end)) => &self.postings[start as usize..end as usize],
            _ => &[],
        }
    }
}

impl Vocabulary for SearchIndex {
    fn term_of_stem(&self, stem: &str) -> Option<u32> {
        self.terms.get(stem).copied()
    }

    fn word_id(&self, word: &str) -> Option<u32> {
        self.words.get(word).copied()
    }

    fn term_of_word(&self, word: u32) -> u32 {
        self.word_term[word as usize]
    }

    fn word_text(&self, word: u32) -> &str {
        &self.word_text[word as usize]
    }

    fn idf(&self, term: u32) -> f32 {
        self.idf.get(term as usize).copied().unwrap_or(0.0)
    }

    fn corrections(&self, word: &str, max: usize, out: &mut Vec<(u32, usize)>) {
        self.typos.corrections(
            word,
            |id| &self.word_text[id as usize],
            // Rarer terms rank later: a typo more likely garbles a common word.
            |id| {
                let term = self.word_term[id as usize] as usize;
                u32::MAX - (self.offsets[term + 1] - self.offsets[term])
            },
            max,
            out,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::{Document, tokenize};

    #[test]
    fn empty_index_finds_nothing() {
        let index = SearchIndex::build(Vec::new());
        assert!(index.is_empty());
        assert!(index.search("anything", 10).is_empty());
    }

    #[test]
    fn postings_carry_every_document_of_a_term() {
        let index = SearchIndex::build([
            Document::new("a-create", "Create a thing."),
            Document::new("b-create", "Create another thing."),
        ]);
        let term = index.term_of_stem(&tokenize::stem("create")).unwrap();
        let docs: Vec<u32> = index.postings(term).iter().map(|p| p.doc).collect();
        assert_eq!(docs, [0, 1]);
    }
}
