//! What can go wrong while getting a token, each with a stable code.

use std::fmt;

/// A secret (an access or refresh token, a client secret): its value is never printed by
/// `Debug` or `Display`, so it cannot reach a log line or an error message by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value, for the one place that sends it (a header or a form field).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Why no token could be had. Messages name URLs and the authorization server's error
/// codes, never a secret.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// The authorization server or the resource's metadata could not be reached.
    #[error("cannot reach {url}: {reason}")]
    Unreachable {
        /// The URL asked.
        url: String,
        /// What failed (connection, TLS, timeout).
        reason: String,
    },
    /// No usable metadata was found where the specifications say to look.
    #[error("discovery failed: {0}")]
    Discovery(String),
    /// The metadata document names another issuer than the one asked for (RFC 8414
    /// section 3.3), or an authorization response came from another issuer (RFC 9207).
    #[error("issuer mismatch: expected '{expected}', got '{found}'")]
    IssuerMismatch {
        /// The issuer asked for.
        expected: String,
        /// The issuer found.
        found: String,
    },
    /// The token endpoint refused the request (an RFC 6749 section 5.2 error response).
    #[error("the authorization server refused the token request: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Refused {
        /// The `error` code (`invalid_client`, `invalid_grant`, `invalid_scope`, ...).
        error: String,
        /// Its `error_description`, when given.
        description: Option<String>,
    },
    /// An answer that is not what the specification says it must be.
    #[error("invalid answer from {url}: {reason}")]
    InvalidResponse {
        /// The URL that answered.
        url: String,
        /// What was wrong with the answer.
        reason: String,
    },
    /// A configuration that cannot work (a missing client id, an unusable URL).
    #[error("invalid OAuth configuration: {0}")]
    Config(String),
    /// The resource server rejected a freshly issued token.
    #[error("the server rejected a freshly issued token: {0}")]
    Rejected(String),
    /// There is no sign-in for this server, or its refresh token was refused: the person
    /// must sign in (again).
    #[error("sign-in required: {0}")]
    SignInRequired(String),
    /// The authorization code flow failed (registration, the redirect's `state` or `iss`,
    /// the code exchange, the metadata's checks).
    #[error("authorization failed: {0}")]
    Authorization(String),
    /// The tokens could not be read from or written to their store.
    #[error("credential store: {0}")]
    Store(String),
}

impl OAuthError {
    /// A stable code for the error, for callers that report it as a structured error.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unreachable { .. } => "OAUTH_UNREACHABLE",
            Self::Discovery(_) => "OAUTH_DISCOVERY_FAILED",
            Self::IssuerMismatch { .. } => "OAUTH_ISSUER_MISMATCH",
            Self::Refused { .. } => "OAUTH_TOKEN_REFUSED",
            Self::InvalidResponse { .. } => "OAUTH_INVALID_RESPONSE",
            Self::Config(_) => "OAUTH_CONFIG",
            Self::Rejected(_) => "OAUTH_TOKEN_REJECTED",
            Self::SignInRequired(_) => "OAUTH_SIGN_IN_REQUIRED",
            Self::Authorization(_) => "OAUTH_AUTHORIZATION_FAILED",
            Self::Store(_) => "OAUTH_STORE",
        }
    }

    /// What to do about it, in one sentence.
    pub fn suggestion(&self) -> &'static str {
        match self {
            Self::Unreachable { .. } => {
                "Check that the authorization server is up and reachable from here."
            }
            Self::Discovery(_) | Self::InvalidResponse { .. } => {
                "Check the server's OAuth metadata, or configure the issuer or token endpoint explicitly."
            }
            Self::IssuerMismatch { .. } => {
                "Do not use this authorization server: its metadata or answer is not its own."
            }
            Self::Refused { .. } => {
                "Check the client id, secret and scopes registered at the authorization server."
            }
            Self::Config(_) => "Fix the OAuth settings.",
            Self::Rejected(_) => {
                "Check that the authorization server issues tokens for this resource (audience, scopes)."
            }
            Self::SignInRequired(_) => "Sign in to the server (`afd --url URL login`).",
            Self::Authorization(_) => {
                "Sign in again; if it fails the same way, the server's or the authorization server's OAuth metadata is wrong."
            }
            Self::Store(_) => {
                "Check that the credentials directory exists and belongs to you (mode 0700)."
            }
        }
    }
}

/// The [`OAuthError`] somewhere in an error's chain of causes (an rmcp transport error
/// carries it inside an `std::io::Error`), if there is one.
pub fn find_oauth_error<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a OAuthError> {
    let mut current = Some(error);
    while let Some(error) = current {
        if let Some(found) = error.downcast_ref::<OAuthError>() {
            return Some(found);
        }
        if let Some(io) = error.downcast_ref::<std::io::Error>()
            && let Some(found) = io
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<OAuthError>())
        {
            return Some(found);
        }
        current = error.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let secret = Secret::new("hunter2");
        assert_eq!(format!("{secret:?} {secret}"), "Secret(..) [redacted]");
        assert_eq!(secret.expose(), "hunter2");
    }

    #[test]
    fn an_oauth_error_is_found_inside_an_io_error() {
        let io = std::io::Error::other(OAuthError::Config("no client id".into()));
        let found = find_oauth_error(&io).unwrap();
        assert_eq!(found.code(), "OAUTH_CONFIG");
        assert!(find_oauth_error(&std::io::Error::other("plain")).is_none());
    }
}
