//! Where a request's token comes from: the [`TokenSource`] trait, and the client
//! credentials grant (machine to machine) as one, renewing its token before it expires.

use std::time::SystemTime;

use futures_util::future::BoxFuture;
use tokio::sync::Mutex;

use crate::discovery::{discover, server_metadata};
use crate::error::{OAuthError, Secret};
use crate::token::{AssertionKey, ClientAuth, ClientIdentity, Token, request_token};

/// Gives the access token for a server's requests.
///
/// Implementations renew their token themselves before it expires, and share one renewal
/// among concurrent callers.
pub trait TokenSource: Send + Sync + 'static {
    /// The token to send now.
    fn token(&self) -> BoxFuture<'_, Result<Secret, OAuthError>>;

    /// A new token after the server refused `rejected` (a 401). When another caller has
    /// already replaced `rejected`, that newer token is the answer.
    fn renew<'a>(&'a self, rejected: &'a Secret) -> BoxFuture<'a, Result<Secret, OAuthError>>;
}

/// A fixed token (`--token`, `AFD_TOKEN`, a static configuration): never renewed.
#[derive(Debug, Clone)]
pub struct StaticToken(pub Secret);

impl TokenSource for StaticToken {
    fn token(&self) -> BoxFuture<'_, Result<Secret, OAuthError>> {
        Box::pin(async move { Ok(self.0.clone()) })
    }

    fn renew<'a>(&'a self, _rejected: &'a Secret) -> BoxFuture<'a, Result<Secret, OAuthError>> {
        Box::pin(async move {
            Err(OAuthError::Rejected(
                "the server refused the configured token, which cannot be renewed".to_owned(),
            ))
        })
    }
}

/// The settings of the client credentials grant (RFC 6749 section 4.4).
#[derive(Debug, Clone)]
pub struct ClientCredentialsConfig {
    /// The client's id.
    pub client_id: String,
    /// The client's secret (`client_secret_basic` or `client_secret_post`).
    pub client_secret: Option<Secret>,
    /// The client's private key, which signs a JWT assertion instead of sending a secret
    /// (`private_key_jwt`, RFC 7523); its assertions are for the issuer.
    pub assertion_key: Option<AssertionKey>,
    /// How to authenticate at the token endpoint (default: `private_key_jwt` with a key;
    /// with a secret, from the server's metadata: `client_secret_basic` when it takes it,
    /// else `client_secret_post`).
    pub auth: Option<ClientAuth>,
    /// The scopes to ask for (empty: the resource's `scopes_supported`, or none).
    pub scopes: Vec<String>,
    /// The issuer (default: discovered from the server's protected resource metadata).
    pub issuer: Option<String>,
    /// The token endpoint, to skip discovery.
    pub token_endpoint: Option<String>,
    /// The resource indicator (default: the metadata's `resource`, or the server URL).
    pub resource: Option<String>,
}

#[derive(Debug, Clone)]
struct Resolved {
    token_endpoint: String,
    identity: ClientIdentity,
    resource: String,
    scopes: Vec<String>,
}

#[derive(Default)]
struct State {
    resolved: Option<Resolved>,
    token: Option<Token>,
}

/// Tokens by the client credentials grant for one server, discovered from the server's
/// URL unless the configuration names the issuer or the token endpoint.
pub struct ClientCredentials {
    http: reqwest::Client,
    server_url: String,
    config: ClientCredentialsConfig,
    state: Mutex<State>,
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("server_url", &self.server_url)
            .field("client_id", &self.config.client_id)
            .finish_non_exhaustive()
    }
}

impl ClientCredentials {
    /// Tokens for the server at `server_url` (its MCP endpoint).
    pub fn new(
        http: reqwest::Client,
        server_url: impl Into<String>,
        config: ClientCredentialsConfig,
    ) -> Self {
        Self {
            http,
            server_url: server_url.into(),
            config,
            state: Mutex::new(State::default()),
        }
    }

