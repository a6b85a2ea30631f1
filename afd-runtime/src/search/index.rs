//! [`SearchIndex`]: BM25F over the fields of [`Document`]s, built once, searched many times.
//!
//! Every term's postings hold, per document, the BM25F saturated term frequency
//! `tf / (K1 + tf)`, where `tf` is the field-weighted, length-normalised frequency summed
//! over fields. A search only adds `weight * idf * saturation` along the postings of the
//! query's terms (and their synonyms and typo corrections), then adjusts the sums with
//! lexical signals that plain BM25 lacks:
//!
//! - **coverage**: the share of the query's (idf-weighted) concepts a document matches, so
//!   a command that matches every part of the request beats one that repeats one word;
//! - **name coverage**: the share of the command name's words the query asks for, so that
//!   of several similar commands the one whose name *is* the request wins;
//! - **category**: the share of the category's words the query names ("... in Notion");
//! - **intent**: a command whose read-only flag agrees with what the query asks for
//!   (reading or changing, by the verb or question word that leads the query) gains a
//!   little;
//! - **listing**: a query that names things in the plural without asking for a change
//!   ("datasource UIDs") favours a command whose name's verb is `list`;
//! - **bigrams**: two query words in a row that stand in a row in the name or title.
//!
//! The weights were set on a development set of agent queries against real MCP catalogs,
//! coarse values only, and are checked on a held-out set of the same kind.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::Hit;
use super::document::Document;
use super::query::{self, Query};
use super::tokenize::{self, Piece};
use super::typo::TypoIndex;

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

/// One document in one term's postings.
#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: u32,
    /// `tf / (K1 + tf)` with `tf` the BM25F pseudo-frequency.
    saturation: f32,
}

/// A fast, deterministic hasher for the index's own string keys (the FxHash mix, eight
/// bytes at a time). Keys come from the catalog, not from the network, so hash flooding is
/// not a concern.
#[derive(Default)]
pub(crate) struct WordHasher(u64);

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl WordHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, byte: u8) {
        self.mix(u64::from(byte));
    }
}

pub(crate) type WordMap<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;

/// A ranked, typo-tolerant search index over documents, built once.
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
    n_docs: usize,
    /// Stem -> term id.
    terms: WordMap<Box<str>, u32>,
    /// Term id -> inverse document frequency.
    idf: Vec<f32>,
    /// Term id -> its postings, `postings[offsets[t]..offsets[t + 1]]`, by document.
    offsets: Vec<u32>,
    postings: Vec<Posting>,
    /// Lowercase word (before stemming, stop words excluded) -> word id.
    words: WordMap<Box<str>, u32>,
    /// Word id -> its text.
    word_text: Vec<Box<str>>,
    /// Word id -> the term id of its stem.
    word_term: Vec<u32>,
    /// Document -> the distinct term ids of its name, `name_terms[name_offsets[d]..]`.
    name_offsets: Vec<u32>,
    name_terms: Vec<u32>,
    /// Document -> the distinct term ids of its category, as for names.
    category_offsets: Vec<u32>,
    category_terms: Vec<u32>,
    /// `(bigram key, document)` for adjacent terms of names and titles, sorted.
    bigrams: Vec<(u64, u32)>,
    /// Document -> [`Document::read_only`].
    read_only: Vec<Option<bool>>,
    /// Document -> the term of the first verb of its name, or [`NO_TERM`].
    name_verb: Vec<u32>,
    typos: TypoIndex,
}

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
    /// Word id -> whether it is a verb that asks to read or to change something.
    word_verb: Vec<bool>,
    /// Document -> the term of the first verb of its name, or [`NO_TERM`].
    name_verb: Vec<u32>,
    /// The term of the first verb of the name being read.
    current_verb: Option<u32>,
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
        self.word_verb.push(query::cue(word).is_some());
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
                && self.word_verb[word_id as usize]
            {
                self.current_verb = Some(term);
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
        self.name_verb.push(self.current_verb.unwrap_or(NO_TERM));
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

        // Mean length of each field over the documents that have it.
        let mut sums = [0f64; FIELDS];
        let mut counts = [0usize; FIELDS];
        for lengths in &self.pending.lengths {
            for field in 0..FIELDS {
                if lengths[field] > 0 {
                    sums[field] += f64::from(lengths[field]);
                    counts[field] += 1;
                }
            }
        }
        let mean: [f32; FIELDS] = std::array::from_fn(|f| {
            if counts[f] == 0 {
                1.0
            } else {
                (sums[f] / counts[f] as f64) as f32
            }
        });

        // Per document: fold each term's fields into one BM25F frequency, in a dense
        // accumulator by term (no sort). Documents come in order, so postings come out
        // sorted by document.
        let mut acc = vec![0f32; n_terms];
        let mut doc_order: Vec<u32> = Vec::new();
        let mut doc_terms: Vec<(u32, u32, f32)> =
            Vec::with_capacity(self.pending.occurrences.len() / 2);
        let mut df = vec![0u32; n_terms];
        for doc in 0..n_docs {
            let slice =
                &self.pending.occurrences[self.pending.starts[doc]..self.pending.starts[doc + 1]];
            let lengths = &self.pending.lengths[doc];
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
            bigrams: self.bigrams,
            read_only: self.read_only,
            name_verb: self.name_verb,
            typos,
        }
    }
}

