//! Small text and time formatting helpers shared across layers.

use std::time::SystemTime;

/// ISO 8601 in UTC with milliseconds.
pub(crate) fn iso8601(time: SystemTime) -> String {
    humantime::format_rfc3339_millis(time).to_string()
}
