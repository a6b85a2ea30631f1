//! Text to terms: splitting into words (including kebab, snake and camel case), lowercasing,
//! stop words and stemming.
//!
//! A *word* is a run of letters and digits. A run that changes case inside
//! (`createUser`, `HTTPServer`) is split at the change, and also kept whole
//! (`createuser`), so that a query for either form finds it. Stems come from the Snowball
//! English stemmer (`rust-stemmers`): `create`, `created` and `creating` all become
//! `creat`.

use std::borrow::Cow;
use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

/// Where a word came from inside its run of letters and digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece {
    /// The run has no case change: the word is the whole run.
    Whole,
    /// One part of a run split at a case change (`create` in `createUser`).
    Part,
    /// The whole of a run that was also split into parts (`createuser`); given after its
    /// parts.
    Compound,
}

/// Words shorter than this (in characters) are dropped: single letters carry no meaning
/// (`s` of `it's`, `a`).
const MIN_WORD_CHARS: usize = 2;

/// Calls `emit` with every lowercase word of `text`, in order, stop words included.
pub(crate) fn for_each_word(text: &str, mut emit: impl FnMut(&str, Piece)) {
    let mut buffer = String::new();
    let bytes = text.as_bytes();
    let mut index = 0;
    // Bytes for ASCII (nearly all catalog text), characters only past it. A run of
    // lowercase ASCII letters and digits, the common case, is emitted as it is.
    while index < bytes.len() {
        let start = index;
        let mut plain = true;
        while index < bytes.len() {
            let byte = bytes[index];
            if byte.is_ascii_lowercase() || byte.is_ascii_digit() {
                index += 1;
            } else if byte.is_ascii_uppercase() {
                plain = false;
                index += 1;
            } else if byte.is_ascii() {
                break;
            } else {
                let ch = text[index..].chars().next().unwrap_or_default();
                if !ch.is_alphanumeric() {
                    break;
                }
                plain = false;
                index += ch.len_utf8();
            }
        }
        if index > start {
            let run = &text[start..index];
            if plain {
                if run.len() >= MIN_WORD_CHARS {
                    emit(run, Piece::Whole);
                }
            } else {
                emit_run(run, &mut buffer, &mut emit);
            }
        }
        // Skip the separator (one ASCII byte or one character).
        if index < bytes.len() {
            index += if bytes[index].is_ascii() {
                1
            } else {
                text[index..].chars().next().map_or(1, char::len_utf8)
            };
        }
    }
}

/// Most case changes split in one run; the rest of the run stays in its last part.
const MAX_CUTS: usize = 16;

/// Splits one run of letters and digits at its case changes and emits the words.
fn emit_run(run: &str, buffer: &mut String, emit: &mut impl FnMut(&str, Piece)) {
    // Byte offsets where a new part starts: lower -> Upper (`createUser`) and the last
    // capital of an acronym before a lowercase letter (`HTTPServer` -> `HTTP`, `Server`).
    let mut cuts: [usize; MAX_CUTS] = [0; MAX_CUTS];
    let n_cuts = if run.is_ascii() {
        ascii_cuts(run.as_bytes(), &mut cuts)
    } else {
        unicode_cuts(run, &mut cuts)
    };
    if n_cuts == 0 {
        emit_lower(run, buffer, Piece::Whole, emit);
        return;
    }
    let mut start = 0;
    for &cut in &cuts[..n_cuts] {
        emit_lower(&run[start..cut], buffer, Piece::Part, emit);
        start = cut;
    }
    emit_lower(&run[start..], buffer, Piece::Part, emit);
    emit_lower(run, buffer, Piece::Compound, emit);
}

/// The case changes of an ASCII run, as [`unicode_cuts`] finds them.
fn ascii_cuts(run: &[u8], cuts: &mut [usize; MAX_CUTS]) -> usize {
    let mut n_cuts = 0;
    for index in 1..run.len() {
        let (prev, ch) = (run[index - 1], run[index]);
        if !ch.is_ascii_uppercase() {
            continue;
        }
        let boundary = prev.is_ascii_lowercase()
            || prev.is_ascii_digit()
            || (prev.is_ascii_uppercase()
                && run.get(index + 1).is_some_and(u8::is_ascii_lowercase));
        if boundary && n_cuts < cuts.len() {
            cuts[n_cuts] = index;
            n_cuts += 1;
        }
    }
    n_cuts
}

/// The byte offsets of a run's case changes.
fn unicode_cuts(run: &str, cuts: &mut [usize; MAX_CUTS]) -> usize {
    let mut n_cuts = 0;
    let mut chars = run.char_indices().peekable();
    let mut previous: Option<char> = None;
    while let Some((index, ch)) = chars.next() {
        if let Some(prev) = previous {
            let next = chars.peek().map(|&(_, c)| c);
            let boundary = (ch.is_uppercase() && (prev.is_lowercase() || prev.is_numeric()))
                || (ch.is_uppercase()
                    && prev.is_uppercase()
                    && next.is_some_and(char::is_lowercase));
            if boundary && n_cuts < cuts.len() {
                cuts[n_cuts] = index;
                n_cuts += 1;
            }
        }
        previous = Some(ch);
    }
    n_cuts
}

