//! Opaque tokens, checked by the authorization server's RFC 7662 introspection endpoint
//! with the resource server's client credentials (the verifier remembers an active answer
//! as it remembers a verified JWT); an endpoint that does not answer refuses the request.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::claims::{TokenRejection, principal_of};
use super::{IntrospectionSettings, OAuth};
use crate::auth::Principal;

pub(super) struct Introspector {
    pub(super) settings: IntrospectionSettings,
    http: reqwest::Client,
}

impl Introspector {
    pub(super) fn new(settings: IntrospectionSettings, http: reqwest::Client) -> Self {
        Introspector { settings, http }
    }

    pub(super) async fn check(
        &self,
        endpoint: &str,
        token: &str,
        oauth: &OAuth,
    ) -> Result<Principal, TokenRejection> {
        let response = self
            .http
            .post(endpoint)
            .basic_auth(&self.settings.client_id, Some(&self.settings.client_secret))
            .form(&[("token", token), ("token_type_hint", "access_token")])
            .send()
            .await
            .map_err(|error| {
                tracing::warn!(%endpoint, %error, "OAuth: the introspection endpoint did not answer");
                TokenRejection::Unavailable
            })?;
        if !response.status().is_success() {
            tracing::warn!(%endpoint, status = %response.status(), "OAuth: the introspection endpoint refused the request");
            return Err(TokenRejection::Unavailable);
        }
        let body = response.bytes().await.map_err(|error| {
            tracing::warn!(%endpoint, %error, "OAuth: the introspection answer did not arrive");
            TokenRejection::Unavailable
        })?;
        let answer: Map<String, Value> = serde_json::from_slice(&body).map_err(|error| {
            tracing::warn!(%endpoint, %error, "OAuth: the introspection answer cannot be read");
            TokenRejection::Unavailable
        })?;
        judge(answer, oauth)
    }
}

/// The principal of an introspection answer, after the checks a JWT gets: active, not
/// expired, not before its time, from the issuer, for this resource.
fn judge(answer: Map<String, Value>, oauth: &OAuth) -> Result<Principal, TokenRejection> {
    if answer.get("active") != Some(&Value::Bool(true)) {
        return Err(TokenRejection::Invalid("the token is not active"));
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let leeway = oauth.leeway.as_secs();
    if answer
        .get("exp")
        .and_then(Value::as_u64)
        .is_some_and(|exp| exp + leeway <= now)
    {
        return Err(TokenRejection::Invalid("the token has expired"));
    }
    if answer
        .get("nbf")
        .and_then(Value::as_u64)
        .is_some_and(|nbf| nbf > now + leeway)
    {
        return Err(TokenRejection::Invalid("the token is not valid yet"));
    }
    if let Some(iss) = answer.get("iss").and_then(Value::as_str)
        && iss != oauth.issuer
    {
        return Err(TokenRejection::Invalid(
            "the token was not issued by the trusted authorization server",
        ));
    }
    if oauth.check_audience {
        let for_us = match answer.get("aud") {
            Some(Value::String(aud)) => *aud == oauth.audience,
            Some(Value::Array(auds)) => auds.iter().any(|aud| *aud == *oauth.audience),
            _ => false,
        };
        if !for_us {
            return Err(TokenRejection::Invalid(
                "the token was not issued for this resource",
            ));
        }
    }
    principal_of(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn only_an_active_answer_for_this_resource_passes() {
        let oauth = OAuth::new("https://as.example", "https://rs.example/mcp");
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let good = serde_json::json!({
            "active": true, "sub": "s", "scope": "a b", "iss": "https://as.example",
            "aud": "https://rs.example/mcp", "exp": now + 30
        });
        let principal = judge(answer(good.clone()), &oauth).unwrap();
        assert_eq!(principal.scopes().to_string(), "a b");
        assert_eq!(principal.claim("exp").unwrap(), now + 30);
        for (field, value) in [
            ("active", Value::Bool(false)),
            ("aud", Value::from("https://other.example")),
            ("iss", Value::from("https://evil.example")),
            ("exp", Value::from(now - 3600)),
            ("nbf", Value::from(now + 3600)),
        ] {
            let mut bad = answer(good.clone());
            bad.insert(field.into(), value);
            assert!(judge(bad, &oauth).is_err(), "{field}");
        }
        let mut no_aud = answer(good);
        no_aud.remove("aud");
        assert!(judge(no_aud.clone(), &oauth).is_err());
        assert!(judge(no_aud, &oauth.clone().dangerously_accept_any_audience()).is_ok());
    }
}
