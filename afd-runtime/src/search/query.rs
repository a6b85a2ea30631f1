//! Query analysis against a [`Vocabulary`]: the query's words become *concepts*, each a set
//! of index terms that satisfy it (its own stem, its synonyms, corrections of a typo) with
//! a weight each.
//!
//! Besides the plain words, analysis recognises:
//! - **compounds written apart**: two adjacent words whose concatenation the vocabulary
//!   knows ("on call" for `oncall`, "data source" for `datasource`) become that word;
//! - **camel case**: `localStorage` stays whole when the vocabulary knows it, else its
//!   parts are searched;
//! - **synonym phrases**: "sign in", "how many", "pull request";
//! - **steps**: in "do A, then do B" the words after `then` weigh less, since the first
//!   step is the command wanted now;
//! - **read or write intent**: the word that leads the request, when it asks to read
//!   ("show", "which") or to change something ("create", "remove"); a cue word further on
//!   is more often a noun ("comment history");
//! - **plurals**: a query that names things in the plural without asking for a change
//!   looks for a listing;
//! - **compounds**: two content words whose concatenation the vocabulary knows ("pull
//!   requests", `pullRequests`) are each satisfied by their own stem or by the compound.

use super::MAX_QUERY_BYTES;
use super::cues::{cue, cue_near};
use super::document::truncate;
use super::synonyms::SynonymTable;
use super::tokenize::{self, Piece};
use super::vocabulary::{Vocabulary, bigram_key};

/// The weight of a match through a synonym, relative to the query's own word.
const SYNONYM_WEIGHT: f32 = 0.6;
/// The weight of a typo correction one edit away.
const TYPO_WEIGHT: f32 = 0.8;
/// The weight of a typo correction two edits away.
const TWO_EDIT_TYPO_WEIGHT: f32 = 0.6;
/// The weight of the words of later steps ("..., then ...").
const LATER_STEP_WEIGHT: f32 = 0.2;
/// Most words read from a query.
const MAX_WORDS: usize = 64;
/// Most concepts searched for.
const MAX_CONCEPTS: usize = 32;
/// Most typo corrections tried per word.
const MAX_CORRECTIONS: usize = 3;

/// One thing the query asks for.
#[derive(Debug, Clone)]
pub(crate) struct Concept {
    /// Its weight in the query (lower in later steps).
    pub weight: f32,
    /// The largest `idf * weight` among its expansions: what matching it is worth to the
    /// coverage share.
    pub idf: f32,
    /// The largest weight among its expansions.
    pub top: f32,
    /// `(term, weight)`: the terms that satisfy it, each term once.
    pub expansions: Vec<(u32, f32)>,
}

/// An analysed query.
#[derive(Debug, Default)]
pub(crate) struct Query {
    pub concepts: Vec<Concept>,
    /// `(bigram key, weight)` of adjacent concepts.
    pub bigrams: Vec<(u64, f32)>,
    /// Every term that satisfies some concept with its best weight, sorted by term.
    pub matches: Vec<(u32, f32)>,
    /// Whether the query asks to read (`Some(true)`: "show ...", "which ...?") or to change
    /// something (`Some(false)`: "create ...", "remove ..."), by the word that leads it.
    pub read_intent: Option<bool>,
    /// The term of `list` when the query names things in the plural without asking for a
    /// change ("open pull requests", "datasource UIDs"): a listing is likelier wanted.
    pub list: Option<u32>,
    /// The step weights summed of the content words that found no term at all (not the
    /// word, nor a synonym, nor a typo correction): what no command of the catalog speaks of.
    pub unknown: f32,
    /// The action the request leads with, when its leading word is a verb, a question, or
    /// a word no command knows in any form (then an action no name names).
    pub action: Option<Action>,
}

/// What a request asks to do, by the word that leads it: reading ("show", "which") or a
/// change named by a verb ("delete", "merge").
#[derive(Debug, Default)]
pub(crate) struct Action {
    /// Whether it asks to read.
    pub reads: bool,
    /// The terms that name the same action: the verb's own and its synonyms' (none for a
    /// question word, a verb no command uses, or a leading word no command knows).
    pub terms: Vec<u32>,
}

