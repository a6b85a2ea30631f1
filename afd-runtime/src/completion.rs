//! Completions: the values a client may offer for a prompt argument or a resource-template
//! variable while the user types it. A declaration names a function per argument
//! (`complete(arg = path::to_fn)`), taking what the user typed and, if it wants them, the
//! arguments already chosen ([`CompletionArgs`]); its candidates are kept when they start
//! with what the user has typed (ignoring case), at most [`MAX_COMPLETIONS`] of them.

use std::collections::BTreeMap;

use serde::Serialize;

/// A completion function as the runtime stores it: candidate values for what the user has
/// typed so far, given the arguments already chosen. It may filter by the prefix itself or
/// return every candidate; the runtime keeps only those that start with it. Declarations
/// name a function of either form [`Completer`] takes, and the attribute adapts it.
pub type CompleteFn = fn(&str, &CompletionArgs) -> Vec<String>;

/// The other arguments of the same prompt or template that the user has already chosen
/// (MCP's `context.arguments` of a completion request), so that one argument's values can
/// depend on another's: the cities of the country chosen, the lines of the order chosen.
///
/// ```
/// use afd_runtime::completion::CompletionArgs;
/// let args = CompletionArgs::from_iter([("country", "fr")]);
/// assert_eq!(args.get("country"), Some("fr"));
/// assert_eq!(args.get("city"), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompletionArgs {
    values: BTreeMap<String, String>,
}

impl CompletionArgs {
    /// No arguments chosen.
    pub fn new() -> Self {
        CompletionArgs::default()
    }

    /// The value chosen for `name`, if any.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// Every argument chosen, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether none is chosen.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for CompletionArgs {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        CompletionArgs {
            values: iter
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }
}

/// A function a declaration may name in `complete(arg = path::to_fn)`: either
/// `fn(&str) -> Vec<String>` (what the user typed) or
/// `fn(&str, &CompletionArgs) -> Vec<String>` (and the arguments already chosen). `Marker`
/// tells the two forms apart; it is inferred.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a completion function",
    label = "named in `complete(...)`",
    note = "a completion function is `fn(&str) -> Vec<String>`, or `fn(&str, &CompletionArgs) -> Vec<String>` to see the arguments already chosen"
)]
pub trait Completer<Marker> {
    /// The candidates for `typed`.
    fn candidates(&self, typed: &str, args: &CompletionArgs) -> Vec<String>;
}

impl<F: Fn(&str) -> Vec<String>> Completer<fn(&str)> for F {
    fn candidates(&self, typed: &str, _args: &CompletionArgs) -> Vec<String> {
        self(typed)
    }
}

impl<F: Fn(&str, &CompletionArgs) -> Vec<String>> Completer<fn(&str, &CompletionArgs)> for F {
    fn candidates(&self, typed: &str, args: &CompletionArgs) -> Vec<String> {
        self(typed, args)
    }
}

/// Calls `completer` (what the attribute's generated [`CompleteFn`] does).
#[doc(hidden)]
pub fn call<M>(completer: impl Completer<M>, typed: &str, args: &CompletionArgs) -> Vec<String> {
    completer.candidates(typed, args)
}

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
    args: &CompletionArgs,
) -> Completion {
    completers
        .iter()
        .find(|(name, _)| *name == argument)
        .map(|(_, complete)| Completion::from_candidates(complete(typed, args), typed))
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
        let completers: &[(&str, CompleteFn)] =
            &[("colour", |typed, args| call(colours, typed, args))];
        let none = CompletionArgs::new();
        assert_eq!(complete(completers, "colour", "g", &none).values, ["green"]);
        assert!(complete(completers, "size", "", &none).values.is_empty());
    }

    #[test]
    fn a_function_of_either_form_is_called_with_what_it_takes() {
        fn shades(_typed: &str, args: &CompletionArgs) -> Vec<String> {
            let base = args.get("colour").unwrap_or("grey");
            vec![format!("{base}-light"), format!("{base}-dark")]
        }
        let chosen = CompletionArgs::from_iter([("colour", "red")]);
        assert_eq!(call(shades, "", &chosen), ["red-light", "red-dark"]);
        assert_eq!(
            call(|typed: &str| vec![typed.to_owned()], "x", &chosen),
            ["x"]
        );
        let completers: &[(&str, CompleteFn)] =
            &[("shade", |typed, args| call(shades, typed, args))];
        assert_eq!(
            complete(completers, "shade", "red-d", &chosen).values,
            ["red-dark"]
        );
    }
}
