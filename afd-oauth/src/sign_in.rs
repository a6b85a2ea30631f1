//! Signing a person in: the authorization code grant with PKCE as the MCP authorization
//! specification describes it, on rmcp's OAuth client. [`SignIn`] discovers the
//! authorization server from the server's challenge (or its well-known metadata), picks the
//! client's registration (a pre-registered id, a client ID metadata document, or dynamic
//! registration, in that order), and gives the URL to open; [`PendingSignIn::finish`]
//! checks the redirect (`state`, and `iss` per RFC 9207) and exchanges the code. The
//! [`Session`] keeps its tokens in a [`CredentialStore`] (the file of [`crate::store`], or
//! memory) and refreshes them there; [`Session::client`] is the HTTP client for rmcp's
//! streamable HTTP transport that sends them.

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationRequest,
    CredentialStore, OAuthClientConfig, OAuthState,
};

use futures_util::future::BoxFuture;
use tokio::sync::Mutex;

use crate::error::{OAuthError, Secret};
use crate::source::TokenSource;
use crate::store::FileStore;

/// The client name a server shows when the client registers dynamically.
const CLIENT_NAME: &str = "afd";

/// What an authorization code sign-in asks for; [`SignIn::start`] begins it.
#[derive(Debug, Clone)]
pub struct SignIn {
    server_url: String,
    redirect_uri: String,
    client_name: String,
    client_metadata_url: Option<String>,
    client_id: Option<String>,
    client_secret: Option<Secret>,
    scopes: Vec<String>,
    challenge: Option<String>,
}

impl SignIn {
    /// A sign-in to the MCP server at `server_url`, the browser coming back to
    /// `redirect_uri` (a loopback address for a command line).
    pub fn new(server_url: impl Into<String>, redirect_uri: impl Into<String>) -> Self {
        Self {
            server_url: server_url.into(),
            redirect_uri: redirect_uri.into(),
            client_name: CLIENT_NAME.to_owned(),
            client_metadata_url: None,
            client_id: None,
            client_secret: None,
            scopes: Vec::new(),
            challenge: None,
        }
    }

    /// The name shown to the person when the client registers dynamically (default `afd`).
    #[must_use]
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// The HTTPS URL of the client's ID metadata document, used as its `client_id` when
    /// the authorization server supports them.
    #[must_use]
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// A client registered beforehand at the authorization server (no registration), with
    /// its secret if it is a confidential client.
    #[must_use]
    pub fn preregistered(mut self, client_id: impl Into<String>, secret: Option<Secret>) -> Self {
        self.client_id = Some(client_id.into());
        self.client_secret = secret;
        self
    }

    /// The scopes to ask for (default: the challenge's `scope`, else the resource's
    /// `scopes_supported`, else none).
    #[must_use]
    pub fn scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The server's `WWW-Authenticate` challenge from a refused request: discovery starts
    /// from its `resource_metadata`, and its `scope` is what is asked for.
    #[must_use]
    pub fn challenge(mut self, www_authenticate: impl Into<String>) -> Self {
        self.challenge = Some(www_authenticate.into());
        self
    }

    /// Discovers the authorization server, registers the client when needed, and gives
    /// the URL the person opens. Tokens will be kept in `store`.
    ///
    /// # Errors
    ///
    /// Discovery, registration or metadata checks fail (an issuer that is not its own, a
    /// resource that is not this server, no PKCE).
    pub async fn start<S: CredentialStore + 'static>(
        self,
        store: S,
    ) -> Result<PendingSignIn, OAuthError> {
        let mut manager = AuthorizationManager::new(self.server_url.as_str())
            .await
            .map_err(from_rmcp)?;
        manager.set_credential_store(store);
        let mut state = OAuthState::Unauthorized(manager);
        let mut request = AuthorizationRequest::new(&self.redirect_uri)
            .with_client_name(&self.client_name)
            .with_scopes(self.scopes);
        if let Some(url) = self.client_metadata_url {
            request = request.with_client_metadata_url(url);
        }
        if let Some(id) = self.client_id {
            request = request.with_preregistered_client(id);
            if let Some(secret) = self.client_secret {
                request = request.with_client_secret(secret.expose());
            }
        }
        if let Some(challenge) = self.challenge {
            request = request.with_challenge(challenge);
        }
        state
            .start_authorization(request)
            .await
            .map_err(from_rmcp)?;
        let url = state.get_authorization_url().await.map_err(from_rmcp)?;
        Ok(PendingSignIn { state, url })
    }
}

/// A sign-in waiting for the person: open [`url`](Self::url), then give the URL the
/// browser was sent back to.
pub struct PendingSignIn {
    state: OAuthState,
    url: String,
}

