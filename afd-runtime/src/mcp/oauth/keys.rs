//! The authorization server's signing keys, kept in memory: found through its metadata
//! (RFC 8414, else OpenID discovery) unless a JWKS URL is configured, fetched at start, and
//! fetched again when a token names a key id not yet known, at most once per cooldown and
//! once for all the requests that miss at the same time. A fetch that fails leaves the keys
//! already known in use.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, JwkSet, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey};
use serde::Deserialize;

/// One signing key: what it verifies with, and the algorithm the key set pins, if any.
#[derive(Clone)]
pub(super) struct Key {
    pub(super) decoding: Arc<DecodingKey>,
    pub(super) family: AlgorithmFamily,
    pub(super) algorithm: Option<Algorithm>,
}

/// The parts of authorization server metadata read here.
#[derive(Deserialize, Default, Clone)]
pub(super) struct IssuerMetadata {
    #[serde(default)]
    pub(super) issuer: Option<String>,
    #[serde(default)]
    pub(super) jwks_uri: Option<String>,
    #[serde(default)]
    pub(super) introspection_endpoint: Option<String>,
}

struct Fetching {
    /// When keys were last fetched, successfully or not.
    last: Option<Instant>,
    /// The issuer's metadata, once read.
    metadata: Option<IssuerMetadata>,
}

/// The key cache.
pub(super) struct Keys {
    /// The keys were given, not fetched: never fetch.
    fixed: bool,
    issuer: String,
    jwks_uri: Option<String>,
    http: reqwest::Client,
    cooldown: Duration,
    known: RwLock<Arc<HashMap<String, Key>>>,
    /// Held while fetching: requests that miss meanwhile wait for that fetch.
    fetching: tokio::sync::Mutex<Fetching>,
}

impl Keys {
    pub(super) fn new(
        issuer: String,
        jwks_uri: Option<String>,
        fixed: Option<&JwkSet>,
        http: reqwest::Client,
        cooldown: Duration,
    ) -> Keys {
        Keys {
            fixed: fixed.is_some(),
            issuer,
            jwks_uri,
            http,
            cooldown,
            known: RwLock::new(Arc::new(fixed.map(keys_of).unwrap_or_default())),
            fetching: tokio::sync::Mutex::new(Fetching {
                last: None,
                metadata: None,
            }),
        }
    }

    fn cached(&self, kid: Option<&str>, family: AlgorithmFamily) -> Option<Key> {
        let known = self
            .known
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        match kid {
            Some(kid) => known.get(kid).cloned(),
            // A token without a key id: the only key of its family, if there is one.
            None => {
                let mut of_family = known.values().filter(|key| key.family == family);
                let key = of_family.next()?;
                of_family.next().is_none().then(|| key.clone())
            }
        }
    }

    /// The key a token names (by `kid`, or the only one of its algorithm's family when it
    /// names none), fetching the key set again if it is unknown and the cooldown allows.
    pub(super) async fn key(&self, kid: Option<&str>, family: AlgorithmFamily) -> Option<Key> {
        if let Some(key) = self.cached(kid, family) {
            return Some(key);
        }
        if self.fixed {
            return None;
        }
        let mut fetching = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        if let Some(key) = self.cached(kid, family) {
            return Some(key);
        }
        if fetching
            .last
            .is_some_and(|last| last.elapsed() < self.cooldown)
        {
            return None;
        }
        self.refresh(&mut fetching).await;
        self.cached(kid, family)
    }

    /// Fetches the key set now (at start), whatever the cooldown.
    pub(super) async fn prefetch(&self) {
        if self.fixed {
            return;
        }
        let mut fetching = self.fetching.lock().await;
        self.refresh(&mut fetching).await;
    }

    /// The issuer's metadata (read once; `None` while it cannot be read).
    pub(super) async fn metadata(&self) -> Option<IssuerMetadata> {
        let mut fetching = self.fetching.lock().await;
        self.issuer_metadata(&mut fetching).await
    }

    async fn issuer_metadata(&self, fetching: &mut Fetching) -> Option<IssuerMetadata> {
        if let Some(metadata) = &fetching.metadata {
            return Some(metadata.clone());
        }
        match discover(&self.http, &self.issuer).await {
            Ok(metadata) => {
                fetching.metadata = Some(metadata.clone());
                Some(metadata)
            }
            Err(error) => {
                tracing::warn!(issuer = %self.issuer, %error, "could not read the authorization server's metadata");
                None
            }
        }
    }

