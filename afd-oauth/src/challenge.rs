//! The `Bearer` challenge of a `WWW-Authenticate` header (RFC 6750 section 3, with RFC
//! 9728's `resource_metadata`).

/// What a resource server's 401 or 403 says about the token it wants.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// `resource_metadata`: where the protected resource metadata is (RFC 9728 section 5.1).
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the resource needs, space-separated.
    pub scope: Option<String>,
    /// `error`: `invalid_token`, `insufficient_scope`, ...
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
}

impl Challenge {
    /// The `Bearer` challenge in a `WWW-Authenticate` value, or `None` when the value has
    /// no `Bearer` challenge. Parameters of other schemes around it are skipped; malformed
    /// text ends the parameters read so far without an error.
    pub fn parse(header: &str) -> Option<Challenge> {
        let mut rest = header;
        loop {
            rest = rest.trim_start_matches([' ', '\t', ',']);
            if rest.is_empty() {
                return None;
            }
            let (scheme, after) = take_token(rest);
            if scheme.is_empty() {
                return None;
            }
            let (params, after) = read_params(after);
            if scheme.eq_ignore_ascii_case("bearer") {
                let mut challenge = Challenge::default();
                for (key, value) in params {
                    let slot = match key.to_ascii_lowercase().as_str() {
                        "resource_metadata" => &mut challenge.resource_metadata,
                        "scope" => &mut challenge.scope,
                        "error" => &mut challenge.error,
                        "error_description" => &mut challenge.error_description,
                        _ => continue,
                    };
                    slot.get_or_insert(value);
                }
                return Some(challenge);
            }
            rest = after;
        }
    }

    /// The challenge's scopes, one per item.
    pub fn scopes(&self) -> Vec<String> {
        split_scopes(self.scope.as_deref().unwrap_or(""))
    }

    /// Whether the resource asks for more scope (`error="insufficient_scope"`).
    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// A space-separated scope string as its items.
pub fn split_scopes(scope: &str) -> Vec<String> {
    scope.split_whitespace().map(str::to_owned).collect()
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~/:".contains(c)
}

fn take_token(text: &str) -> (&str, &str) {
    let end = text.find(|c: char| !is_token_char(c)).unwrap_or(text.len());
    text.split_at(end)
}

/// `key=value` pairs (values quoted or tokens) up to the next scheme or the end.
fn read_params(mut rest: &str) -> (Vec<(String, String)>, &str) {
    let mut params = Vec::new();
    loop {
        let trimmed = rest.trim_start_matches([' ', '\t', ',']);
        let (key, after) = take_token(trimmed);
        let after_key = after.trim_start();
        let Some(value_text) = after_key.strip_prefix('=') else {
            // A token not followed by `=` starts the next challenge.
            return (params, trimmed);
        };
        if key.is_empty() {
            return (params, "");
        }
        let value_text = value_text.trim_start();
        let (value, after) = if let Some(quoted) = value_text.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut end = None;
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            value.push(escaped);
                        }
                    }
                    '"' => {
                        end = Some(i + 1);
                        break;
                    }
                    c => value.push(c),
                }
            }
            match end {
                Some(end) => (value, &quoted[end..]),
                None => return (params, ""),
            }
        } else {
            let (token, after) = take_token(value_text);
            // token68 values such as `abc==` end in `=` signs.
            let after_eq = after.trim_start_matches('=');
            let used = value_text.len() - after_eq.len();
            let _ = token;
            (value_text[..used].to_owned(), after_eq)
        };
        params.push((key.to_owned(), value));
        rest = after;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_bearer_parameters() {
        let challenge = Challenge::parse(
            r#"Bearer realm="mcp", error="insufficient_scope", scope="files:read files:write", resource_metadata="https://a.example/.well-known/oauth-protected-resource/mcp""#,
        )
        .unwrap();
        assert_eq!(
            challenge.resource_metadata.as_deref(),
            Some("https://a.example/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(challenge.scopes(), ["files:read", "files:write"]);
        assert!(challenge.is_insufficient_scope());
    }

    #[test]
    fn finds_bearer_among_other_schemes_and_unquoted_values() {
        let challenge =
            Challenge::parse(r#"Basic realm="x", Bearer error=invalid_token, scope="a\"b""#)
                .unwrap();
        assert_eq!(challenge.error.as_deref(), Some("invalid_token"));
        assert_eq!(challenge.scope.as_deref(), Some("a\"b"));
        assert_eq!(Challenge::parse("Bearer").unwrap(), Challenge::default());
        assert!(Challenge::parse(r#"Basic realm="x""#).is_none());
        assert!(Challenge::parse("").is_none());
    }

    #[test]
    fn malformed_text_is_not_a_panic() {
        for text in [
            "Bearer scope=\"unterminated",
            "Bearer =x",
            "Bearer a=, ,, b",
            "\"",
            "Bearer error=\"\\",
            "Negotiate abc==, Bearer scope=s",
        ] {
            let _ = Challenge::parse(text);
        }
        assert_eq!(
            Challenge::parse("Negotiate abc==, Bearer scope=s")
                .unwrap()
                .scope
                .as_deref(),
            Some("s")
        );
    }
}
