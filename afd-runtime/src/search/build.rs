//! Building a [`SearchIndex`]: every document's words, by field, become BM25F postings,
//! and the vocabulary, names, categories, bigrams and verbs the ranking reads are filed.
//!
//! Every term's postings hold, per document, the BM25F saturated term frequency
//! `tf / (K1 + tf)`, where `tf` is the field-weighted, length-normalised frequency summed
//! over fields.

use super::cues::cue;
use super::document::{Document, split_summary};
#[cfg(doc)]
use super::hit::Hit;
use super::index::{Posting, SearchIndex};
use super::tokenize::{self, Piece};
use super::typo::TypoIndex;
use super::vocabulary::bigram_key;
use super::word_map::WordMap;

/// The fields of a document, with their BM25F weight and length normalisation `b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Field {
    Name = 0,
    Title = 1,
    Category = 2,
    Tags = 3,
    Summary = 4,
    Description = 5,
    Params = 6,
}

const FIELDS: usize = 7;
/// BM25F field weights, by [`Field`].
const WEIGHTS: [f32; FIELDS] = [3.0, 1.5, 1.5, 0.5, 2.0, 0.5, 0.2];
/// BM25F length normalisation, by [`Field`].
const B: [f32; FIELDS] = [0.3, 0.5, 0.0, 0.3, 0.5, 0.9, 0.5];
/// BM25 term-frequency saturation.
const K1: f32 = 1.2;

/// What the builder collects about one document before lengths are known.
struct Pending {
    /// `(term, field)` for every word, in one flat list for all documents.
    occurrences: Vec<(u32, u8)>,
    /// Document -> start of its occurrences.
    starts: Vec<usize>,
    /// Document -> words per field.
    lengths: Vec<[u16; FIELDS]>,
}

/// No term (in [`Builder`]'s `word_base`).
const NO_TERM: u32 = u32::MAX;
/// The id of a stop word in [`Builder`]'s `words` (removed before the index is made).
const STOP_WORD: u32 = u32::MAX;

struct Builder {
    terms: WordMap<Box<str>, u32>,
    /// Lowercase word -> word id, or [`STOP_WORD`].
    words: WordMap<Box<str>, u32>,
    /// Word id -> the term of the word its `un` prefix negates, or [`NO_TERM`].
    word_base: Vec<u32>,
    word_text: Vec<Box<str>>,
    word_term: Vec<u32>,
    /// Word id -> whether it is a verb that asks to read (`Some(true)`) or to change
    /// something (`Some(false)`), or neither.
    word_verb: Vec<Option<bool>>,
    /// Document -> the term of the first verb of its name, or [`NO_TERM`].
    name_verb: Vec<u32>,
    /// Document -> whether the first verb of its name asks to read.
    name_verb_reads: Vec<bool>,
    /// The term of the first verb of the name being read, and whether it reads.
    current_verb: Option<(u32, bool)>,
    pending: Pending,
    name_offsets: Vec<u32>,
    name_terms: Vec<u32>,
    category_offsets: Vec<u32>,
    category_terms: Vec<u32>,
    bigrams: Vec<(u64, u32)>,
    read_only: Vec<Option<bool>>,
    /// Scratch: the terms of the field being read, in order (parts, not compounds).
    sequence: Vec<u32>,
}

impl Builder {
    fn new() -> Self {
        Builder {
            terms: WordMap::default(),
            words: WordMap::default(),
            word_base: Vec::new(),
            word_text: Vec::new(),
            word_term: Vec::new(),
            word_verb: Vec::new(),
            name_verb: Vec::new(),
            name_verb_reads: Vec::new(),
            current_verb: None,
            pending: Pending {
                occurrences: Vec::new(),
                starts: Vec::new(),
                lengths: Vec::new(),
            },
            name_offsets: vec![0],
            name_terms: Vec::new(),
            category_offsets: vec![0],
            category_terms: Vec::new(),
            bigrams: Vec::new(),
            read_only: Vec::new(),
            sequence: Vec::new(),
        }
    }

    /// Room for `n` more documents (of a few dozen words each).
    fn reserve(&mut self, n: usize) {
        let n = n.min(1 << 20);
        self.pending.starts.reserve(n + 1);
        self.pending.lengths.reserve(n);
        self.pending.occurrences.reserve(n * 32);
        self.read_only.reserve(n);
        self.name_offsets.reserve(n);
        self.category_offsets.reserve(n);
        self.name_terms.reserve(n * 3);
        self.category_terms.reserve(n);
        self.bigrams.reserve(n * 2);
    }

