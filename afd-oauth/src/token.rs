//! Token requests (RFC 6749 section 4 and 6): how the client authenticates, the request,
//! and the token it yields.

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use serde::Deserialize;

use crate::error::{OAuthError, Secret};
use crate::http::{body, unreachable};

/// How a client authenticates at the token endpoint (RFC 6749 section 2.3, RFC 8414's
/// `token_endpoint_auth_methods_supported`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientAuth {
    /// `client_secret_basic`: the id and secret in an HTTP Basic `Authorization` header.
    #[default]
    Basic,
    /// `client_secret_post`: the id and secret in the form.
    Post,
    /// `none`: a public client, only its `client_id` in the form.
    None,
    /// `private_key_jwt` (RFC 7523 section 2.2): a JWT signed with the client's private
    /// key ([`AssertionKey`]) in the form, no secret sent.
    PrivateKeyJwt,
}

impl ClientAuth {
    /// The method's name in metadata.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Basic => "client_secret_basic",
            Self::Post => "client_secret_post",
            Self::None => "none",
            Self::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// The method named `name`, if it is one of these.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "client_secret_basic" => Some(Self::Basic),
            "client_secret_post" => Some(Self::Post),
            "none" => Some(Self::None),
            "private_key_jwt" => Some(Self::PrivateKeyJwt),
            _ => None,
        }
    }

    /// The method to use with a server advertising `supported` (absent: RFC 8414's
    /// default, `client_secret_basic`): `none` without a secret; with one, `basic` when
    /// the server takes it, else `post`.
    pub fn choose(supported: Option<&[String]>, has_secret: bool) -> Self {
        if !has_secret {
            return Self::None;
        }
        match supported {
            None => Self::Basic,
            Some(methods) if methods.iter().any(|m| m == "client_secret_basic") => Self::Basic,
            Some(methods) if methods.iter().any(|m| m == "client_secret_post") => Self::Post,
            Some(_) => Self::Basic,
        }
    }
}

/// A private key that signs the client's JWT assertions (`private_key_jwt`, RFC 7523):
/// its `Debug` shows only the algorithm.
#[derive(Clone)]
pub struct AssertionKey {
    key: jsonwebtoken::EncodingKey,
    algorithm: jsonwebtoken::Algorithm,
}

impl std::fmt::Debug for AssertionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AssertionKey")
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

/// How long a signed assertion is valid.
const ASSERTION_LIFETIME: Duration = Duration::from_secs(60);

impl AssertionKey {
    /// A PEM private key (PKCS#8, or PKCS#1 for RSA) for `algorithm`: `RS256`, `RS384`,
    /// `RS512`, `PS256`, `PS384`, `PS512`, `ES256` or `ES384`.
    ///
    /// # Errors
    ///
    /// Another algorithm, or a key that is not a private key of its kind (checked by
    /// signing a throwaway assertion).
    pub fn from_pem(pem: &str, algorithm: &str) -> Result<Self, OAuthError> {
        use jsonwebtoken::{Algorithm, EncodingKey};
        let algorithm: Algorithm = algorithm.parse().map_err(|_| {
            OAuthError::Config(format!("'{algorithm}' is not a JWT signing algorithm"))
        })?;
        let key = match algorithm {
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => EncodingKey::from_rsa_pem(pem.as_bytes()),
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem.as_bytes()),
            other => {
                return Err(OAuthError::Config(format!(
                    "{other:?} is not an asymmetric algorithm for private_key_jwt"
                )));
            }
        }
        // The key's bytes never reach the message.
        .map_err(|e| {
            OAuthError::Config(format!(
                "the private key is not a {algorithm:?} PEM key: {e}"
            ))
        })?;
        let made = Self { key, algorithm };
        // A key of another kind (a public key, another curve) fails here, not at first use.
        made.sign("check", "check").map_err(|_| {
            OAuthError::Config(format!(
                "the private key is not a {algorithm:?} private key"
            ))
        })?;
        Ok(made)
    }

    /// A fresh assertion from `client_id` for `audience` (the authorization server's
    /// issuer, or its token endpoint): `iss` and `sub` the client, a one-minute lifetime,
    /// a random `jti`.
    ///
    /// # Errors
    ///
    /// The OS random source or the signature failed.
    pub fn sign(&self, client_id: &str, audience: &str) -> Result<Secret, OAuthError> {
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let claims = serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME.as_secs(),
            "jti": crate::pkce::new_state()?,
        });
        jsonwebtoken::encode(
            &jsonwebtoken::Header::new(self.algorithm),
            &claims,
            &self.key,
        )
        .map(Secret::new)
        .map_err(|e| OAuthError::Config(format!("cannot sign the client assertion: {e}")))
    }
}

