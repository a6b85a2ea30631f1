//! Where the authorization server is: the protected resource metadata (RFC 9728) found from
//! a 401's challenge or the resource's URL, then the authorization server's metadata
//! (RFC 8414, or OpenID Connect discovery) with its issuer checked.

use reqwest::Url;
use serde::Deserialize;

use crate::challenge::Challenge;
use crate::error::OAuthError;
use crate::http::get_json;

/// A protected resource's metadata (RFC 9728 section 2), the fields a client uses.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct ResourceMetadata {
    /// The resource identifier: what the client sends as `resource` (RFC 8707).
    pub resource: String,
    /// The issuers that issue tokens for it.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// The scopes it knows.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
}

/// An authorization server's metadata (RFC 8414 section 2), the fields a client uses.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct ServerMetadata {
    /// The issuer identifier, checked against the one asked for.
    pub issuer: String,
    /// Where a person signs in (the authorization code grant).
    #[serde(default)]
    pub authorization_endpoint: Option<String>,
    /// Where tokens are issued.
    pub token_endpoint: String,
    /// Where a client registers itself (RFC 7591).
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    /// The scopes it knows.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// How clients may authenticate at the token endpoint.
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// PKCE methods; a server that lists none does not say it supports PKCE.
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Grant types it issues tokens for.
    #[serde(default)]
    pub grant_types_supported: Option<Vec<String>>,
    /// Whether it accepts client ID metadata documents (URLs as client ids).
    #[serde(default)]
    pub client_id_metadata_document_supported: Option<bool>,
    /// Whether it sends `iss` in authorization responses (RFC 9207).
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: Option<bool>,
}

/// What discovery found for one resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovered {
    /// The resource's metadata.
    pub resource: ResourceMetadata,
    /// The metadata of the first authorization server it names.
    pub server: ServerMetadata,
}

impl Discovered {
    /// The scopes to ask for: the challenge's when it names some, else the resource's
    /// `scopes_supported`, else none (the server's default).
    pub fn scopes_for(&self, challenge: Option<&Challenge>) -> Vec<String> {
        if let Some(challenge) = challenge {
            let scopes = challenge.scopes();
            if !scopes.is_empty() {
                return scopes;
            }
        }
        self.resource.scopes_supported.clone().unwrap_or_default()
    }
}

fn parse_url(text: &str, what: &str) -> Result<Url, OAuthError> {
    let url = Url::parse(text).map_err(|e| OAuthError::Config(format!("{what} '{text}': {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(OAuthError::Config(format!(
            "{what} '{text}' is not http(s)"
        )));
    }
    Ok(url)
}

/// `origin/.well-known/<suffix><path>`: the well-known URL with the path inserted after
/// it (RFC 8414 section 3.1, RFC 9728 section 3.1); the path `/` counts as none.
fn inserted(url: &Url, suffix: &str) -> String {
    let path = url.path().trim_end_matches('/');
    format!(
        "{}/.well-known/{suffix}{path}",
        url.origin().ascii_serialization()
    )
}

/// Where a resource's metadata may be, in the order to try: the challenge's
/// `resource_metadata`, then the well-known URL with the resource's path, then at the root.
pub fn resource_metadata_urls(
    resource_url: &str,
    challenge: Option<&Challenge>,
) -> Result<Vec<String>, OAuthError> {
    let url = parse_url(resource_url, "server URL")?;
    let mut urls = Vec::new();
    if let Some(named) = challenge.and_then(|c| c.resource_metadata.as_deref()) {
        urls.push(parse_url(named, "resource_metadata")?.to_string());
    }
    for candidate in [
        inserted(&url, "oauth-protected-resource"),
        format!(
            "{}/.well-known/oauth-protected-resource",
            url.origin().ascii_serialization()
        ),
    ] {
        if !urls.contains(&candidate) {
            urls.push(candidate);
        }
    }
    Ok(urls)
}

/// Where an issuer's metadata may be, in the order the MCP authorization specification
/// gives: OAuth with the path inserted, OpenID Connect with the path inserted, OpenID
/// Connect with the path appended (the last only for issuers with a path).
pub fn server_metadata_urls(issuer: &str) -> Result<Vec<String>, OAuthError> {
    let url = parse_url(issuer, "issuer")?;
    let mut urls = vec![
        inserted(&url, "oauth-authorization-server"),
        inserted(&url, "openid-configuration"),
    ];
    let path = url.path().trim_end_matches('/');
    if !path.is_empty() {
        urls.push(format!(
            "{}{path}/.well-known/openid-configuration",
            url.origin().ascii_serialization()
        ));
    }
    Ok(urls)
}