    async fn resolve(&self) -> Result<Resolved, OAuthError> {
        let config = &self.config;
        let (token_endpoint, issuer, methods, resource, scopes) =
            match (&config.token_endpoint, &config.issuer) {
                (Some(endpoint), _) => (endpoint.clone(), None, None, None, None),
                (None, Some(issuer)) => {
                    let server = server_metadata(&self.http, issuer).await?;
                    (
                        server.token_endpoint,
                        Some(server.issuer),
                        server.token_endpoint_auth_methods_supported,
                        None,
                        None,
                    )
                }
                (None, None) => {
                    let found = discover(&self.http, &self.server_url, None).await?;
                    (
                        found.server.token_endpoint,
                        Some(found.server.issuer),
                        found.server.token_endpoint_auth_methods_supported,
                        Some(found.resource.resource),
                        found.resource.scopes_supported,
                    )
                }
            };
        let auth = match (config.auth, &config.assertion_key) {
            (Some(auth), _) => auth,
            (None, Some(_)) => ClientAuth::PrivateKeyJwt,
            (None, None) => ClientAuth::choose(methods.as_deref(), true),
        };
        let assertion = match (auth, &config.assertion_key) {
            (ClientAuth::PrivateKeyJwt, Some(key)) => {
                // RFC 7523: the audience identifies the authorization server; its issuer
                // when known, else the token endpoint.
                let audience = issuer.unwrap_or_else(|| token_endpoint.clone());
                Some((key.clone(), audience))
            }
            (ClientAuth::PrivateKeyJwt, None) => {
                return Err(OAuthError::Config(
                    "private_key_jwt needs the client's private key".to_owned(),
                ));
            }
            (ClientAuth::None, _) => {
                return Err(OAuthError::Config(
                    "the client credentials grant needs a confidential client (a secret or a private key)"
                        .to_owned(),
                ));
            }
            (ClientAuth::Basic | ClientAuth::Post, _) if config.client_secret.is_none() => {
                return Err(OAuthError::Config(format!(
                    "{} needs the client's secret",
                    auth.as_str()
                )));
            }
            _ => None,
        };
        Ok(Resolved {
            token_endpoint,
            identity: ClientIdentity {
                client_id: config.client_id.clone(),
                client_secret: config.client_secret.clone(),
                assertion,
                auth,
            },
            resource: config
                .resource
                .clone()
                .or(resource)
                .unwrap_or_else(|| self.server_url.clone()),
            scopes: if config.scopes.is_empty() {
                scopes.unwrap_or_default()
            } else {
                config.scopes.clone()
            },
        })
    }

    /// A new token, under the state's lock.
    async fn fetch(&self, state: &mut State) -> Result<Secret, OAuthError> {
        let resolved = match &state.resolved {
            Some(resolved) => resolved.clone(),
            None => {
                let resolved = self.resolve().await?;
                state.resolved = Some(resolved.clone());
                resolved
            }
        };
        let scope = resolved.scopes.join(" ");
        let mut params = vec![
            ("grant_type", "client_credentials"),
            ("resource", resolved.resource.as_str()),
        ];
        if !scope.is_empty() {
            params.push(("scope", &scope));
        }
        let token = request_token(
            &self.http,
            &resolved.token_endpoint,
            &resolved.identity,
            &params,
        )
        .await?;
        let access = token.access_token.clone();
        state.token = Some(token);
        Ok(access)
    }
}

impl TokenSource for ClientCredentials {
    fn token(&self) -> BoxFuture<'_, Result<Secret, OAuthError>> {
        Box::pin(async move {
            let mut state = self.state.lock().await;
            if let Some(token) = &state.token
                && !token.due(SystemTime::now())
            {
                return Ok(token.access_token.clone());
            }
            self.fetch(&mut state).await
        })
    }

    fn renew<'a>(&'a self, rejected: &'a Secret) -> BoxFuture<'a, Result<Secret, OAuthError>> {
        Box::pin(async move {
            let mut state = self.state.lock().await;
            if let Some(token) = &state.token
                && token.access_token != *rejected
                && !token.due(SystemTime::now())
            {
                return Ok(token.access_token.clone());
            }
            // The rejection may come from changed metadata: discover again.
            state.resolved = None;
            self.fetch(&mut state).await
        })
    }
}