/// A registered OAuth client: its id, its secret or key if it has one, and how it
/// authenticates.
#[derive(Debug, Clone)]
pub struct ClientIdentity {
    /// The `client_id`.
    pub client_id: String,
    /// The `client_secret` (confidential clients).
    pub client_secret: Option<Secret>,
    /// The key of `private_key_jwt`, and the audience of its assertions.
    pub assertion: Option<(AssertionKey, String)>,
    /// How it authenticates at the token endpoint.
    pub auth: ClientAuth,
}

/// An access token and what came with it.
#[derive(Debug, Clone)]
pub struct Token {
    /// The access token.
    pub access_token: Secret,
    /// The refresh token, when one was issued.
    pub refresh_token: Option<Secret>,
    /// When the access token expires, when the server said (`expires_in`).
    pub expires_at: Option<SystemTime>,
    /// Its lifetime as issued.
    pub lifetime: Option<Duration>,
    /// The scopes granted, when the server said.
    pub scope: Option<String>,
}

impl Token {
    /// Whether the token should be renewed now: it expires within a margin of a third of
    /// its lifetime, at most 30 seconds. A token without an expiry never is.
    pub fn due(&self, now: SystemTime) -> bool {
        let (Some(expires_at), Some(lifetime)) = (self.expires_at, self.lifetime) else {
            return self.expires_at.is_some_and(|at| at <= now);
        };
        let margin = (lifetime / 3).min(Duration::from_secs(30));
        match expires_at.duration_since(now) {
            Ok(left) => left <= margin,
            Err(_) => true,
        }
    }
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    token_type: String,
    #[serde(default)]
    expires_in: Option<u64>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
}

