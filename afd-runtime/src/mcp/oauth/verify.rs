//! Checking one request's bearer token: [`TokenVerifier::check`] reads the `Authorization`
//! header, verifies a JWT (allowed algorithm, a known key of the algorithm's family,
//! signature, `exp` and `nbf` with leeway, `iss`, `aud`) or introspects an opaque token,
//! and gives the [`Principal`] or why the request is refused. A token checked once is
//! remembered (`remember`), so that a client's later requests with it pay a lookup.

use std::sync::Arc;

use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

use super::OAuth;
use super::claims::{TokenRejection, principal_of};
use super::introspect::Introspector;
use super::keys::Keys;
use super::remember::Remembered;
use crate::auth::Principal;

/// Checks the bearer tokens of one resource: what the HTTP endpoint runs on every request
/// with [`HttpOptions::oauth`](crate::mcp::HttpOptions::oauth), usable on its own in front
/// of another server.
pub struct TokenVerifier {
    pub(in crate::mcp) settings: OAuth,
    keys: Keys,
    introspector: Option<Introspector>,
    /// Tokens already checked.
    remembered: Remembered,
}

/// The longest `Authorization` header read; longer ones are refused unread.
const MAX_TOKEN_BYTES: usize = 16 * 1024;

impl TokenVerifier {
    /// A verifier for `settings`; fetches the issuer's keys in the background at once (on
    /// the current Tokio runtime).
    pub fn start(settings: OAuth) -> Arc<TokenVerifier> {
        let http = reqwest::Client::builder()
            .timeout(settings.fetch_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        if !settings.check_audience {
            tracing::warn!(
                "OAuth: tokens are accepted whatever resource they were issued for \
                 (dangerously_accept_any_audience); a token for another service works here"
            );
        }
        let keys = Keys::new(
            settings.issuer.clone(),
            settings.jwks_uri.clone(),
            settings.fixed_keys.as_ref(),
            http.clone(),
            settings.refetch_cooldown,
        );
        let introspector = settings
            .introspection
            .clone()
            .map(|introspection| Introspector::new(introspection, http));
        let verifier = Arc::new(TokenVerifier {
            settings,
            keys,
            introspector,
            remembered: Remembered::default(),
        });
        let warm = Arc::downgrade(&verifier);
        tokio::spawn(async move {
            if let Some(verifier) = warm.upgrade() {
                verifier.keys.prefetch().await;
            }
        });
        verifier
    }

    /// Checks a request's `Authorization` header (its bytes; `None` when absent): the
    /// caller, or why it is refused.
    ///
    /// # Errors
    ///
    /// [`TokenRejection`]: no bearer token, a token not valid here, or one that could not
    /// be checked.
    pub async fn check(&self, header: Option<&[u8]>) -> Result<Principal, TokenRejection> {
        let token = bearer(header)?;
        if let Some(principal) = self.remembered.get(token) {
            return Ok(principal);
        }
        let principal = if token.bytes().filter(|&b| b == b'.').count() == 2 {
            self.verify_jwt(token).await?
        } else {
            self.introspect(token).await?
        };
        // Remembered until it expires (without leeway), at most a minute.
        let exp = principal.claim("exp").and_then(Value::as_u64);
        self.remembered.keep(token, &principal, exp);
        Ok(principal)
    }

    /// An opaque token, by introspection where it is configured.
    async fn introspect(&self, token: &str) -> Result<Principal, TokenRejection> {
        match &self.introspector {
            Some(introspector) => {
                let endpoint = match &introspector.settings.endpoint {
                    Some(endpoint) => Some(endpoint.clone()),
                    None => self
                        .keys
                        .metadata()
                        .await
                        .and_then(|metadata| metadata.introspection_endpoint),
                };
                let Some(endpoint) = endpoint else {
                    tracing::warn!(
                        "OAuth: no introspection endpoint is known; opaque tokens are refused"
                    );
                    return Err(TokenRejection::Unavailable);
                };
                introspector.check(&endpoint, token, &self.settings).await
            }
            None => Err(TokenRejection::Invalid("the token is not a JWT")),
        }
    }

    async fn verify_jwt(&self, token: &str) -> Result<Principal, TokenRejection> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| TokenRejection::Invalid("the token's header cannot be read"))?;
        let alg = header.alg;
        if alg.family() == jsonwebtoken::AlgorithmFamily::Hmac
            || !self.settings.algorithms.contains(&alg)
        {
            return Err(TokenRejection::Invalid(
                "the token's signature algorithm is not accepted",
            ));
        }
        let key = self
            .keys
            .key(header.kid.as_deref(), alg.family())
            .await
            .ok_or(TokenRejection::Invalid(
                "the token is signed with an unknown key",
            ))?;
        if key.family != alg.family() || key.algorithm.is_some_and(|pinned| pinned != alg) {
            return Err(TokenRejection::Invalid(
                "the token's algorithm does not fit its key",
            ));
        }
        let validation = self.validation(alg);
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key.decoding, &validation)
            .map_err(|error| TokenRejection::Invalid(describe(error.kind())))?;
        principal_of(data.claims)
    }

    fn validation(&self, alg: Algorithm) -> Validation {
        let settings = &self.settings;
        let mut validation = Validation::new(alg);
        validation.leeway = settings.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[settings.issuer.as_str()]);
        let mut required = vec!["exp", "iss", "sub"];
        if settings.check_audience {
            validation.set_audience(&[settings.audience.as_str()]);
            required.push("aud");
        } else {
            validation.validate_aud = false;
        }
        validation.set_required_spec_claims(&required);
        validation
    }
}