impl std::fmt::Debug for PendingSignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingSignIn")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl PendingSignIn {
    /// The authorization URL to open in a browser (PKCE challenge, `state`, `resource` and
    /// scopes in it; no secret).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Finishes the sign-in with the redirect the browser came back with: `state` and `iss`
    /// are checked, and the code is exchanged for tokens, which go to the store.
    ///
    /// # Errors
    ///
    /// The authorization server answered an error (the person declined, ...), the redirect
    /// is not this sign-in's, came from another issuer, or the exchange failed.
    pub async fn finish(mut self, redirect_url: &str) -> Result<Session, OAuthError> {
        // Only this sign-in's redirect is read, an error answer included.
        let sent = query_value(&self.url, "state");
        if sent.is_none() || query_value(redirect_url, "state") != sent {
            return Err(OAuthError::Authorization(
                "the redirect is not this sign-in's (its state differs)".to_owned(),
            ));
        }
        let callback = read_redirect(redirect_url)?;
        self.state
            .handle_callback_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await
            .map_err(from_rmcp)?;
        let manager = self
            .state
            .into_authorization_manager()
            .ok_or_else(|| OAuthError::Authorization("the sign-in did not complete".into()))?;
        let client_id = manager
            .get_credentials()
            .await
            .map(|(client_id, _)| client_id)
            .unwrap_or_default();
        Ok(Session {
            manager,
            granted: Vec::new(),
            client_id,
        })
    }
}

/// The value of `key` in `url`'s query.
fn query_value(url: &str, key: &str) -> Option<String> {
    let parsed = reqwest::Url::parse(url).ok()?;
    parsed
        .query_pairs()
        .find(|(name, _)| name == key)
        .map(|(_, value)| value.into_owned())
}

/// `text` without control characters (an authorization server's words reach a terminal).
fn printable(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

/// The code and `state` of a redirect, or the authorization server's error in it.
fn read_redirect(url: &str) -> Result<AuthorizationCallback, OAuthError> {
    let parsed = reqwest::Url::parse(url)
        .map_err(|e| OAuthError::Authorization(format!("the redirect is not a URL: {e}")))?;
    if let Some((_, error)) = parsed.query_pairs().find(|(key, _)| key == "error") {
        let description = parsed
            .query_pairs()
            .find(|(key, _)| key == "error_description")
            .map(|(_, text)| text.into_owned());
        return Err(OAuthError::Refused {
            error: printable(&error),
            description: description.as_deref().map(printable),
        });
    }
    AuthorizationCallback::from_redirect_url(url).map_err(from_rmcp)
}

/// A signed-in session with one server: its tokens, refreshed from the store.
pub struct Session {
    manager: AuthorizationManager,
    /// The scopes granted, as the store kept them (rmcp's manager knows them only for a
    /// sign-in it made).
    granted: Vec<String>,
    client_id: String,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").finish_non_exhaustive()
    }
}

impl Session {
    /// The session kept in `store` for the server at `server_url`, if there is one (an
    /// expired access token is refreshed on first use).
    ///
    /// # Errors
    ///
    /// The store cannot be read, or the server's metadata cannot be had.
    pub async fn resume<S: CredentialStore + 'static>(
        server_url: &str,
        store: S,
    ) -> Result<Option<Session>, OAuthError> {
        Self::resume_with_secret(server_url, store, None).await
    }

    /// [`resume`](Self::resume) for a confidential client registered beforehand: the store
    /// keeps its id but never its secret, which its refreshes need.
    ///
    /// # Errors
    ///
    /// As [`resume`](Self::resume).
    pub async fn resume_with_secret<S: CredentialStore + 'static>(
        server_url: &str,
        store: S,
        client_secret: Option<Secret>,
    ) -> Result<Option<Session>, OAuthError> {
        let (client_id, granted) = match store.load().await.map_err(from_rmcp)? {
            Some(kept) => (kept.client_id, kept.granted_scopes),
            None => return Ok(None),
        };
        let mut manager = AuthorizationManager::new(server_url)
            .await
            .map_err(from_rmcp)?;
        manager.set_credential_store(store);
        if !manager.initialize_from_store().await.map_err(from_rmcp)? {
            return Ok(None);
        }
        if let Some(secret) = client_secret {
            manager
                .configure_client(
                    OAuthClientConfig::new(client_id.clone(), server_url)
                        .with_client_secret(secret.expose()),
                )
                .map_err(from_rmcp)?;
        }
        Ok(Some(Session {
            manager,
            granted,
            client_id,
        }))
    }

    /// The client id the session was signed in with.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// The access token to send now, refreshed first when it is about to expire.
    ///
    /// # Errors
    ///
    /// No token, and none can be had without signing in again.
    pub async fn access_token(&self) -> Result<Secret, OAuthError> {
        self.manager
            .get_access_token()
            .await
            .map(Secret::new)
            .map_err(from_rmcp)
    }

    /// A new access token by the refresh token, whatever the current one's expiry.
    ///
    /// # Errors
    ///
    /// No refresh token, or the authorization server refused it (sign in again).
    pub async fn refresh(&self) -> Result<Secret, OAuthError> {
        self.manager.refresh_token().await.map_err(from_rmcp)?;
        self.access_token().await
    }

    /// The scopes the tokens were granted.
    pub async fn scopes(&self) -> Vec<String> {
        let current = self.manager.get_current_scopes().await;
        if current.is_empty() {
            self.granted.clone()
        } else {
            current
        }
    }

    /// `http` for rmcp's streamable HTTP transport, sending this session's tokens: an
    /// expired one is refreshed, and a request refused 401 is sent again once with a
    /// refreshed token.
    pub fn client<C>(self, http: C) -> AuthClient<C> {
        AuthClient::new(http, self.manager)
    }

    /// rmcp's manager under the session, for what this type does not offer.
    pub fn into_manager(self) -> AuthorizationManager {
        self.manager
    }
}