    async fn refresh(&self, fetching: &mut Fetching) {
        fetching.last = Some(Instant::now());
        let uri = match &self.jwks_uri {
            Some(uri) => uri.clone(),
            None => match self.issuer_metadata(fetching).await {
                Some(IssuerMetadata {
                    jwks_uri: Some(uri),
                    ..
                }) => uri,
                Some(_) => {
                    tracing::warn!(issuer = %self.issuer, "the authorization server's metadata names no jwks_uri");
                    return;
                }
                None => return,
            },
        };
        match fetch_keys(&self.http, &uri).await {
            Ok(keys) => {
                tracing::debug!(jwks_uri = %uri, keys = keys.len(), "fetched the authorization server's signing keys");
                *self
                    .known
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(keys);
            }
            Err(error) => {
                tracing::warn!(jwks_uri = %uri, %error, "could not fetch the authorization server's signing keys; the keys already known stay in use");
            }
        }
    }
}

/// The issuer's metadata: RFC 8414 first (`/.well-known/oauth-authorization-server`,
/// inserted before the issuer's path), then OpenID Connect discovery. The document's
/// `issuer` must be the issuer asked about (RFC 8414, section 3.3).
async fn discover(http: &reqwest::Client, issuer: &str) -> Result<IssuerMetadata, String> {
    let url = reqwest::Url::parse(issuer).map_err(|error| format!("issuer URL: {error}"))?;
    let path = url.path().trim_end_matches('/');
    let origin = url.origin().ascii_serialization();
    let candidates = [
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}{path}/.well-known/openid-configuration"),
    ];
    let mut last_error = String::new();
    for candidate in candidates {
        match get_json::<IssuerMetadata>(http, &candidate).await {
            Ok(metadata) => {
                let named = metadata.issuer.as_deref().map(|i| i.trim_end_matches('/'));
                if named != Some(issuer.trim_end_matches('/')) {
                    return Err(format!(
                        "{candidate} names the issuer {:?}, not {issuer}",
                        metadata.issuer
                    ));
                }
                return Ok(metadata);
            }
            Err(error) => last_error = error,
        }
    }
    Err(last_error)
}

async fn get_json<T: serde::de::DeserializeOwned>(
    http: &reqwest::Client,
    url: &str,
) -> Result<T, String> {
    let response = http
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|error| format!("{url}: {error}"))?;
    if !response.status().is_success() {
        return Err(format!("{url}: HTTP {}", response.status()));
    }
    let body = response
        .bytes()
        .await
        .map_err(|error| format!("{url}: {error}"))?;
    serde_json::from_slice(&body).map_err(|error| format!("{url}: {error}"))
}

/// The signing keys of a key set, by key id. Keys marked for encryption, keys without an
/// id, and keys of a kind not supported are left out.
async fn fetch_keys(http: &reqwest::Client, uri: &str) -> Result<HashMap<String, Key>, String> {
    let set: JwkSet = get_json(http, uri).await?;
    Ok(keys_of(&set))
}

pub(super) fn keys_of(set: &JwkSet) -> HashMap<String, Key> {
    set.keys
        .iter()
        .filter(|jwk| {
            !matches!(
                jwk.common.public_key_use,
                Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
            )
        })
        .filter_map(|jwk| Some((jwk.common.key_id.clone()?, key_of(jwk)?)))
        .collect()
}

fn key_of(jwk: &Jwk) -> Option<Key> {
    use jsonwebtoken::jwk::AlgorithmParameters;
    let family = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => AlgorithmFamily::Rsa,
        AlgorithmParameters::EllipticCurve(_) => AlgorithmFamily::Ec,
        AlgorithmParameters::OctetKeyPair(_) => AlgorithmFamily::Ed,
        // A symmetric key in a published key set is never used to verify.
        _ => return None,
    };
    let algorithm = match jwk.common.key_algorithm {
        None => None,
        Some(alg) => Some(signing_algorithm(alg)?),
    };
    let decoding = DecodingKey::from_jwk(jwk).ok()?;
    Some(Key {
        decoding: Arc::new(decoding),
        family,
        algorithm,
    })
}

/// The signature algorithm a key's `alg` pins; `None` for an encryption algorithm.
fn signing_algorithm(alg: KeyAlgorithm) -> Option<Algorithm> {
    Some(match alg {
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        _ => return None,
    })
}