    /// The term id of a word's stem and, for a word with a negative prefix, the term of the
    /// word it negates (`unstages` is about staging, `unlink` about links); `None` for a
    /// stop word. Each distinct word is analysed once.
    fn word_terms(&mut self, word: &str) -> Option<(u32, Option<u32>, u32)> {
        // One lookup for any word met before, stop words included.
        if let Some(&id) = self.words.get(word) {
            if id == STOP_WORD {
                return None;
            }
            let base = self.word_base[id as usize];
            return Some((
                self.word_term[id as usize],
                (base != NO_TERM).then_some(base),
                id,
            ));
        }
        if tokenize::is_stop_word(word) {
            self.words.insert(word.into(), STOP_WORD);
            return None;
        }
        let term = self.intern_stem(word);
        let base = word
            .strip_prefix("un")
            .filter(|base| base.len() >= 4 && !tokenize::is_stop_word(base))
            .map_or(NO_TERM, |base| self.intern_stem(base));
        let word_id = u32::try_from(self.word_text.len()).unwrap_or(u32::MAX - 1);
        self.words.insert(word.into(), word_id);
        self.word_text.push(word.into());
        self.word_term.push(term);
        self.word_base.push(base);
        self.word_verb.push(cue(word));
        Some((term, (base != NO_TERM).then_some(base), word_id))
    }

    fn intern_stem(&mut self, word: &str) -> u32 {
        let stem = tokenize::stem(word);
        if let Some(&term) = self.terms.get(&*stem) {
            return term;
        }
        let term = u32::try_from(self.terms.len()).unwrap_or(u32::MAX);
        self.terms.insert(stem.into(), term);
        term
    }

    /// Adds the words of `text` to `field` of the current document.
    fn add_text(&mut self, field: Field, text: &str) {
        self.sequence.clear();
        let doc = self.pending.starts.len() - 1;
        tokenize::for_each_word(text, |word, piece| {
            let Some((term, base, word_id)) = self.word_terms(word) else {
                return;
            };
            if field == Field::Name
                && self.current_verb.is_none()
                && let Some(reads) = self.word_verb[word_id as usize]
            {
                self.current_verb = Some((term, reads));
            }
            self.pending.occurrences.push((term, field as u8));
            if piece == Piece::Compound {
                return;
            }
            if let Some(base) = base {
                self.pending.occurrences.push((base, field as u8));
            }
            let length = &mut self.pending.lengths[doc][field as usize];
            *length = length.saturating_add(1);
            self.sequence.push(term);
        });
        if matches!(field, Field::Name | Field::Title) {
            let doc = doc as u32;
            for pair in self.sequence.windows(2) {
                self.bigrams.push((bigram_key(pair[0], pair[1]), doc));
            }
        }
        let (offsets, terms) = match field {
            Field::Name => (&self.name_offsets, &mut self.name_terms),
            Field::Category => (&self.category_offsets, &mut self.category_terms),
            _ => return,
        };
        let start = *offsets.last().unwrap_or(&0) as usize;
        for &term in &self.sequence {
            if !terms[start..].contains(&term) {
                terms.push(term);
            }
        }
    }

    fn add(&mut self, doc: &Document) {
        self.pending.starts.push(self.pending.occurrences.len());
        self.pending.lengths.push([0; FIELDS]);
        self.current_verb = None;
        self.add_text(Field::Name, &doc.name);
        let (verb, reads) = self.current_verb.unwrap_or((NO_TERM, false));
        self.name_verb.push(verb);
        self.name_verb_reads.push(reads);
        self.read_only.push(doc.read_only);
        self.name_offsets
            .push(u32::try_from(self.name_terms.len()).unwrap_or(u32::MAX));
        self.add_text(Field::Title, &doc.title);
        for alias in &doc.aliases {
            self.add_text(Field::Title, alias);
        }
        self.add_text(Field::Category, &doc.category);
        self.category_offsets
            .push(u32::try_from(self.category_terms.len()).unwrap_or(u32::MAX));
        for tag in &doc.tags {
            self.add_text(Field::Tags, tag);
        }
        let (summary, rest) = split_summary(&doc.description);
        self.add_text(Field::Summary, summary);
        self.add_text(Field::Description, rest);
        for (name, description) in &doc.params {
            self.add_text(Field::Params, name);
            self.add_text(Field::Params, description);
        }
    }