/// The position of the word that leads the request: the first word that is not a stop
/// word, or a question word before it. An imperative verb stands there ("show ...",
/// "create ..."); elsewhere a cue word is more often a noun ("comment history").
fn lead(words: &[Word]) -> Option<usize> {
    for (at, word) in words.iter().enumerate() {
        if word.step < 1.0 {
            return None;
        }
        if cue(&word.text) == Some(true) {
            return Some(at);
        }
        if !tokenize::is_stop_word(&word.text) {
            return Some(at);
        }
    }
    None
}

/// Read or write intent, from the word that leads the request.
fn read_intent(words: &[Word]) -> Option<bool> {
    lead(words).and_then(|at| cue(&words[at].text))
}

/// The action the leading word names, with the terms that name it too.
fn action(vocab: &impl Vocabulary, table: &SynonymTable, words: &[Word]) -> Option<Action> {
    let mut word = words[lead(words)?].text.as_str();
    // A misspelt verb ("delet the file") that the catalog does not know either.
    if cue(word).is_none() && vocab.word_id(word).is_none() {
        match cue_near(word) {
            Some(verb) => word = verb,
            // A leading word no command knows in any form ("tweet the release notes"
            // to a catalog without tweets): an action no command's name names.
            None if unknown(vocab, table, word) => {
                return Some(Action {
                    reads: false,
                    terms: Vec::new(),
                });
            }
            None => return None,
        }
    }
    let reads = cue(word)?;
    let stem = tokenize::stem(word);
    let mut terms: Vec<u32> = std::iter::once(&*stem)
        .chain(table.of_stem(&stem).iter().map(|s| &**s))
        .filter_map(|s| vocab.term_of_stem(s))
        .collect();
    terms.sort_unstable();
    terms.dedup();
    Some(Action { reads, terms })
}

/// Whether `word` is a word (letters only: "10" or "v2" name no action) that no command
/// knows in any form: no term satisfies it ([`expansions`]).
fn unknown(vocab: &impl Vocabulary, table: &SynonymTable, word: &str) -> bool {
    word.chars().all(char::is_alphabetic)
        && expansions(vocab, table, word, &tokenize::stem(word), &mut Vec::new()).is_empty()
}

struct Word {
    text: String,
    /// Weight of its step.
    step: f32,
    /// Taken by a compound or a phrase.
    consumed: bool,
}

/// The words of the query, lowercase, stop words included, with their step weights.
fn words(vocab: &impl Vocabulary, text: &str) -> Vec<Word> {
    let mut words: Vec<Word> = Vec::new();
    let mut parts = 0usize;
    tokenize::for_each_word(text, |word, piece| {
        if words.len() >= MAX_WORDS {
            return;
        }
        match piece {
            Piece::Whole => parts = 0,
            Piece::Part => parts += 1,
            Piece::Compound => {
                // `localStorage`: keep it whole when the vocabulary knows the whole.
                if vocab.word_id(word).is_some() {
                    words.truncate(words.len().saturating_sub(parts));
                } else {
                    parts = 0;
                    return;
                }
                parts = 0;
            }
        }
        words.push(Word {
            text: word.to_owned(),
            step: 1.0,
            consumed: false,
        });
    });
    // Steps: words after "then" (or "afterwards", "after that") once something was asked.
    let mut step = 1.0;
    let mut content_seen = false;
    for at in 0..words.len() {
        let text = words[at].text.as_str();
        let next = words.get(at + 1).map(|w| w.text.as_str());
        if content_seen
            && (text == "then" || text == "afterwards" || (text == "after" && next == Some("that")))
        {
            step = LATER_STEP_WEIGHT;
        }
        content_seen |= !tokenize::is_stop_word(text);
        words[at].step = step;
    }
    words
}

