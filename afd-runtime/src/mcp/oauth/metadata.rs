//! What a client learns of the resource server: the RFC 9728 protected resource metadata
//! (served at `/.well-known/oauth-protected-resource` and at that path followed by the
//! endpoint's), and the `WWW-Authenticate` challenge of a refused request (RFC 6750), which
//! points at it.

use serde_json::{Value, json};

use super::OAuth;

/// The well-known path of protected resource metadata.
pub(in crate::mcp) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The metadata's URL for the resource `resource`: the well-known path inserted between
/// its origin and its path (RFC 9728, section 3.1). Built from the configured resource,
/// never from a request's `Host`.
pub(in crate::mcp) fn url(resource: &str) -> String {
    match reqwest::Url::parse(resource) {
        Ok(url) => {
            let path = url.path().trim_end_matches('/');
            format!("{}{WELL_KNOWN}{path}", url.origin().ascii_serialization())
        }
        Err(_) => format!("{}{WELL_KNOWN}", resource.trim_end_matches('/')),
    }
}

/// The metadata document.
pub(in crate::mcp) fn document(oauth: &OAuth, scopes: &[String], name: &str) -> Value {
    json!({
        "resource": oauth.audience,
        "authorization_servers": [oauth.issuer],
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": name,
    })
}

/// A `Bearer` challenge: the metadata's address, the scopes to ask for, and for a refused
/// token the error code and its description.
pub(in crate::mcp) fn challenge(
    resource: &str,
    scopes: &[String],
    error: Option<(&str, &str)>,
) -> String {
    let mut header = String::from("Bearer");
    let mut parameters: Vec<(&str, String)> = Vec::new();
    if let Some((code, description)) = error {
        parameters.push(("error", code.to_owned()));
        parameters.push(("error_description", description.to_owned()));
    }
    parameters.push(("resource_metadata", url(resource)));
    if !scopes.is_empty() {
        parameters.push(("scope", scopes.join(" ")));
    }
    for (index, (name, value)) in parameters.iter().enumerate() {
        header.push_str(if index == 0 { " " } else { ", " });
        header.push_str(name);
        header.push_str("=\"");
        for c in value.chars() {
            if c == '"' || c == '\\' {
                header.push('\\');
            }
            // Header values are visible ASCII; anything else is dropped.
            if c.is_ascii() && !c.is_ascii_control() {
                header.push(c);
            }
        }
        header.push('"');
    }
    header
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_url_inserts_the_well_known_path() {
        assert_eq!(
            url("https://mcp.example.com/mcp"),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            url("http://127.0.0.1:8080/"),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn challenges_quote_their_parameters() {
        let scopes = vec!["shop:read".to_owned(), "shop:write".to_owned()];
        assert_eq!(
            challenge("https://rs.example/mcp", &scopes, None),
            "Bearer resource_metadata=\"https://rs.example/.well-known/oauth-protected-resource/mcp\", scope=\"shop:read shop:write\""
        );
        assert_eq!(
            challenge(
                "https://rs.example/mcp",
                &[],
                Some(("invalid_token", "say \"hi\""))
            ),
            "Bearer error=\"invalid_token\", error_description=\"say \\\"hi\\\"\", resource_metadata=\"https://rs.example/.well-known/oauth-protected-resource/mcp\""
        );
    }
}
