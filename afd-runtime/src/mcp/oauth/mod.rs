//! The HTTP endpoint as an OAuth 2.1 resource server, as the MCP authorization
//! specification asks (feature `oauth`): [`OAuth`] says which authorization server issues
//! the tokens and which resource they must be for; `verify` checks the bearer token of
//! every request (a JWT against the issuer's published keys, kept in `keys`, or an opaque
//! token by RFC 7662 introspection, in `introspect`) and turns it into a
//! [`Principal`](crate::auth::Principal); `metadata` writes the RFC 9728 protected resource
//! metadata and the `WWW-Authenticate` challenges of refused requests.

mod claims;
mod introspect;
mod keys;
pub(super) mod metadata;
mod remember;
mod verify;

use std::time::Duration;

pub use claims::TokenRejection;
pub use verify::TokenVerifier;

/// The environment variable naming the authorization server (its issuer URL) that
/// `serve --http` trusts: `--auth-issuer`.
pub const ISSUER_ENV: &str = "AFD_AUTH_ISSUER";
/// The environment variable naming the server's canonical resource URL, the audience its
/// tokens must carry: `--auth-audience`.
pub const AUDIENCE_ENV: &str = "AFD_AUTH_AUDIENCE";

/// The signature algorithms accepted by default: the asymmetric ones. HMAC algorithms are
/// never accepted (a resource server holds no shared secret, and a public key used as an
/// HMAC secret is the classic forgery), nor is `none`.
const DEFAULT_ALGORITHMS: [jsonwebtoken::Algorithm; 9] = [
    jsonwebtoken::Algorithm::RS256,
    jsonwebtoken::Algorithm::RS384,
    jsonwebtoken::Algorithm::RS512,
    jsonwebtoken::Algorithm::PS256,
    jsonwebtoken::Algorithm::PS384,
    jsonwebtoken::Algorithm::PS512,
    jsonwebtoken::Algorithm::ES256,
    jsonwebtoken::Algorithm::ES384,
    jsonwebtoken::Algorithm::EdDSA,
];

/// Where opaque tokens are checked (RFC 7662), and the resource server's credentials there.
#[derive(Clone)]
pub(super) struct IntrospectionSettings {
    pub(super) endpoint: Option<String>,
    pub(super) client_id: String,
    pub(super) client_secret: String,
}

/// An OAuth 2.1 resource server's settings: the HTTP endpoint accepts a request only with
/// a bearer token the authorization server `issuer` issued for the resource `audience`
/// (the endpoint's canonical URL), and shows each caller only the commands its scopes
/// cover (see [`auth`](crate::auth)).
///
/// ```
/// use std::time::Duration;
/// use afd_runtime::mcp::{HttpOptions, OAuth};
///
/// let options = HttpOptions::new("0.0.0.0:8080".parse().unwrap())
///     .allowed_hosts(["mcp.example.com"])
///     .oauth(
///         OAuth::new("https://auth.example.com", "https://mcp.example.com/mcp")
///             .leeway(Duration::from_secs(30)),
///     );
/// ```
#[derive(Clone)]
pub struct OAuth {
    pub(super) issuer: String,
    pub(super) audience: String,
    pub(super) jwks_uri: Option<String>,
    pub(super) introspection: Option<IntrospectionSettings>,
    pub(super) algorithms: Vec<jsonwebtoken::Algorithm>,
    pub(super) leeway: Duration,
    pub(super) refetch_cooldown: Duration,
    pub(super) fetch_timeout: Duration,
    pub(super) scopes_supported: Option<Vec<String>>,
    pub(super) check_audience: bool,
    /// Keys given in the configuration: used alone, never fetched.
    pub(super) fixed_keys: Option<jsonwebtoken::jwk::JwkSet>,
}

