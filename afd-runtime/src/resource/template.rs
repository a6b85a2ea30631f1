//! URI templates of declared resources (`test://template/{id}/data`): simple `{name}`
//! variables between literal text, as RFC 6570 level 1 writes them. Parsing finds the
//! variables; matching a URI gives each variable's value, percent-decoded. A variable's
//! value is one or more characters and never holds `/`, so `{id}` matches one path segment.

use std::fmt;

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Variable(String),
}

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

/// Why a template does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError(String);

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TemplateError {}

impl UriTemplate {
    /// Parses `source`: literal text and `{name}` variables (letters, digits and `_`), each
    /// named once, none next to another.
    ///
    /// # Errors
    ///
    /// An unclosed or empty brace, a variable name with other characters, a repeated
    /// variable, or two variables with nothing between them.
    pub fn parse(source: &str) -> Result<UriTemplate, TemplateError> {
        let mut parts = Vec::new();
        let mut rest = source;
        while let Some(open) = rest.find(['{', '}']) {
            if rest[open..].starts_with('}') {
                return Err(TemplateError(format!("unmatched `}}` in `{source}`")));
            }
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let after = &rest[open + 1..];
            let close = after
                .find('}')
                .ok_or_else(|| TemplateError(format!("unclosed `{{` in `{source}`")))?;
            let name = &after[..close];
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(TemplateError(format!(
                    "`{{{name}}}` is not a simple variable: write `{{name}}` with letters, digits and `_`"
                )));
            }
            if matches!(parts.last(), Some(Part::Variable(_))) {
                return Err(TemplateError(format!(
                    "two variables with nothing between them in `{source}`"
                )));
            }
            if parts
                .iter()
                .any(|part| matches!(part, Part::Variable(seen) if seen == name))
            {
                return Err(TemplateError(format!(
                    "`{{{name}}}` appears twice in `{source}`"
                )));
            }
            parts.push(Part::Variable(name.to_owned()));
            rest = &after[close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Ok(UriTemplate {
            source: source.to_owned(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The variables' names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|part| match part {
            Part::Variable(name) => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// Each variable's value if `uri` matches the template, in the template's order.
    pub fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        let mut values = Vec::new();
        match_from(&self.parts, uri, &mut values).then(|| {
            values
                .into_iter()
                .map(|(name, raw)| (name.to_owned(), percent_decode(raw)))
                .collect()
        })
    }
}

/// Whether `parts` match all of `uri`, pushing the variables' raw values on the way.
fn match_from<'a>(parts: &'a [Part], uri: &'a str, values: &mut Vec<(&'a str, &'a str)>) -> bool {
    match parts.split_first() {
        None => uri.is_empty(),
        Some((Part::Literal(text), rest)) => uri
            .strip_prefix(text.as_str())
            .is_some_and(|after| match_from(rest, after, values)),
        Some((Part::Variable(name), rest)) => {
            let segment = uri.find('/').unwrap_or(uri.len());
            // Shortest value first, so that a literal after the variable is found at its
            // first occurrence.
            for end in uri[..segment]
                .char_indices()
                .map(|(index, c)| index + c.len_utf8())
            {
                values.push((name, &uri[..end]));
                if match_from(rest, &uri[end..], values) {
                    return true;
                }
                values.pop();
            }
            false
        }
    }
}

/// `%2F` and friends decoded; a malformed escape is kept as it is.
fn percent_decode(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escaped = (bytes[index] == b'%')
            .then(|| raw.get(index + 1..index + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                index += 3;
            }
            None => {
                out.push(bytes[index]);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(values: &[(&str, &str)]) -> Vec<(String, String)> {
        values
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect()
    }

    #[test]
    fn matches_variables_between_literals() {
        let template = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(template.variables().collect::<Vec<_>>(), ["id"]);
        assert_eq!(
            template.matches("test://template/42/data"),
            Some(pairs(&[("id", "42")]))
        );
        assert_eq!(template.matches("test://template//data"), None);
        assert_eq!(template.matches("test://template/4/2/data"), None);
        assert_eq!(template.matches("test://template/42/data/more"), None);
    }

    #[test]
    fn decodes_values_and_matches_trailing_variables() {
        let template = UriTemplate::parse("file:///{dir}/{name}.txt").unwrap();
        assert_eq!(
            template.matches("file:///docs/a%20b.c.txt"),
            Some(pairs(&[("dir", "docs"), ("name", "a b.c")]))
        );
        let tail = UriTemplate::parse("users://{user}").unwrap();
        assert_eq!(tail.matches("users://ann"), Some(pairs(&[("user", "ann")])));
    }

    #[test]
    fn rejects_malformed_templates() {
        for bad in [
            "a/{id",
            "a/}",
            "a/{}",
            "a/{i d}",
            "a/{id}{x}",
            "a/{id}/{id}",
            "a/{+id}",
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
    }
}
