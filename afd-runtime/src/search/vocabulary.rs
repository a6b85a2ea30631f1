//! [`Vocabulary`]: what query analysis looks words up in, the terms and words an index
//! knows.
//!
//! A *term* is a Snowball stem that some document has, a *word* a lowercase word as some
//! document writes it (stop words excluded); both are dense ids, and every word has the
//! term of its stem. Query analysis needs only these lookups, so it depends on this trait
//! rather than on the index, which implements it.

/// The terms and words of an index, as query analysis sees them.
pub(crate) trait Vocabulary {
    /// The term of a stem, when some document has it.
    fn term_of_stem(&self, stem: &str) -> Option<u32>;

    /// The id of a lowercase word, when some document has it.
    fn word_id(&self, word: &str) -> Option<u32>;

    /// The term of a word's stem.
    fn term_of_word(&self, word: u32) -> u32;

    /// A word's text.
    fn word_text(&self, word: u32) -> &str;

    /// A term's inverse document frequency; 0 for an unknown term.
    fn idf(&self, term: u32) -> f32;

    /// Up to `max` corrections of an unknown word: `(word id, edit distance)`, the most
    /// common words first.
    fn corrections(&self, word: &str, max: usize, out: &mut Vec<(u32, usize)>);
}

/// The key of two adjacent terms, under which the index files the pairs of its names and
/// titles and a query looks up its own.
pub(crate) fn bigram_key(first: u32, second: u32) -> u64 {
    (u64::from(first) << 32) | u64::from(second)
}
