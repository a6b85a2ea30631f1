//! The HTTP requests to authorization servers: a client that follows no redirects, JSON
//! documents read with a size limit.

use std::time::Duration;

use serde_json::Value;

use crate::error::OAuthError;

/// The largest metadata or token answer read (bytes).
const MAX_BODY: usize = 1 << 20;

/// An HTTP client for authorization servers: no redirects (a token request carries a
/// secret, and metadata must come from where it was asked), a 30-second timeout.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap_or_default()
}

pub(crate) fn unreachable(url: &str, error: &reqwest::Error) -> OAuthError {
    // reqwest's message names the URL; the cause says what failed.
    let mut reason = String::new();
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(error);
    while let Some(cause) = source {
        reason = cause.to_string();
        source = cause.source();
    }
    if reason.is_empty() {
        reason = if error.is_timeout() {
            "timed out".to_owned()
        } else {
            "request failed".to_owned()
        };
    }
    OAuthError::Unreachable {
        url: url.to_owned(),
        reason,
    }
}

/// The body of `response`, at most [`MAX_BODY`] bytes.
pub(crate) async fn body(
    url: &str,
    mut response: reqwest::Response,
) -> Result<Vec<u8>, OAuthError> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| unreachable(url, &e))? {
        if bytes.len() + chunk.len() > MAX_BODY {
            return Err(OAuthError::InvalidResponse {
                url: url.to_owned(),
                reason: format!("the answer is larger than {MAX_BODY} bytes"),
            });
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// A JSON object from `url`: `None` when it answers 404 (or another 4xx), an error when it
/// cannot be reached or answers something else than a JSON object.
pub(crate) async fn get_json(
    http: &reqwest::Client,
    url: &str,
) -> Result<Option<Value>, OAuthError> {
    let response = http
        .get(url)
        .header(http::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| unreachable(url, &e))?;
    let status = response.status();
    if status.is_client_error() {
        return Ok(None);
    }
    if !status.is_success() {
        return Err(OAuthError::InvalidResponse {
            url: url.to_owned(),
            reason: format!("HTTP {status}"),
        });
    }
    let bytes = body(url, response).await?;
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(value @ Value::Object(_)) => Ok(Some(value)),
        Ok(_) => Err(OAuthError::InvalidResponse {
            url: url.to_owned(),
            reason: "not a JSON object".to_owned(),
        }),
        Err(error) => Err(OAuthError::InvalidResponse {
            url: url.to_owned(),
            reason: format!("not JSON: {error}"),
        }),
    }
}