/// The first sentence of a description (up to the first `. `, `.\n`, blank line or end),
/// and the rest.
fn split_summary(description: &str) -> (&str, &str) {
    let bytes = description.as_bytes();
    for (index, &byte) in bytes.iter().enumerate() {
        let next = bytes.get(index + 1).copied();
        let end = match byte {
            b'.' | b'!' | b'?' => matches!(next, None | Some(b' ' | b'\n' | b'\r' | b'\t')),
            b'\n' => next == Some(b'\n'),
            _ => false,
        };
        if end {
            return (&description[..=index], &description[index + 1..]);
        }
    }
    (description, "")
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

pub(crate) fn bigram_key(first: u32, second: u32) -> u64 {
    (u64::from(first) << 32) | u64::from(second)
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

    /// The best `limit` documents for `query`, best first; ties go to the earlier document.
    /// A query with no searchable word (empty, only spaces, punctuation or stop words)
    /// finds nothing; so does a query no document matches even through synonyms or typo
    /// corrections. Queries are cut to [`MAX_QUERY_BYTES`](super::MAX_QUERY_BYTES).
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
        if limit == 0 || self.n_docs == 0 {
            return Vec::new();
        }
        let query = query::parse(self, query);
        if query.concepts.is_empty() {
            return Vec::new();
        }
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => self.run(&query, limit, &tie_break, &mut scratch),
            // Re-entered from `tie_break`: use fresh memory rather than fail.
            Err(_) => self.run(&query, limit, &tie_break, &mut Scratch::default()),
        })
    }

    fn run(
        &self,
        query: &Query,
        limit: usize,
        tie_break: &impl Fn(usize) -> f32,
        s: &mut Scratch,
    ) -> Vec<Hit> {
        s.reset(self.n_docs);
        let mut total_cover = 0.0f32;
        let Scratch {
            score,
            cover,
            best,
            strength,
            touched,
            concept_touched,
            ..
        } = &mut *s;
        for concept in &query.concepts {
            total_cover += concept.weight * concept.idf;
            // A concept's strength never exceeds its top weight, so this is at most the
            // concept's whole worth.
            let cover_unit = concept.weight * concept.idf / concept.top.max(f32::MIN_POSITIVE);
            concept_touched.clear();
            for &(term, weight) in &concept.expansions {
                let factor = weight * self.idf(term);
                for posting in self.postings(term) {
                    let d = posting.doc as usize;
                    let value = factor * posting.saturation;
                    let (Some(best), Some(strength)) = (best.get_mut(d), strength.get_mut(d))
                    else {
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
        for &(key, weight) in &query.bigrams {
            let start = self.bigrams.partition_point(|&(k, _)| k < key);
            for &(k, doc) in &self.bigrams[start..] {
                if k != key {
                    break;
                }
                s.bonus[doc as usize] += BIGRAM * weight;
            }
        }
        let total_cover = total_cover.max(f32::MIN_POSITIVE);
        // First the cheap part of the score, a lower bound of the final one (the name and
        // category factors are at least 1). The limit-th best lower bound is a threshold
        // that a document whose upper bound falls short of cannot reach, so only the others
        // get the rest of the scoring.
        for &doc in &s.touched {
            let d = doc as usize;
            let share = (s.cover[d] / total_cover).min(1.0);
            let intent = match (query.read_intent, self.read_only[d]) {
                (Some(wanted), Some(is)) if wanted == is => 1.0 + INTENT,
                _ => 1.0,
            };
            let score = (s.score[d] + s.bonus[d]) * (1.0 - COVERAGE + COVERAGE * share) * intent;
            if score.is_finite() && score > 0.0 {
                s.ranked.push((score, 0.0, doc));
            }
        }
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
        for entry in &mut s.ranked {
            let d = entry.2 as usize;
            let name = field_share(
                self,
                &self.name_offsets,
                &self.name_terms,
                d,
                &query.matches,
            );
            let category = field_share(
                self,
                &self.category_offsets,
                &self.category_terms,
                d,
                &query.matches,
            );
            entry.0 *= (1.0 + NAME_COVERAGE * name) * (1.0 + CATEGORY * category);
            if query.list.is_some_and(|list| list == self.name_verb[d]) {
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

    fn postings(&self, term: u32) -> &[Posting] {
        let t = term as usize;
        match (self.offsets.get(t), self.offsets.get(t + 1)) {
            (Some(&start), Some(&end)) => &self.postings[start as usize..end as usize],
            _ => &[],
        }
    }

    pub(crate) fn term_of_stem(&self, stem: &str) -> Option<u32> {
        self.terms.get(stem).copied()
    }

    pub(crate) fn word_id(&self, word: &str) -> Option<u32> {
        self.words.get(word).copied()
    }

    pub(crate) fn term_of_word(&self, word: u32) -> u32 {
        self.word_term[word as usize]
    }

    pub(crate) fn idf(&self, term: u32) -> f32 {
        self.idf.get(term as usize).copied().unwrap_or(0.0)
    }

    /// Up to `max` corrections of an unknown word: `(word id, edit distance)`, the most
    /// common words first.
    pub(crate) fn corrections(&self, word: &str, max: usize, out: &mut Vec<(u32, usize)>) {
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

    pub(crate) fn word_text(&self, word: u32) -> &str {
        &self.word_text[word as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_the_first_sentence() {
        assert_eq!(
            split_summary("Create a user. Then more."),
            ("Create a user.", " Then more.")
        );
        assert_eq!(split_summary("v1.2 is out"), ("v1.2 is out", ""));
        assert_eq!(split_summary("One\n\nTwo"), ("One\n", "\nTwo"));
        assert_eq!(split_summary(""), ("", ""));
    }

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
