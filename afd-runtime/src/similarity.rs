//! Fuzzy name matching for "Did you mean ...?" suggestions.
//!
//! Similarity is the normalised Levenshtein similarity `1 - distance / max_len` (via
//! `strsim`), case-insensitive, with a similarity threshold of 0.4.

/// The lowest similarity at which a name is suggested.
pub(crate) const SUGGESTION_THRESHOLD: f64 = 0.4;

/// The normalised similarity of two names, from 0 (nothing alike) to 1 (equal, ignoring
/// case).
pub(crate) fn similarity(a: &str, b: &str) -> f64 {
    if a.eq_ignore_ascii_case(b) {
        return 1.0;
    }
    strsim::normalized_levenshtein(&a.to_lowercase(), &b.to_lowercase())
}

/// Up to `max` candidates whose similarity to `query` reaches [`SUGGESTION_THRESHOLD`],
/// most similar first (ties in the candidates' order).
pub(crate) fn find_similar<'a>(
    query: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> Vec<&'a str> {
    let query = query.to_lowercase();
    let mut scored: Vec<(f64, usize, &'a str)> = candidates
        .into_iter()
        .enumerate()
        .filter_map(|(order, candidate)| {
            let score = strsim::normalized_levenshtein(&query, &candidate.to_lowercase());
            (score >= SUGGESTION_THRESHOLD).then_some((score, order, candidate))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(max)
        .map(|(_, _, name)| name)
        .collect()
}

/// The suggestion text for a name that was not found, naming the closest match:
/// `Did you mean 'order-cancel'? Use afd-discover to list all commands.`
pub(crate) fn did_you_mean(closest: Option<&str>, fallback: &str) -> String {
    match closest {
        Some(name) => format!("Did you mean '{name}'? {fallback}"),
        None => fallback.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similarity_ignores_case_and_rewards_close_names() {
        assert_eq!(similarity("order-cancel", "ORDER-CANCEL"), 1.0);
        assert!(similarity("order-cancle", "order-cancel") > 0.8);
    }

    #[test]
    fn find_similar_keeps_close_names_only() {
        let names = ["order-cancel", "order-create", "user-get"];
        assert_eq!(find_similar("order-cancle", names, 1), vec!["order-cancel"]);
        assert!(find_similar("zzz", names, 3).is_empty());
    }

    #[test]
    fn threshold_filters_unrelated_names() {
        assert!(find_similar("delete", ["order-cancel", "user-get"], 3).is_empty());
    }

    #[test]
    fn most_similar_comes_first() {
        let names = ["user-get", "user-create", "user-delete"];
        assert_eq!(find_similar("user-creat", names, 3)[0], "user-create");
    }

    #[test]
    fn suggestion_text() {
        assert_eq!(did_you_mean(None, "List them."), "List them.");
        assert_eq!(
            did_you_mean(Some("a"), "List them."),
            "Did you mean 'a'? List them."
        );
    }
}
