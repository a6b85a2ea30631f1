//! Which context fits an intent (afd-context-suggest) or an unknown command name (the
//! `contextHint` of not-found errors): trigger keywords first, then the context's
//! own name and description, then the names and descriptions of its commands.

use serde::{Deserialize, Serialize};

use crate::command::CommandDef;
use crate::registry::{ContextDef, ContextTree, Registry};

/// A context suggested for an intent or an unknown name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextHint {
    /// The context to enter.
    pub suggested_context: String,
    /// How sure the suggestion is, from 0 to 1.
    pub confidence: f64,
    /// Why, in words.
    pub reason: String,
}

const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "the", "to", "of", "for", "in", "on", "with", "me", "my", "this", "that",
    "it", "is", "be", "i", "want", "need", "please", "can", "you", "some", "from", "by", "do", "x",
];

/// Lowercase words of letters and digits, without stop words.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .filter(|word| !STOP_WORDS.contains(&word.as_str()))
        .collect()
}

/// Endings that make another form of the same word.
const SUFFIXES: &[&str] = &[
    "s", "es", "d", "ed", "ing", "er", "ers", "ion", "ions", "ment", "ments",
];

/// Whether two words are forms of one another: equal, one the other plus an ending
/// (`print`, `printing`, `printer`; `ship`, `shipping` with its doubled consonant), or one
/// edit apart when long enough to tell (`pirnt`). `check` and `checkout` are not.
fn same_word(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.len() >= 3
        && let Some(rest) = long.strip_prefix(short)
    {
        let doubled = short
            .chars()
            .last()
            .and_then(|last| rest.strip_prefix(last));
        if SUFFIXES.contains(&rest) || doubled.is_some_and(|rest| SUFFIXES.contains(&rest)) {
            return true;
        }
    }
    short.len() >= 5 && long.len() - short.len() <= 1 && strsim::damerau_levenshtein(a, b) <= 1
}

fn matched<'w>(query: &'w [String], text: &[String]) -> Vec<&'w str> {
    query
        .iter()
        .filter(|q| text.iter().any(|t| same_word(q, t)))
        .map(String::as_str)
        .collect()
}

/// How well `query` words fit `context`: a score and the reason.
fn score(
    registry: &Registry,
    visible: &dyn Fn(&CommandDef) -> bool,
    tree: &ContextTree,
    context: &ContextDef,
    query: &[String],
) -> Option<(f64, String)> {
    let triggers: Vec<String> = context.triggers().iter().flat_map(|t| words(t)).collect();
    let by_trigger = matched(query, &triggers);
    let own: Vec<String> = words(context.name())
        .into_iter()
        .chain(words(context.description()))
        .collect();
    let by_own: Vec<&str> = matched(query, &own)
        .into_iter()
        .filter(|w| !by_trigger.contains(w))
        .collect();
    let mut command_words = Vec::new();
    for entry in registry.commands() {
        let def = entry.def();
        if !def.is_universal() && tree.allows(context.name(), def) && visible(def) {
            command_words.extend(words(def.name()));
            command_words.extend(words(crate::text::summary(def.description()).as_str()));
        }
    }
    let by_commands: Vec<&str> = matched(query, &command_words)
        .into_iter()
        .filter(|w| !by_trigger.contains(w) && !by_own.contains(w))
        .collect();
    let score =
        3.0 * by_trigger.len() as f64 + 2.0 * by_own.len() as f64 + 1.0 * by_commands.len() as f64;
    if score == 0.0 {
        return None;
    }
    let quote = |words: &[&str]| {
        let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
        let noun = if quoted.len() == 1 { "term" } else { "terms" };
        let verb = if quoted.len() == 1 {
            "matches"
        } else {
            "match"
        };
        format!("{noun} {} {verb}", quoted.join(", "))
    };
    let name = context.name();
    let reason = if !by_trigger.is_empty() {
        format!(
            "The {} the {name} context's trigger keywords",
            quote(&by_trigger)
        )
    } else if !by_own.is_empty() {
        format!("The {} the {name} context", quote(&by_own))
    } else {
        format!("The {} commands of the {name} context", quote(&by_commands))
    };
    Some((score, reason))
}

/// The contexts that fit `intent`, best first (ties: higher priority, then name), with a
/// confidence from 0 to 1.
/// Only the commands `visible` accepts lend their words: a caller learns nothing of the
/// commands hidden from it.
pub(crate) fn suggest(
    registry: &Registry,
    visible: &dyn Fn(&CommandDef) -> bool,
    intent: &str,
    limit: usize,
) -> Vec<ContextHint> {
    let tree = registry.contexts();
    let query = words(intent);
    if query.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(f64, &ContextDef, String)> = tree
        .iter()
        .filter_map(|context| {
            score(registry, visible, tree, context, &query)
                .map(|(score, reason)| (score, context, reason))
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(b.1.priority().cmp(&a.1.priority()))
            .then(a.1.name().cmp(b.1.name()))
    });
    let best = scored.first().map_or(0.0, |s| s.0);
    scored
        .into_iter()
        .take(limit)
        .map(|(score, context, reason)| {
            // Saturating in the score, and relative to the best match, so a runner-up
            // never looks as sure as the winner.
            let absolute = score / (score + 1.5);
            let relative = score / best;
            let confidence = (absolute * relative * 100.0).round() / 100.0;
            ContextHint {
                suggested_context: context.name().to_owned(),
                confidence: confidence.min(0.99),
                reason,
            }
        })
        .collect()
}

/// A context hint for an unknown command name, when `active` does not hold what the name
/// asks for: the context of a close command name, else the best context by keywords.
pub(crate) fn hint_for_name(
    registry: &Registry,
    visible: &dyn Fn(&CommandDef) -> bool,
    name: &str,
    active: Option<&str>,
) -> Option<ContextHint> {
    let tree = registry.contexts();
    if tree.is_empty() {
        return None;
    }
    // A command of another context whose name is close.
    let candidates = registry
        .commands()
        .iter()
        .filter(|entry| visible(entry.def()))
        .map(|entry| entry.name());
    let close = crate::similarity::find_similar(name, candidates, 3)
        .into_iter()
        .find_map(|candidate| {
            let def = registry.get(candidate)?.def();
            if def.is_universal() || active.is_some_and(|active| tree.allows(active, def)) {
                return None;
            }
            let context = *tree.contexts_allowing(def).first()?;
            Some((candidate, context))
        });
    if let Some((command, context)) = close {
        let similarity = crate::similarity::similarity(name, command);
        return Some(ContextHint {
            suggested_context: context.to_owned(),
            confidence: ((similarity * 100.0).round() / 100.0).min(0.99),
            reason: format!("'{command}' is in the {context} context"),
        });
    }
    suggest(registry, visible, name, 1)
        .into_iter()
        .find(|hint| Some(hint.suggested_context.as_str()) != active)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_forms_match() {
        assert!(same_word("print", "printing"));
        assert!(same_word("printer", "print"));
        assert!(same_word("invoice", "invoices"));
        assert!(same_word("shipping", "ship"));
        assert!(same_word("refnud", "refund"));
        assert!(!same_word("check", "checkout"));
        assert!(!same_word("cat", "catalog"));
        assert!(!same_word("order", "ordinal"));
    }

    #[test]
    fn stop_words_are_dropped() {
        assert_eq!(words("I want to print this"), vec!["print"]);
        assert_eq!(words("document-x-print"), vec!["document", "print"]);
    }
}