#[derive(Deserialize)]
struct ErrorAnswer {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// `application/x-www-form-urlencoded` encoding of one value (RFC 6749 appendix B, which
/// the Basic header's id and secret also use).
fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(byte as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// Asks `token_endpoint` for a token with the grant's `params` (`grant_type` and the
/// rest), the client authenticating as `client.auth` says.
pub async fn request_token(
    http: &reqwest::Client,
    token_endpoint: &str,
    client: &ClientIdentity,
    params: &[(&str, &str)],
) -> Result<Token, OAuthError> {
    let mut form: Vec<(&str, &str)> = params.to_vec();
    let assertion;
    let mut request = http
        .post(token_endpoint)
        .header(http::header::ACCEPT, "application/json");
    match (client.auth, &client.client_secret) {
        (ClientAuth::Basic, Some(secret)) => {
            let pair = format!(
                "{}:{}",
                form_encode(&client.client_id),
                form_encode(secret.expose())
            );
            let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
            request = request.header(http::header::AUTHORIZATION, format!("Basic {encoded}"));
        }
        (ClientAuth::Post, Some(secret)) => {
            form.push(("client_id", &client.client_id));
            form.push(("client_secret", secret.expose()));
        }
        (ClientAuth::None, _) => form.push(("client_id", &client.client_id)),
        (ClientAuth::PrivateKeyJwt, _) => {
            let Some((key, audience)) = &client.assertion else {
                return Err(OAuthError::Config(
                    "private_key_jwt needs a private key".to_owned(),
                ));
            };
            assertion = key.sign(&client.client_id, audience)?;
            form.push(("client_id", &client.client_id));
            form.push((
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            ));
            form.push(("client_assertion", assertion.expose()));
        }
        (ClientAuth::Basic | ClientAuth::Post, None) => {
            return Err(OAuthError::Config(format!(
                "{} needs a client secret",
                client.auth.as_str()
            )));
        }
    }
    let sent_at = SystemTime::now();
    let response = request
        .form(&form)
        .send()
        .await
        .map_err(|e| unreachable(token_endpoint, &e))?;
    let status = response.status();
    let bytes = body(token_endpoint, response).await?;
    if !status.is_success() {
        return Err(match serde_json::from_slice::<ErrorAnswer>(&bytes) {
            Ok(answer) => OAuthError::Refused {
                error: answer.error,
                description: answer.error_description,
            },
            Err(_) => OAuthError::InvalidResponse {
                url: token_endpoint.to_owned(),
                reason: format!("HTTP {status} without an OAuth error"),
            },
        });
    }
    let answer: TokenAnswer =
        serde_json::from_slice(&bytes).map_err(|e| OAuthError::InvalidResponse {
            url: token_endpoint.to_owned(),
            // serde's message names the field, never the value of a string it read.
            reason: format!("not a token response: {e}"),
        })?;
    if !answer.token_type.eq_ignore_ascii_case("bearer") {
        return Err(OAuthError::InvalidResponse {
            url: token_endpoint.to_owned(),
            reason: format!("token type '{}', not Bearer", answer.token_type),
        });
    }
    let lifetime = answer.expires_in.map(Duration::from_secs);
    Ok(Token {
        access_token: Secret::new(answer.access_token),
        refresh_token: answer.refresh_token.map(Secret::new),
        // Counted from when the request was sent: never later than the server's clock.
        expires_at: lifetime.map(|lifetime| sent_at + lifetime),
        lifetime,
        scope: answer.scope,
    })
}

/// Renews a token with its refresh token (RFC 6749 section 6), for `resource`. A refresh
/// answer without a new refresh token keeps the old one.
pub async fn refresh(
    http: &reqwest::Client,
    token_endpoint: &str,
    client: &ClientIdentity,
    refresh_token: &Secret,
    resource: Option<&str>,
) -> Result<Token, OAuthError> {
    let mut params = vec![
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token.expose()),
    ];
    if let Some(resource) = resource {
        params.push(("resource", resource));
    }
    let mut token = request_token(http, token_endpoint, client, &params).await?;
    if token.refresh_token.is_none() {
        token.refresh_token = Some(refresh_token.clone());
    }
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_method_follows_what_the_server_takes() {
        let post_only = vec!["client_secret_post".to_owned()];
        let both = vec![
            "client_secret_post".to_owned(),
            "client_secret_basic".to_owned(),
        ];
        assert_eq!(ClientAuth::choose(None, true), ClientAuth::Basic);
        assert_eq!(ClientAuth::choose(Some(&post_only), true), ClientAuth::Post);
        assert_eq!(ClientAuth::choose(Some(&both), true), ClientAuth::Basic);
        assert_eq!(ClientAuth::choose(Some(&both), false), ClientAuth::None);
        for auth in [ClientAuth::Basic, ClientAuth::Post, ClientAuth::None] {
            assert_eq!(ClientAuth::from_name(auth.as_str()), Some(auth));
        }
    }

    #[test]
    fn form_encoding_escapes_what_basic_credentials_need() {
        assert_eq!(form_encode("a b:c%d+é"), "a+b%3Ac%25d%2B%C3%A9");
    }

    #[test]
    fn a_token_is_due_a_third_of_its_lifetime_early() {
        let now = SystemTime::now();
        let token = |lifetime: u64, left: u64| Token {
            access_token: Secret::new("t"),
            refresh_token: None,
            expires_at: Some(now + Duration::from_secs(left)),
            lifetime: Some(Duration::from_secs(lifetime)),
            scope: None,
        };
        assert!(!token(3600, 3000).due(now));
        assert!(token(3600, 29).due(now));
        assert!(!token(3, 2).due(now));
        assert!(token(3, 1).due(now));
        let forever = Token {
            expires_at: None,
            lifetime: None,
            ..token(1, 1)
        };
        assert!(!forever.due(now));
    }

    /// A P-256 key made for this test only.
    const TEST_KEY: &str = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgZ7+1JpcESZcbbs2U\nTN6LxKKnw7Ba7g579JbBQeInTb+hRANCAAR+K/6LPBPPuJA1I+K9/kW8RmLlHUFU\nqv/ufKXV1ijA6a/6/ik8TA5UemRdyiuXR77m5OrZW/CtTo+ai7NqlugX\n-----END PRIVATE KEY-----";
    const TEST_PUBLIC_KEY: &str = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEfiv+izwTz7iQNSPivf5FvEZi5R1B\nVKr/7nyl1dYowOmv+v4pPEwOVHpkXcorl0e+5uTq2VvwrU6PmouzapboFw==\n-----END PUBLIC KEY-----";

    #[test]
    fn assertions_are_signed_for_the_audience_and_never_show_the_key() {
        let key = AssertionKey::from_pem(TEST_KEY, "ES256").unwrap();
        assert_eq!(format!("{key:?}"), "AssertionKey { algorithm: ES256, .. }");
        let assertion = key.sign("gateway", "https://auth.example").unwrap();
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
        validation.set_audience(&["https://auth.example"]);
        validation.set_issuer(&["gateway"]);
        let public = jsonwebtoken::DecodingKey::from_ec_pem(TEST_PUBLIC_KEY.as_bytes()).unwrap();
        let claims =
            jsonwebtoken::decode::<serde_json::Value>(assertion.expose(), &public, &validation)
                .unwrap()
                .claims;
        assert_eq!(claims["sub"], "gateway");
        assert!(claims["jti"].as_str().is_some_and(|jti| !jti.is_empty()));
        let other = key.sign("gateway", "https://auth.example").unwrap();
        assert_ne!(assertion, other, "each assertion has its own jti");
        for (pem, algorithm, why) in [
            (TEST_KEY, "HS256", "not an asymmetric"),
            (TEST_KEY, "XX1", "not a JWT signing algorithm"),
            ("not a key", "ES256", "not a ES256 PEM key"),
        ] {
            let error = AssertionKey::from_pem(pem, algorithm)
                .unwrap_err()
                .to_string();
            assert!(error.contains(why), "{algorithm}: {error}");
        }
    }
}