/// Analyses `text` against `vocab`.
pub(crate) fn parse(vocab: &impl Vocabulary, text: &str) -> Query {
    let text = truncate(text, MAX_QUERY_BYTES);
    let mut words = words(vocab, text);
    let table = SynonymTable::builtin();
    let mut query = Query {
        read_intent: read_intent(&words),
        action: action(vocab, table, &words),
        ..Query::default()
    };
    phrase_concepts(vocab, table, &mut words, &mut query);
    let sequence = word_concepts(vocab, table, &words, &mut query);
    for pair in sequence.windows(2) {
        let ((first, step_a), (second, step_b)) = (pair[0], pair[1]);
        if first != second {
            let weight = step_a.min(step_b) * (vocab.idf(first) + vocab.idf(second)) / 2.0;
            query.bigrams.push((bigram_key(first, second), weight));
        }
    }
    for concept in &query.concepts {
        for &(term, weight) in &concept.expansions {
            query.matches.push((term, weight * concept.weight));
        }
    }
    if names_plurals(&words) && query.read_intent != Some(false) {
        query.list = vocab.term_of_stem(&tokenize::stem("list"));
    }
    query
        .matches
        .sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
    query.matches.dedup_by_key(|entry| entry.0);
    query
}

/// Adds a concept for each phrase of the synonym table the query contains, stop words
/// included ("sign in", "how many"). A phrase with a stop word takes its words.
fn phrase_concepts(
    vocab: &impl Vocabulary,
    table: &SynonymTable,
    words: &mut [Word],
    query: &mut Query,
) {
    let longest = table.longest_phrase();
    for start in 0..words.len() {
        for len in 2..=longest.min(words.len() - start) {
            let window: Vec<&str> = words[start..start + len]
                .iter()
                .map(|w| w.text.as_str())
                .collect();
            let synonyms = table.of_phrase(&window);
            if synonyms.is_empty() {
                continue;
            }
            let mut expansions = Vec::new();
            for stem in synonyms {
                if let Some(term) = vocab.term_of_stem(stem) {
                    push_max(&mut expansions, term, SYNONYM_WEIGHT);
                }
            }
            let step = words[start].step;
            // A phrase with a stop word ("log in", "check in") means something else than
            // its content word alone: the phrase replaces it. Otherwise ("pull request")
            // the words are searched too.
            let idiom = window.iter().any(|word| tokenize::is_stop_word(word));
            if add_concept(query, vocab, step, expansions) && idiom {
                for word in &mut words[start..start + len] {
                    word.consumed = true;
                }
            }
        }
    }
}

/// Adds a concept for each content word the phrases left, or for the compound two
/// adjacent words form; returns the main term of each, with its step weight, in query
/// order (for bigrams).
fn word_concepts(
    vocab: &impl Vocabulary,
    table: &SynonymTable,
    words: &[Word],
    query: &mut Query,
) -> Vec<(u32, f32)> {
    let mut work = Work::default();
    let mut sequence: Vec<(u32, f32)> = Vec::new();
    let mut at = 0;
    // The term of a compound the current word forms with its neighbour.
    let mut joined_with_previous: Option<u32> = None;
    while at < words.len() && query.concepts.len() < MAX_CONCEPTS {
        let mut extra = joined_with_previous.take();
        if words[at].consumed {
            at += 1;
            continue;
        }
        // Two words whose concatenation the vocabulary knows: "on call" -> "oncall" (with a
        // stop word, the compound replaces them).
        if let Some(next) = words.get(at + 1).filter(|next| !next.consumed) {
            let joined = format!("{}{}", words[at].text, next.text);
            let content =
                !tokenize::is_stop_word(&words[at].text) && !tokenize::is_stop_word(&next.text);
            if let Some(id) = vocab.word_id(&joined).filter(|_| {
                content && joined.chars().count() >= 5 && !tokenize::is_stop_word(&joined)
            }) {
                // Two content words ("pull requests"): either satisfies its own concept
                // or the compound (`pullRequests`).
                let term = vocab.term_of_word(id);
                extra = Some(term);
                joined_with_previous = Some(term);
            } else if joined.chars().count() >= 5
                && !tokenize::is_stop_word(&joined)
                && vocab.word_id(&joined).is_some()
            {
                let step = words[at].step.max(next.step);
                if let Some(term) =
                    word_concept(vocab, table, &joined, step, &mut work, query, None)
                {
                    sequence.push((term, step));
                }
                at += 2;
                continue;
            }
        }
        let word = &words[at];
        if !tokenize::is_stop_word(&word.text)
            && let Some(term) =
                word_concept(vocab, table, &word.text, word.step, &mut work, query, extra)
        {
            sequence.push((term, word.step));
        }
        at += 1;
    }
    sequence
}

