//! Small text and time formatting helpers shared across layers: the one-line summary of a
//! description, a confirmation prompt filled from the input, ISO 8601 timestamps, the kind of a JSON value in words, and a store's URL
//! without its password.

use std::time::SystemTime;

use serde_json::Value;

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

/// What a JSON value is, in words for an error message: "a string", "an array", "null".
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `url` without its password (`redis://app:***@host`), for messages and logs.
#[cfg(any(feature = "redis", feature = "postgres"))]
pub(crate) fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let credentials = &url[scheme + 3..at];
            let user = credentials.split(':').next().unwrap_or_default();
            format!("{}{user}:***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

/// `url` without its query parameter `key`, and that parameter's value (percent-decoded),
/// for the parameters this crate reads itself before handing the URL to a driver (the CA a
/// TLS connection trusts, say). The rest of the URL is kept as written.
#[cfg(any(feature = "redis", feature = "postgres"))]
pub(crate) fn take_url_param(url: &str, key: &str) -> (String, Option<String>) {
    let (rest, fragment) = match url.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (url, None),
    };
    let Some((base, query)) = rest.split_once('?') else {
        return (url.to_owned(), None);
    };
    let mut value = None;
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        match form_urlencoded::parse(pair.as_bytes()).next() {
            Some((name, found)) if name == key => value = Some(found.into_owned()),
            _ => kept.push(pair),
        }
    }
    let mut out = base.to_owned();
    if !kept.is_empty() {
        out.push('?');
        out.push_str(&kept.join("&"));
    }
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    (out, value)
}

/// A confirmation prompt with `{field}` replaced by the input's values.
pub(crate) fn fill_prompt(prompt: &str, input: Option<&Value>) -> String {
    let Some(Value::Object(input)) = input else {
        return prompt.to_owned();
    };
    let mut text = prompt.to_owned();
    for (key, value) in input {
        let shown = match value {
            Value::String(value) => value.clone(),
            other => other.to_string(),
        };
        text = text.replace(&format!("{{{key}}}"), &shown);
    }
    text
}

#[cfg(all(test, any(feature = "redis", feature = "postgres")))]
mod tests {
    use super::take_url_param;

    #[test]
    fn a_url_parameter_is_taken_out_and_the_rest_kept_as_written() {
        let (url, ca) = take_url_param(
            "rediss://app:pw@host:6380/2?protocol=resp3&ssl_ca_certs=%2Fetc%2Fca%20x.pem#insecure",
            "ssl_ca_certs",
        );
        assert_eq!(url, "rediss://app:pw@host:6380/2?protocol=resp3#insecure");
        assert_eq!(ca.as_deref(), Some("/etc/ca x.pem"));

        let (url, mode) = take_url_param("postgres://h/db?sslmode=require", "sslmode");
        assert_eq!(
            (url.as_str(), mode.as_deref()),
            ("postgres://h/db", Some("require"))
        );

        let (url, none) = take_url_param("postgres://h/db?application_name=a%26b", "sslmode");
        assert_eq!(
            (url.as_str(), none),
            ("postgres://h/db?application_name=a%26b", None)
        );
        assert_eq!(
            take_url_param("redis://h", "x"),
            ("redis://h".to_owned(), None)
        );
    }
}
