//! What a verified token's claims are to the server: the [`Principal`] they name, and why a
//! token is refused ([`TokenRejection`]).

use serde_json::{Map, Value};

use crate::auth::{Principal, Scopes};

/// Why a request's token is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenRejection {
    /// No bearer token: 401 with the metadata's address and the scopes to ask for.
    Missing,
    /// A token that is not valid here: 401 `invalid_token` with this description (which
    /// names the check that failed, never the token).
    Invalid(&'static str),
    /// The token could not be checked (the introspection endpoint did not answer): 503,
    /// the request refused.
    Unavailable,
}

/// The principal of verified claims: `sub`, the client (`client_id`, else `azp`), the
/// scopes (`scope`, a space-separated string, else `scp`, a list or a string).
pub(super) fn principal_of(claims: Map<String, Value>) -> Result<Principal, TokenRejection> {
    let subject = claims
        .get("sub")
        .and_then(Value::as_str)
        .filter(|sub| !sub.is_empty())
        .ok_or(TokenRejection::Invalid("the token names no subject"))?
        .to_owned();
    let client = claims
        .get("client_id")
        .or_else(|| claims.get("azp"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let scopes = match claims.get("scope").or_else(|| claims.get("scp")) {
        Some(Value::String(text)) => Scopes::parse(text),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .filter(|scope| crate::auth::is_scope_token(scope))
            .collect(),
        _ => Scopes::new(),
    };
    let mut principal = Principal::new(subject, scopes);
    if let Some(client) = client {
        principal = principal.with_client_id(client);
    }
    Ok(principal.with_claims(claims))
}
