//! Completions: the values a client may offer for a prompt argument or a resource-template
//! variable while the user types it. A declaration names a function per argument
//! (`complete(arg = path::to_fn)`); its candidates are kept when they start with what the
//! user has typed (ignoring case), at most [`MAX_COMPLETIONS`] of them.

use serde::Serialize;

/// A completion function: candidate values for what the user has typed so far. It may
/// filter by the prefix itself or return every candidate; the runtime keeps only those
/// that start with it.
pub type CompleteFn = fn(&str) -> Vec<String>;

/// The most values one answer carries (MCP's limit); `total` and `has_more` tell the rest.
pub const MAX_COMPLETIONS: usize = 100;

/// The values offered for one argument.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The values, in the completion function's order, at most [`MAX_COMPLETIONS`].
    pub values: Vec<String>,
    /// How many values matched in all.
    pub total: usize,
    /// Whether more matched than `values` holds.
    pub has_more: bool,
}

impl Completion {
    /// The candidates that start with `typed` (ignoring case), without repeats.
    pub fn from_candidates(candidates: Vec<String>, typed: &str) -> Completion {
        let typed = typed.to_lowercase();
        let mut matching: Vec<String> = Vec::new();
        for candidate in candidates {
            if candidate.to_lowercase().starts_with(&typed) && !matching.contains(&candidate) {
                matching.push(candidate);
            }
        }
        let total = matching.len();
        matching.truncate(MAX_COMPLETIONS);
        Completion {
            has_more: total > matching.len(),
            values: matching,
            total,
        }
    }
}

/// Completes `argument` with the function declared for it, if any; no function, no values.
pub(crate) fn complete(
    completers: &[(&'static str, CompleteFn)],
    argument: &str,
    typed: &str,
) -> Completion {
    completers
        .iter()
        .find(|(name, _)| *name == argument)
        .map(|(_, complete)| Completion::from_candidates(complete(typed), typed))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_candidates_by_prefix_ignoring_case() {
        let found = Completion::from_candidates(
            vec![
                "Alpha".into(),
                "alpine".into(),
                "beta".into(),
                "alpine".into(),
            ],
            "AL",
        );
        assert_eq!(found.values, ["Alpha", "alpine"]);
        assert_eq!((found.total, found.has_more), (2, false));
    }

    #[test]
    fn caps_the_values_and_says_there_are_more() {
        let many = (0..150).map(|i| format!("v{i}")).collect();
        let found = Completion::from_candidates(many, "v");
        assert_eq!(found.values.len(), MAX_COMPLETIONS);
        assert_eq!((found.total, found.has_more), (150, true));
    }

    #[test]
    fn an_argument_without_a_function_has_no_values() {
        fn colours(_: &str) -> Vec<String> {
            vec!["red".into(), "green".into()]
        }
        let completers: &[(&str, CompleteFn)] = &[("colour", colours)];
        assert_eq!(complete(completers, "colour", "g").values, ["green"]);
        assert!(complete(completers, "size", "").values.is_empty());
    }
}