/// The tokens of a person's kept sign-in (`afd login`) as a [`TokenSource`]: read from
/// the store on first use, refreshed before they expire and when the server refuses one.
pub struct KeptSignIn {
    server_url: String,
    store: FileStore,
    client_secret: Option<Secret>,
    session: Mutex<Option<Session>>,
}

impl std::fmt::Debug for KeptSignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptSignIn")
            .field("server_url", &self.server_url)
            .field("store", &self.store.path())
            .finish_non_exhaustive()
    }
}

impl KeptSignIn {
    /// The sign-in kept in `store` for the server at `server_url`.
    pub fn new(server_url: impl Into<String>, store: FileStore) -> Self {
        Self {
            server_url: server_url.into(),
            store,
            client_secret: None,
            session: Mutex::new(None),
        }
    }

    /// The secret of the confidential client the sign-in was made with (the store never
    /// keeps it; refreshes need it).
    #[must_use]
    pub fn client_secret(mut self, secret: Secret) -> Self {
        self.client_secret = Some(secret);
        self
    }

    async fn with_session<T>(
        &self,
        use_it: impl AsyncFnOnce(&Session) -> Result<T, OAuthError>,
    ) -> Result<T, OAuthError> {
        let mut session = self.session.lock().await;
        if session.is_none() {
            *session = Session::resume_with_secret(
                &self.server_url,
                self.store.clone(),
                self.client_secret.clone(),
            )
            .await?;
        }
        match session.as_ref() {
            Some(kept) => {
                let outcome = use_it(kept).await;
                // A sign-in made again since (`afd login`) is read anew on the next use.
                if matches!(outcome, Err(OAuthError::SignInRequired(_))) {
                    *session = None;
                }
                outcome
            }
            None => Err(OAuthError::SignInRequired(format!(
                "no sign-in is kept for {} in {}: run `afd --url {} login` as the user the gateway runs as",
                self.server_url,
                self.store.path().display(),
                self.server_url
            ))),
        }
    }
}

impl TokenSource for KeptSignIn {
    fn token(&self) -> BoxFuture<'_, Result<Secret, OAuthError>> {
        Box::pin(self.with_session(async |session| session.access_token().await))
    }

    fn renew<'a>(&'a self, rejected: &'a Secret) -> BoxFuture<'a, Result<Secret, OAuthError>> {
        Box::pin(self.with_session(async move |session| {
            let current = session.access_token().await?;
            if current != *rejected {
                return Ok(current);
            }
            session.refresh().await
        }))
    }
}

/// rmcp's OAuth error as an [`OAuthError`].
pub(crate) fn from_rmcp(error: AuthError) -> OAuthError {
    match error {
        AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_) => {
            OAuthError::SignInRequired(error.to_string())
        }
        AuthError::AuthorizationServerMismatch { .. }
        | AuthError::AuthorizationServerMissingIssuer { .. } => {
            OAuthError::Authorization(format!("issuer check failed: {error}"))
        }
        AuthError::CredentialStoreError(why) => OAuthError::Store(why),
        AuthError::HttpError(error) => OAuthError::Unreachable {
            url: error
                .url()
                .map(ToString::to_string)
                .unwrap_or_else(|| "the authorization server".to_owned()),
            reason: error.to_string(),
        },
        other => OAuthError::Authorization(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirect_with_an_error_names_it() {
        let error = read_redirect(
            "http://127.0.0.1:1/callback?error=access_denied&error_description=no&state=s",
        )
        .unwrap_err();
        assert_eq!(error.code(), "OAUTH_TOKEN_REFUSED");
        assert!(error.to_string().contains("access_denied (no)"), "{error}");
        let ok = read_redirect("http://127.0.0.1:1/callback?code=c&state=s&iss=https%3A%2F%2Fa")
            .unwrap();
        assert_eq!(
            (
                ok.code.as_str(),
                ok.csrf_token.as_str(),
                ok.issuer.as_deref()
            ),
            ("c", "s", Some("https://a"))
        );
        assert!(read_redirect("http://127.0.0.1:1/callback?state=s").is_err());
        assert!(read_redirect("not a url").is_err());
    }
}
