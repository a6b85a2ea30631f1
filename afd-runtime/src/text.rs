//! Small text and time formatting helpers shared across layers: the one-line summary of a
//! description, and ISO 8601 timestamps.

use std::time::SystemTime;

/// Summaries are cut to this many characters.
pub(crate) const SUMMARY_MAX_CHARS: usize = 120;

/// The first sentence of `description` without its period, or its first 119 characters
/// and an ellipsis.
///
/// ```
/// use afd_runtime::summary;
/// assert_eq!(summary("Cancel a pending order. Stock is restored."), "Cancel a pending order");
/// assert_eq!(summary("Create a new user account."), "Create a new user account");
/// assert_eq!(summary(&"x".repeat(200)).chars().count(), 120);
/// ```
pub fn summary(description: &str) -> String {
    let first = description.split(". ").next().unwrap_or(description);
    let first = first.split("\n\n").next().unwrap_or(first).trim_end();
    let first = first.strip_suffix('.').unwrap_or(first);
    if first.chars().count() <= SUMMARY_MAX_CHARS {
        return first.to_owned();
    }
    let mut cut: String = description.chars().take(SUMMARY_MAX_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// ISO 8601 in UTC with milliseconds.
pub(crate) fn iso8601(time: SystemTime) -> String {
    humantime::format_rfc3339_millis(time).to_string()
}