/// Whether the first step of the query names something in the plural ("datasource UIDs").
fn names_plurals(words: &[Word]) -> bool {
    words.iter().any(|word| {
        word.step >= 1.0
            && word.text.len() >= 4
            && word.text.ends_with('s')
            && !word.text.ends_with("ss")
            && !tokenize::is_stop_word(&word.text)
            && cue(&word.text).is_none()
            && tokenize::stem(&word.text).len() < word.text.len()
    })
}

/// Working memory of one analysis.
#[derive(Default)]
struct Work {
    /// The stems that have a concept already.
    stems: Vec<String>,
    /// Scratch for typo corrections.
    corrections: Vec<(u32, usize)>,
}

/// Adds the concept of one query word; returns its main term when it has one.
fn word_concept(
    vocab: &impl Vocabulary,
    table: &SynonymTable,
    word: &str,
    step: f32,
    work: &mut Work,
    query: &mut Query,
    extra: Option<u32>,
) -> Option<u32> {
    let Work { stems, corrections } = work;
    let stem = tokenize::stem(word).into_owned();
    if stems.contains(&stem) {
        return None;
    }
    let mut expansions = expansions(vocab, table, word, &stem, corrections);
    stems.push(stem);
    if let Some(term) = extra {
        push_max(&mut expansions, term, 1.0);
    }
    let main = expansions.first().map(|&(term, _)| term);
    if expansions.is_empty() {
        query.unknown += step;
    }
    if add_concept(query, vocab, step, expansions) {
        main
    } else {
        None
    }
}

/// `(term, weight)`: the terms that satisfy one query word whose stem is `stem`: its own
/// term, else corrections of a typo (`corrections` is scratch), and the synonyms of
/// either. Empty when no command knows the word in any form.
fn expansions(
    vocab: &impl Vocabulary,
    table: &SynonymTable,
    word: &str,
    stem: &str,
    corrections: &mut Vec<(u32, usize)>,
) -> Vec<(u32, f32)> {
    let mut expansions: Vec<(u32, f32)> = Vec::new();
    // Stems whose synonyms count, with the weight they carry.
    let mut sources: Vec<(String, f32)> = vec![(stem.to_owned(), 1.0)];
    if let Some(term) = vocab.term_of_stem(stem) {
        expansions.push((term, 1.0));
    } else if vocab.word_id(word).is_none() {
        vocab.corrections(word, MAX_CORRECTIONS, corrections);
        for &(id, distance) in corrections.iter() {
            let weight = if distance <= 1 {
                TYPO_WEIGHT
            } else {
                TWO_EDIT_TYPO_WEIGHT
            };
            push_max(&mut expansions, vocab.term_of_word(id), weight);
            sources.push((tokenize::stem(vocab.word_text(id)).into_owned(), weight));
        }
    }
    for (source, weight) in &sources {
        for synonym in table.of_stem(source) {
            if let Some(term) = vocab.term_of_stem(synonym) {
                push_max(&mut expansions, term, SYNONYM_WEIGHT * weight);
            }
        }
    }
    expansions
}

/// Adds a concept when it has terms; returns whether it did.
fn add_concept(
    query: &mut Query,
    vocab: &impl Vocabulary,
    step: f32,
    expansions: Vec<(u32, f32)>,
) -> bool {
    if expansions.is_empty() || query.concepts.len() >= MAX_CONCEPTS {
        return false;
    }
    let idf = expansions
        .iter()
        .map(|&(term, weight)| vocab.idf(term) * weight)
        .fold(0.0, f32::max);
    let top = expansions
        .iter()
        .map(|&(_, weight)| weight)
        .fold(0.0, f32::max);
    query.concepts.push(Concept {
        weight: step,
        idf,
        top,
        expansions,
    });
    true
}

fn push_max(expansions: &mut Vec<(u32, f32)>, term: u32, weight: f32) {
    match expansions.iter_mut().find(|(t, _)| *t == term) {
        Some(entry) => entry.1 = entry.1.max(weight),
        None => expansions.push((term, weight)),
    }
}