/// Issuer identifiers compare as strings; a trailing `/` is not a difference.
pub fn same_issuer(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// Whether `resource` (from the metadata) identifies the server at `server_url`: the same
/// origin, and the server's path under the resource's.
fn resource_covers(resource: &str, server_url: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    if resource.origin() != server_url.origin() {
        return false;
    }
    let prefix = resource.path().trim_end_matches('/');
    let path = server_url.path();
    path == prefix || path.starts_with(&format!("{prefix}/")) || prefix.is_empty()
}

/// The first of `urls` that answers 200 with a JSON document, read as `T`; 404s and other
/// failures move on to the next, and the last failure is the error.
async fn first_document<T: serde::de::DeserializeOwned>(
    http: &reqwest::Client,
    urls: &[String],
    what: &str,
) -> Result<(String, T), OAuthError> {
    let mut last = OAuthError::Discovery(format!("no {what} URL to try"));
    for url in urls {
        match get_json(http, url).await {
            Ok(Some(document)) => match serde_json::from_value::<T>(document) {
                Ok(parsed) => return Ok((url.clone(), parsed)),
                Err(error) => {
                    last = OAuthError::InvalidResponse {
                        url: url.clone(),
                        reason: format!("not {what}: {error}"),
                    }
                }
            },
            Ok(None) => last = OAuthError::Discovery(format!("no {what} at {url}")),
            Err(error) => last = error,
        }
    }
    Err(last)
}

/// The resource's metadata, checked to describe `server_url`.
pub async fn resource_metadata(
    http: &reqwest::Client,
    server_url: &str,
    challenge: Option<&Challenge>,
) -> Result<ResourceMetadata, OAuthError> {
    let urls = resource_metadata_urls(server_url, challenge)?;
    let (found_at, metadata) =
        first_document::<ResourceMetadata>(http, &urls, "protected resource metadata").await?;
    let server = parse_url(server_url, "server URL")?;
    if !resource_covers(&metadata.resource, &server) {
        return Err(OAuthError::InvalidResponse {
            url: found_at,
            reason: format!(
                "its resource '{}' does not identify {server_url}",
                metadata.resource
            ),
        });
    }
    Ok(metadata)
}

/// The metadata of `issuer`, whose `issuer` field must be `issuer` itself.
pub async fn server_metadata(
    http: &reqwest::Client,
    issuer: &str,
) -> Result<ServerMetadata, OAuthError> {
    let urls = server_metadata_urls(issuer)?;
    let (_, metadata) =
        first_document::<ServerMetadata>(http, &urls, "authorization server metadata").await?;
    if !same_issuer(&metadata.issuer, issuer) {
        return Err(OAuthError::IssuerMismatch {
            expected: issuer.to_owned(),
            found: metadata.issuer,
        });
    }
    Ok(metadata)
}

/// The whole discovery for a server: its resource metadata (from the challenge or the
/// well-known URLs), then the metadata of the first authorization server it names.
pub async fn discover(
    http: &reqwest::Client,
    server_url: &str,
    challenge: Option<&Challenge>,
) -> Result<Discovered, OAuthError> {
    let resource = resource_metadata(http, server_url, challenge).await?;
    let issuer = resource.authorization_servers.first().ok_or_else(|| {
        OAuthError::Discovery(format!(
            "the metadata of {server_url} names no authorization server"
        ))
    })?;
    let server = server_metadata(http, issuer).await?;
    Ok(Discovered { resource, server })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_metadata_is_looked_for_where_rfc_9728_says() {
        let challenge = Challenge {
            resource_metadata: Some("https://a.example/meta".into()),
            ..Challenge::default()
        };
        assert_eq!(
            resource_metadata_urls("https://a.example/mcp", Some(&challenge)).unwrap(),
            [
                "https://a.example/meta",
                "https://a.example/.well-known/oauth-protected-resource/mcp",
                "https://a.example/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(
            resource_metadata_urls("http://127.0.0.1:8080/", None).unwrap(),
            ["http://127.0.0.1:8080/.well-known/oauth-protected-resource"]
        );
        assert!(resource_metadata_urls("ftp://a.example/", None).is_err());
    }

    #[test]
    fn server_metadata_tries_the_three_variants_for_a_path() {
        assert_eq!(
            server_metadata_urls("https://auth.example/tenant1").unwrap(),
            [
                "https://auth.example/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example/.well-known/openid-configuration/tenant1",
                "https://auth.example/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            server_metadata_urls("https://auth.example").unwrap(),
            [
                "https://auth.example/.well-known/oauth-authorization-server",
                "https://auth.example/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn a_resource_covers_its_own_paths_only() {
        let server = Url::parse("https://a.example/mcp").unwrap();
        assert!(resource_covers("https://a.example/mcp", &server));
        assert!(resource_covers("https://a.example/", &server));
        assert!(!resource_covers("https://a.example/other", &server));
        assert!(!resource_covers("https://b.example/mcp", &server));
        assert!(!resource_covers("not a url", &server));
        assert!(same_issuer("https://i.example/", "https://i.example"));
        assert!(!same_issuer("https://i.example/a", "https://i.example"));
    }

    #[test]
    fn scopes_come_from_the_challenge_first() {
        let discovered = Discovered {
            resource: ResourceMetadata {
                resource: "https://a.example/mcp".into(),
                authorization_servers: vec![],
                scopes_supported: Some(vec!["read".into(), "write".into()]),
            },
            server: ServerMetadata {
                issuer: "https://i.example".into(),
                authorization_endpoint: None,
                token_endpoint: "https://i.example/token".into(),
                registration_endpoint: None,
                scopes_supported: None,
                token_endpoint_auth_methods_supported: None,
                code_challenge_methods_supported: None,
                grant_types_supported: None,
                client_id_metadata_document_supported: None,
                authorization_response_iss_parameter_supported: None,
            },
        };
        let challenge = Challenge {
            scope: Some("read".into()),
            ..Challenge::default()
        };
        assert_eq!(discovered.scopes_for(Some(&challenge)), ["read"]);
        assert_eq!(discovered.scopes_for(None), ["read", "write"]);
    }
}