    fn finish(mut self) -> SearchIndex {
        let n_docs = self.pending.starts.len();
        let n_terms = self.terms.len();
        self.pending.starts.push(self.pending.occurrences.len());
        let (offsets, postings, df) = self.pending.postings(n_terms);
        let n = n_docs as f32;
        let idf = df
            .iter()
            .map(|&df| {
                let df = df as f32;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        self.bigrams.sort_unstable();
        self.bigrams.dedup();
        let typos = TypoIndex::build(self.word_text.iter().map(|word| &**word));
        self.words.retain(|_, id| *id != STOP_WORD);
        let mut category_vocab = self.category_terms.clone();
        category_vocab.sort_unstable();
        category_vocab.dedup();
        SearchIndex {
            n_docs,
            terms: self.terms,
            idf,
            offsets,
            postings,
            words: self.words,
            word_text: self.word_text,
            word_term: self.word_term,
            name_offsets: self.name_offsets,
            name_terms: self.name_terms,
            category_offsets: self.category_offsets,
            category_terms: self.category_terms,
            category_vocab,
            bigrams: self.bigrams,
            read_only: self.read_only,
            name_verb: self.name_verb,
            name_verb_reads: self.name_verb_reads,
            typos,
            #[cfg(feature = "semantic")]
            semantic: None,
        }
    }
}

impl Pending {
    /// Mean length of each field over the documents that have it.
    fn mean_lengths(&self) -> [f32; FIELDS] {
        let mut sums = [0f64; FIELDS];
        let mut counts = [0usize; FIELDS];
        for lengths in &self.lengths {
            for field in 0..FIELDS {
                if lengths[field] > 0 {
                    sums[field] += f64::from(lengths[field]);
                    counts[field] += 1;
                }
            }
        }
        std::array::from_fn(|f| {
            if counts[f] == 0 {
                1.0
            } else {
                (sums[f] / counts[f] as f64) as f32
            }
        })
    }

    /// The postings of every term: offsets by term, postings, and each term's document
    /// frequency. `starts` must end with the end of the occurrences.
    fn postings(&self, n_terms: usize) -> (Vec<u32>, Vec<Posting>, Vec<u32>) {
        let n_docs = self.lengths.len();
        let mean = self.mean_lengths();
        // Per document: fold each term's fields into one BM25F frequency, in a dense
        // accumulator by term (no sort). Documents come in order, so postings come out
        // sorted by document.
        let mut acc = vec![0f32; n_terms];
        let mut doc_order: Vec<u32> = Vec::new();
        let mut doc_terms: Vec<(u32, u32, f32)> = Vec::with_capacity(self.occurrences.len() / 2);
        let mut df = vec![0u32; n_terms];
        for doc in 0..n_docs {
            let slice = &self.occurrences[self.starts[doc]..self.starts[doc + 1]];
            let lengths = &self.lengths[doc];
            let norm: [f32; FIELDS] = std::array::from_fn(|f| {
                WEIGHTS[f] / (1.0 - B[f] + B[f] * f32::from(lengths[f]).max(1.0) / mean[f])
            });
            doc_order.clear();
            for &(term, field) in slice {
                let slot = &mut acc[term as usize];
                if *slot == 0.0 {
                    doc_order.push(term);
                }
                *slot += norm[field as usize];
            }
            for &term in &doc_order {
                let tf = std::mem::take(&mut acc[term as usize]);
                df[term as usize] += 1;
                doc_terms.push((term, doc as u32, tf / (K1 + tf)));
            }
        }
        let mut offsets = Vec::with_capacity(n_terms + 1);
        let mut total = 0u32;
        offsets.push(0);
        for &count in &df {
            total += count;
            offsets.push(total);
        }
        let mut cursor: Vec<u32> = offsets[..n_terms].to_vec();
        let mut postings = vec![
            Posting {
                doc: 0,
                saturation: 0.0
            };
            total as usize
        ];
        for (term, doc, saturation) in doc_terms {
            let slot = &mut cursor[term as usize];
            postings[*slot as usize] = Posting { doc, saturation };
            *slot += 1;
        }
        (offsets, postings, df)
    }
}

impl SearchIndex {
    /// Builds the index of `docs`; a [`Hit`]'s `doc` is a document's position in this order.
    pub fn build(docs: impl IntoIterator<Item = Document>) -> Self {
        let docs = docs.into_iter();
        let mut builder = Builder::new();
        builder.reserve(docs.size_hint().0);
        for doc in docs {
            if builder.pending.starts.len() >= u32::MAX as usize {
                break;
            }
            builder.add(&doc);
        }
        builder.finish()
    }
}
