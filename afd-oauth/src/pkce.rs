//! Proof Key for Code Exchange (RFC 7636, method S256), `state` values, and the
//! authorization request URL of the authorization code grant.

use base64::Engine as _;
use reqwest::Url;
use sha2::{Digest, Sha256};

use crate::error::{OAuthError, Secret};

/// URL-safe base64 without padding of `len` bytes from the OS random source.
fn random(len: usize) -> Result<String, OAuthError> {
    let mut bytes = vec![0u8; len];
    getrandom::fill(&mut bytes)
        .map_err(|e| OAuthError::Config(format!("no random source: {e}")))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// A PKCE pair: the verifier the client keeps, the challenge it sends.
#[derive(Debug, Clone)]
pub struct Pkce {
    /// The `code_verifier`, sent with the code to the token endpoint.
    pub verifier: Secret,
    /// The `code_challenge`: `BASE64URL(SHA256(verifier))`.
    pub challenge: String,
}

impl Pkce {
    /// A new pair from 32 random bytes (a 43-character verifier).
    ///
    /// # Errors
    ///
    /// The OS has no random source.
    pub fn new() -> Result<Self, OAuthError> {
        Ok(Self::from_verifier(random(32)?))
    }

    /// The pair of a given verifier.
    pub fn from_verifier(verifier: String) -> Self {
        let digest = Sha256::digest(verifier.as_bytes());
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest);
        Self {
            verifier: Secret::new(verifier),
            challenge,
        }
    }
}

/// A fresh, unguessable `state` value (16 random bytes).
///
/// # Errors
///
/// The OS has no random source.
pub fn new_state() -> Result<String, OAuthError> {
    random(16)
}

/// The authorization request (RFC 6749 section 4.1.1 with PKCE and RFC 8707's `resource`).
#[derive(Debug, Clone)]
pub struct AuthorizationRequest<'a> {
    /// The server's `authorization_endpoint`.
    pub endpoint: &'a str,
    /// The client's id.
    pub client_id: &'a str,
    /// Where the browser comes back with the code.
    pub redirect_uri: &'a str,
    /// The scopes asked for (none: the server's default).
    pub scopes: &'a [String],
    /// The resource the token is for.
    pub resource: Option<&'a str>,
    /// The PKCE challenge sent.
    pub code_challenge: &'a str,
    /// The `state` to find in the answer.
    pub state: &'a str,
}

impl AuthorizationRequest<'_> {
    /// The URL to open in a browser.
    ///
    /// # Errors
    ///
    /// The endpoint is not a URL.
    pub fn url(&self) -> Result<String, OAuthError> {
        let mut url = Url::parse(self.endpoint).map_err(|e| {
            OAuthError::Config(format!("authorization endpoint '{}': {e}", self.endpoint))
        })?;
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", self.client_id)
                .append_pair("redirect_uri", self.redirect_uri)
                .append_pair("code_challenge", self.code_challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", self.state);
            if !self.scopes.is_empty() {
                query.append_pair("scope", &self.scopes.join(" "));
            }
            if let Some(resource) = self.resource {
                query.append_pair("resource", resource);
            }
        }
        Ok(url.into())
    }
}

/// What came back on the redirect URI: the code, once `state` and `iss` are checked.
///
/// `iss` (RFC 9207) must equal `issuer` when present, and must be present when the
/// server's metadata says it sends it (`iss_required`).
///
/// # Errors
///
/// An `error` answer, a missing code, a `state` other than `expected_state`, or an issuer
/// mismatch.
pub fn read_callback(
    query: &str,
    expected_state: &str,
    issuer: &str,
    iss_required: bool,
) -> Result<Secret, OAuthError> {
    let mut code = None;
    let mut state = None;
    let mut iss = None;
    let mut error = None;
    let mut description = None;
    let parsed = Url::parse(&format!("http://callback/?{query}"))
        .map_err(|e| OAuthError::Config(format!("callback query: {e}")))?;
    for (key, value) in parsed.query_pairs() {
        let slot = match &*key {
            "code" => &mut code,
            "state" => &mut state,
            "iss" => &mut iss,
            "error" => &mut error,
            "error_description" => &mut description,
            _ => continue,
        };
        slot.get_or_insert(value.into_owned());
    }
    if state.as_deref() != Some(expected_state) {
        return Err(OAuthError::InvalidResponse {
            url: "the redirect URI".to_owned(),
            reason: "its state is not the one sent".to_owned(),
        });
    }
    match iss {
        Some(found) if !crate::discovery::same_issuer(&found, issuer) => {
            return Err(OAuthError::IssuerMismatch {
                expected: issuer.to_owned(),
                found,
            });
        }
        None if iss_required => {
            return Err(OAuthError::IssuerMismatch {
                expected: issuer.to_owned(),
                found: "(none)".to_owned(),
            });
        }
        _ => {}
    }
    if let Some(error) = error {
        return Err(OAuthError::Refused { error, description });
    }
    code.map(Secret::new)
        .ok_or_else(|| OAuthError::InvalidResponse {
            url: "the redirect URI".to_owned(),
            reason: "no code".to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_is_rfc_7636s_example() {
        let pkce = Pkce::from_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".to_owned());
        assert_eq!(
            pkce.challenge,
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let fresh = Pkce::new().unwrap();
        assert_eq!(fresh.verifier.expose().len(), 43);
        assert_ne!(new_state().unwrap(), new_state().unwrap());
    }

    #[test]
    fn the_authorization_url_carries_pkce_resource_and_scopes() {
        let scopes = vec!["a".to_owned(), "b".to_owned()];
        let url = AuthorizationRequest {
            endpoint: "https://i.example/auth?x=1",
            client_id: "c",
            redirect_uri: "http://127.0.0.1:5000/callback",
            scopes: &scopes,
            resource: Some("https://r.example/mcp"),
            code_challenge: "ch",
            state: "st",
        }
        .url()
        .unwrap();
        assert_eq!(
            url,
            "https://i.example/auth?x=1&response_type=code&client_id=c&redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Fcallback&code_challenge=ch&code_challenge_method=S256&state=st&scope=a+b&resource=https%3A%2F%2Fr.example%2Fmcp"
        );
    }

    #[test]
    fn the_callback_checks_state_and_issuer() {
        let ok = read_callback(
            "code=abc&state=s&iss=https%3A%2F%2Fi.example",
            "s",
            "https://i.example",
            true,
        );
        assert_eq!(ok.unwrap().expose(), "abc");
        let wrong_state = read_callback("code=abc&state=t", "s", "https://i.example", false);
        assert_eq!(wrong_state.unwrap_err().code(), "OAUTH_INVALID_RESPONSE");
        let wrong_iss = read_callback(
            "code=abc&state=s&iss=https%3A%2F%2Fevil.example",
            "s",
            "https://i.example",
            false,
        );
        assert_eq!(wrong_iss.unwrap_err().code(), "OAUTH_ISSUER_MISMATCH");
        let missing_iss = read_callback("code=abc&state=s", "s", "https://i.example", true);
        assert_eq!(missing_iss.unwrap_err().code(), "OAUTH_ISSUER_MISMATCH");
        let denied = read_callback(
            "error=access_denied&state=s",
            "s",
            "https://i.example",
            false,
        );
        assert_eq!(denied.unwrap_err().code(), "OAUTH_TOKEN_REFUSED");
    }
}