/// The token of a `Bearer` `Authorization` header (the scheme in any case, RFC 7235).
fn bearer(header: Option<&[u8]>) -> Result<&str, TokenRejection> {
    let Some(header) = header else {
        return Err(TokenRejection::Missing);
    };
    if header.len() > MAX_TOKEN_BYTES {
        return Err(TokenRejection::Invalid(
            "the Authorization header is too long",
        ));
    }
    let header = std::str::from_utf8(header)
        .map_err(|_| TokenRejection::Invalid("the Authorization header is not text"))?;
    let (scheme, token) = header
        .trim()
        .split_once(' ')
        .ok_or(TokenRejection::Missing)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(TokenRejection::Missing);
    }
    let token = token.trim();
    // RFC 6750's b64token: letters, digits and -._~+/ then any '='.
    let body = token.trim_end_matches('=');
    if body.is_empty()
        || !body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
    {
        return Err(TokenRejection::Invalid("the bearer token is malformed"));
    }
    Ok(token)
}

/// What failed, in words for `error_description`.
fn describe(kind: &jsonwebtoken::errors::ErrorKind) -> &'static str {
    use jsonwebtoken::errors::ErrorKind;
    match kind {
        ErrorKind::InvalidSignature => "the token's signature does not verify",
        ErrorKind::ExpiredSignature => "the token has expired",
        ErrorKind::ImmatureSignature => "the token is not valid yet",
        ErrorKind::InvalidAudience => "the token was not issued for this resource",
        ErrorKind::InvalidIssuer => "the token was not issued by the trusted authorization server",
        ErrorKind::MissingRequiredClaim(_) => "the token lacks a required claim",
        ErrorKind::InvalidAlgorithm | ErrorKind::MissingAlgorithm => {
            "the token's signature algorithm is not accepted"
        }
        _ => "the token cannot be read",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_reads_the_token_and_refuses_the_rest() {
        assert_eq!(bearer(None), Err(TokenRejection::Missing));
        assert_eq!(bearer(Some(b"Basic abc")), Err(TokenRejection::Missing));
        assert_eq!(bearer(Some(b"Bearer")), Err(TokenRejection::Missing));
        assert_eq!(bearer(Some(b"bearer a.b.c")), Ok("a.b.c"));
        assert_eq!(bearer(Some(b"Bearer  tok==")), Ok("tok=="));
        assert!(matches!(
            bearer(Some(b"Bearer a b")),
            Err(TokenRejection::Invalid(_))
        ));
        assert!(matches!(
            bearer(Some(b"Bearer \xff")),
            Err(TokenRejection::Invalid(_))
        ));
        assert!(matches!(
            bearer(Some(b"Bearer ====")),
            Err(TokenRejection::Invalid(_))
        ));
        let long = [b'a'; MAX_TOKEN_BYTES + 1];
        assert!(matches!(
            bearer(Some(&long)),
            Err(TokenRejection::Invalid(_))
        ));
    }

    #[test]
    fn claims_become_a_principal() {
        let claims = serde_json::json!({
            "sub": "user-1", "azp": "cli", "scp": ["a", "b:c", "bad one"], "tenant": "t1"
        });
        let Value::Object(claims) = claims else {
            unreachable!()
        };
        let principal = principal_of(claims).unwrap();
        assert_eq!(principal.subject(), "user-1");
        assert_eq!(principal.client_id(), Some("cli"));
        assert_eq!(principal.scopes().to_string(), "a b:c");
        assert_eq!(principal.claim("tenant").unwrap(), "t1");
        let Value::Object(no_sub) = serde_json::json!({"scope": "a"}) else {
            unreachable!()
        };
        assert!(principal_of(no_sub).is_err());
    }
}