impl OAuth {
    /// Tokens from the authorization server `issuer` (its issuer identifier, an `https://`
    /// URL; its metadata says where its keys are) for the resource `audience`: the
    /// endpoint's canonical URL as clients reach it (`https://mcp.example.com/mcp`), which
    /// the token's `aud` must hold.
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        OAuth {
            issuer: issuer.into(),
            audience: audience.into(),
            jwks_uri: None,
            introspection: None,
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            leeway: Duration::from_secs(60),
            refetch_cooldown: Duration::from_secs(30),
            fetch_timeout: Duration::from_secs(5),
            scopes_supported: None,
            check_audience: true,
            fixed_keys: None,
        }
    }

    /// The settings of [`ISSUER_ENV`] and [`AUDIENCE_ENV`], when both are set.
    pub fn from_env() -> Option<Self> {
        let read = |name: &str| {
            std::env::var(name)
                .ok()
                .filter(|value| !value.trim().is_empty())
        };
        Some(OAuth::new(read(ISSUER_ENV)?, read(AUDIENCE_ENV)?))
    }

    /// The issuer identifier.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The canonical resource URL tokens must be issued for.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// Verifies with the keys of this JSON Web Key Set (RFC 7517) alone, never fetching
    /// any: for a server that cannot reach its issuer, or an issuer whose keys are
    /// distributed by hand.
    ///
    /// # Errors
    ///
    /// `jwks` is not a JSON Web Key Set.
    pub fn jwks_json(mut self, jwks: &str) -> Result<Self, serde_json::Error> {
        self.fixed_keys = Some(serde_json::from_str(jwks)?);
        Ok(self)
    }

    /// Fetches the signing keys from this URL rather than from the one the issuer's
    /// metadata names.
    #[must_use]
    pub fn jwks_uri(mut self, uri: impl Into<String>) -> Self {
        self.jwks_uri = Some(uri.into());
        self
    }

    /// Accepts opaque (non-JWT) tokens, checked by the issuer's RFC 7662 introspection
    /// endpoint (the one its metadata names) with these client credentials. An active
    /// answer is remembered until the token expires, at most a minute.
    #[must_use]
    pub fn introspection(
        mut self,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        self.introspection = Some(IntrospectionSettings {
            endpoint: self.introspection.and_then(|settings| settings.endpoint),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
        });
        self
    }

    /// The introspection endpoint, where the issuer's metadata does not name it.
    #[must_use]
    pub fn introspection_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        let mut settings = self.introspection.unwrap_or(IntrospectionSettings {
            endpoint: None,
            client_id: String::new(),
            client_secret: String::new(),
        });
        settings.endpoint = Some(endpoint.into());
        self.introspection = Some(settings);
        self
    }

    /// The signature algorithms accepted (default: RS256/384/512, PS256/384/512, ES256/384,
    /// EdDSA). HMAC algorithms are refused whatever this says.
    #[must_use]
    pub fn algorithms(
        mut self,
        algorithms: impl IntoIterator<Item = jsonwebtoken::Algorithm>,
    ) -> Self {
        self.algorithms = algorithms
            .into_iter()
            .filter(|alg| alg.family() != jsonwebtoken::AlgorithmFamily::Hmac)
            .collect();
        self
    }

    /// How far `exp` and `nbf` may be off for clocks that disagree (default 60 s).
    #[must_use]
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// How long after fetching the issuer's keys an unknown key id may make it fetch them
    /// again (default 30 s): a flood of made-up key ids costs one fetch per period.
    #[must_use]
    pub fn refetch_cooldown(mut self, cooldown: Duration) -> Self {
        self.refetch_cooldown = cooldown;
        self
    }

    /// How long a request to the authorization server (metadata, keys, introspection) may
    /// take (default 5 s).
    #[must_use]
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.fetch_timeout = timeout;
        self
    }

    /// The scopes the protected resource metadata lists and a refused request is told to
    /// ask for (default: every scope the exposed commands need).
    #[must_use]
    pub fn scopes_supported<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes_supported = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Accepts tokens issued for any resource. Dangerous: a token the issuer gave to
    /// another service is then good here too. Only for an authorization server that
    /// cannot put resource indicators in tokens; the server logs a warning at start.
    #[must_use]
    pub fn dangerously_accept_any_audience(mut self) -> Self {
        self.check_audience = false;
        self
    }
}

impl std::fmt::Debug for OAuth {
    /// Everything but the introspection secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("jwks_uri", &self.jwks_uri)
            .field(
                "introspection_client",
                &self.introspection.as_ref().map(|s| &s.client_id),
            )
            .field("algorithms", &self.algorithms)
            .field("leeway", &self.leeway)
            .field("check_audience", &self.check_audience)
            .finish_non_exhaustive()
    }
}