fn emit_lower(word: &str, buffer: &mut String, piece: Piece, emit: &mut impl FnMut(&str, Piece)) {
    if word.is_ascii() {
        if word.len() < MIN_WORD_CHARS {
            return;
        }
        if !word.bytes().any(|byte| byte.is_ascii_uppercase()) {
            emit(word, piece);
            return;
        }
        buffer.clear();
        buffer.push_str(word);
        buffer.make_ascii_lowercase();
        emit(buffer, piece);
        return;
    }
    if word.chars().nth(MIN_WORD_CHARS - 1).is_none() {
        return;
    }
    if !word.chars().any(char::is_uppercase) {
        emit(word, piece);
        return;
    }
    buffer.clear();
    buffer.extend(word.chars().flat_map(char::to_lowercase));
    emit(buffer, piece);
}

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// The Snowball English stem of a lowercase word.
pub(crate) fn stem(word: &str) -> Cow<'_, str> {
    let stem = STEMMER.stem(word);
    // Snowball keeps the `s` of a plural without a vowel before it (`dsns`, `vms`): drop
    // it, so that `DSNs` finds `dsn`.
    let bytes = stem.as_bytes();
    if bytes.len() >= 4
        && bytes.last() == Some(&b's')
        && !bytes[..bytes.len() - 1]
            .iter()
            .any(|b| b"aeiouy".contains(b))
    {
        return Cow::Owned(stem[..stem.len() - 1].to_owned());
    }
    stem
}

/// Words too common to tell commands apart: English function words, the pieces of
/// contractions (`ve` of "you've", `don` of "don't"), and the filler of requests to an
/// assistant ("please", "want", "need", "anything"). Sorted, for binary search.
const STOP_WORDS: &[&str] = &[
    "about",
    "above",
    "actually",
    "after",
    "again",
    "ain",
    "already",
    "also",
    "am",
    "an",
    "and",
    "any",
    "anyone",
    "anything",
    "are",
    "aren",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "both",
    "but",
    "by",
    "can",
    "could",
    "couldn",
    "did",
    "didn",
    "do",
    "does",
    "doesn",
    "doing",
    "don",
    "each",
    "either",
    "else",
    "etc",
    "everything",
    "for",
    "from",
    "had",
    "hadn",
    "has",
    "hasn",
    "have",
    "haven",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "him",
    "his",
    "how",
    "however",
    "if",
    "in",
    "into",
    "is",
    "isn",
    "it",
    "its",
    "itself",
    "just",
    "let",
    "like",
    "ll",
    "may",
    "me",
    "might",
    "mine",
    "more",
    "most",
    "much",
    "must",
    "my",
    "myself",
    "need",
    "needs",
    "no",
    "nor",
    "not",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "own",
    "please",
    "re",
    "really",
    "same",
    "shall",
    "she",
    "should",
    "shouldn",
    "so",
    "some",
    "someone",
    "something",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "thus",
    "to",
    "too",
    "us",
    "use",
    "used",
    "uses",
    "using",
    "ve",
    "very",
    "via",
    "want",
    "wants",
    "was",
    "wasn",
    "we",
    "were",
    "weren",
    "what",
    "whatever",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "within",
    "won",
    "would",
    "wouldn",
    "yet",
    "you",
    "your",
    "yours",
    "yourself",
];

/// Whether a lowercase word is a stop word.
pub(crate) fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_word(text, |word, _| out.push(word.to_owned()));
        out
    }

    #[test]
    fn stop_words_are_sorted_and_lowercase() {
        assert!(STOP_WORDS.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(
            STOP_WORDS
                .iter()
                .all(|w| w.chars().all(|c| c.is_ascii_lowercase()))
        );
    }

    #[test]
    fn tells_each_word_where_it_came_from() {
        let mut words = Vec::new();
        for_each_word("user-create createUser", |word, piece| {
            words.push((word.to_owned(), piece))
        });
        assert_eq!(
            words,
            [
                ("user".into(), Piece::Whole),
                ("create".into(), Piece::Whole),
                ("create".into(), Piece::Part),
                ("user".into(), Piece::Part),
                ("createuser".into(), Piece::Compound),
            ]
        );
    }

    #[test]
    fn knows_stop_words() {
        assert!(is_stop_word("the"));
        assert!(!is_stop_word("delete"));
    }

    #[test]
    fn splits_every_case_style() {
        assert_eq!(words("create_user"), ["create", "user"]);
        assert_eq!(words("user-create"), ["user", "create"]);
        assert_eq!(words("createUser"), ["create", "user", "createuser"]);
        assert_eq!(words("HTTPServer"), ["http", "server", "httpserver"]);
        assert_eq!(words("API-get-user v2"), ["api", "get", "user", "v2"]);
        assert_eq!(words("it's a test"), ["it", "test"]);
    }

    #[test]
    fn handles_unicode_and_empty_input() {
        assert!(words("").is_empty());
        assert!(words("  \t-_ ").is_empty());
        assert_eq!(words("Über Straße"), ["über", "straße"]);
        assert_eq!(words("日本語 テキスト"), ["日本語", "テキスト"]);
        assert_eq!(
            words("naïveCafé x9Über"),
            ["naïve", "café", "naïvecafé", "x9", "über", "x9über"]
        );
        assert_eq!(
            words("ÉtéHTTPServer"),
            ["été", "http", "server", "étéhttpserver"]
        );
    }

    #[test]
    fn stems_word_forms_together() {
        assert_eq!(stem("created"), stem("creating"));
        assert_eq!(stem("creates"), stem("create"));
        let forms = ["create", "created", "creating", "creates"];
        let stems: Vec<_> = forms.iter().map(|w| stem(w).into_owned()).collect();
        assert!(stems.windows(2).all(|pair| pair[0] == pair[1]), "{stems:?}");
        // Plurals of acronyms without a vowel.
        assert_eq!(stem("dsns"), stem("dsn"));
        assert_eq!(stem("sdks"), stem("sdk"));
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("class"), "class");
    }
}
