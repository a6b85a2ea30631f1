//! Typo tolerance: the vocabulary words within a small edit distance of a query word that
//! the vocabulary does not know.
//!
//! Candidates come from a deletion neighbourhood (the SymSpell idea): every vocabulary word
//! is filed under a hash of itself and of each form with one character deleted; a query word
//! looks up the same keys. Two words share a key when they differ by one insertion,
//! deletion, substitution or adjacent transposition, so lookups cost a handful of binary
//! searches however large the vocabulary. Candidates are then checked with the
//! Damerau-Levenshtein distance from `strsim`.

/// Words shorter than this (in characters) are neither corrected nor offered as
/// corrections: at that length one edit makes a different word.
const MIN_TYPO_CHARS: usize = 4;
/// Words at least this long may be two edits away from their correction.
const TWO_EDIT_CHARS: usize = 8;
/// Words longer than this are not looked up (and not filed).
const MAX_TYPO_CHARS: usize = 40;

/// The deletion-neighbourhood index of a vocabulary.
#[derive(Debug, Default)]
pub(crate) struct TypoIndex {
    /// `(key, word id)`, sorted: the hash of each word and of each one-deletion form.
    keys: Vec<(u64, u32)>,
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// The FNV-1a hash of `word`'s characters with the one at `skip` left out (none when
/// `skip` is past the end).
fn hash_without(word: &str, skip: usize) -> u64 {
    let mut hash = FNV_OFFSET;
    for (index, ch) in word.chars().enumerate() {
        if index != skip {
            hash = (hash ^ u64::from(u32::from(ch))).wrapping_mul(FNV_PRIME);
        }
    }
    hash
}

impl TypoIndex {
    /// Files every word (by its position in `words`) of a length worth correcting.
    pub(crate) fn build<'a>(words: impl IntoIterator<Item = &'a str>) -> Self {
        let mut keys = Vec::new();
        for (id, word) in words.into_iter().enumerate() {
            let Ok(id) = u32::try_from(id) else { break };
            let len = word.chars().count();
            if !(MIN_TYPO_CHARS - 1..=MAX_TYPO_CHARS).contains(&len) {
                continue;
            }
            keys.push((hash_without(word, usize::MAX), id));
            for skip in 0..len {
                keys.push((hash_without(word, skip), id));
            }
        }
        keys.sort_unstable();
        keys.dedup();
        TypoIndex { keys }
    }

    /// The vocabulary words (ids, with their edit distance) closest to `query`, which is
    /// assumed not to be in the vocabulary: at most `max` of them, all at the smallest
    /// distance found, fewest first by `rank` (lower first) then id. `word` gives a word's
    /// text by id. Empty when `query` is too short or nothing is close.
    pub(crate) fn corrections<'w>(
        &self,
        query: &str,
        word: impl Fn(u32) -> &'w str,
        rank: impl Fn(u32) -> u32,
        max: usize,
        out: &mut Vec<(u32, usize)>,
    ) {
        out.clear();
        let len = query.chars().count();
        if !(MIN_TYPO_CHARS..=MAX_TYPO_CHARS).contains(&len) || max == 0 {
            return;
        }
        let allowed = if len >= TWO_EDIT_CHARS { 2 } else { 1 };
        let mut best = usize::MAX;
        for skip in (0..len).chain([usize::MAX]) {
            let key = hash_without(query, skip);
            let start = self.keys.partition_point(|&(k, _)| k < key);
            for &(k, id) in &self.keys[start..] {
                if k != key {
                    break;
                }
                if out.iter().any(|&(seen, _)| seen == id) {
                    continue;
                }
                let candidate = word(id);
                if candidate.chars().count() < MIN_TYPO_CHARS {
                    continue;
                }
                let distance = strsim::damerau_levenshtein(query, candidate);
                if distance == 0 || distance > allowed || distance > best {
                    continue;
                }
                if distance < best {
                    best = distance;
                    out.clear();
                }
                out.push((id, distance));
            }
        }
        out.sort_by_key(|&(id, _)| (rank(id), id));
        out.truncate(max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORDS: &[&str] = &["delete", "messages", "channel", "jira", "typescript", "get"];

    fn fix(query: &str) -> Vec<&'static str> {
        let index = TypoIndex::build(WORDS.iter().copied());
        let mut out = Vec::new();
        index.corrections(query, |id| WORDS[id as usize], |_| 0, 3, &mut out);
        out.iter().map(|&(id, _)| WORDS[id as usize]).collect()
    }

    #[test]
    fn finds_one_edit_typos() {
        assert_eq!(fix("delte"), ["delete"]);
        assert_eq!(fix("mesages"), ["messages"]);
        assert_eq!(fix("chanel"), ["channel"]);
        assert_eq!(fix("jria"), ["jira"]);
        assert_eq!(fix("typscript"), ["typescript"]);
        assert_eq!(fix("deletee"), ["delete"]);
    }

    #[test]
    fn ignores_short_and_distant_words() {
        assert!(fix("gte").is_empty());
        assert!(fix("xyzzy").is_empty());
        assert!(fix("").is_empty());
        assert!(fix(&"a".repeat(1000)).is_empty());
    }
}
