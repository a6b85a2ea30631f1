//! Who is calling and what they were granted: [`Principal`] (the subject, the client, the
//! granted scopes and the token's claims) and [`Scopes`], with the rule by which a granted
//! scope covers a required one. A command declares the scopes it needs with
//! `#[command(scopes("orders:write"))]` (or takes its category's default,
//! `category!("order", "...", scopes("orders:read"))`); a caller sees and calls only the
//! commands whose every scope its grant covers.
//!
//! A scope covers itself and every scope below it: `orders` covers `orders:write` and
//! `orders:write:refunds`, not `orders-archive`.
//!
//! ```
//! use afd_runtime::auth::Scopes;
//!
//! let granted = Scopes::parse("shop:read orders");
//! assert!(granted.covers("shop:read"));
//! assert!(granted.covers("orders:write"));
//! assert!(!granted.covers("shop:write"));
//! assert!(granted.covers_all(&["shop:read", "orders:cancel"]));
//! ```

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{Map, Value};

/// The environment variable that bounds what a server without OAuth (stdio, the command
/// line) exposes: a space-separated scope set, as a token would grant it. Commands whose
/// scopes it does not cover are not exposed at all.
pub const SCOPES_ENV: &str = "AFD_SCOPES";

/// Whether `value` is one OAuth scope token (RFC 6749, section 3.3): one or more printable
/// ASCII characters other than space, the double quote and the backslash.
pub const fn is_scope_token(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.is_empty() {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !(b == 0x21 || (b >= 0x23 && b <= 0x5B) || (b >= 0x5D && b <= 0x7E)) {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether the granted scope `granted` covers the required scope `required`: equal, or
/// `required` lies below it (`granted` followed by `:`).
pub fn scope_covers(granted: &str, required: &str) -> bool {
    match required.strip_prefix(granted) {
        Some("") => true,
        Some(rest) => rest.starts_with(':'),
        None => false,
    }
}

/// A set of granted scopes, sorted and without repeats.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Scopes(BTreeSet<String>);

impl Scopes {
    /// No scope.
    pub fn new() -> Self {
        Scopes::default()
    }

    /// The scopes of a space-separated list (an OAuth `scope` claim or parameter); words
    /// that are not scope tokens are left out.
    pub fn parse(text: &str) -> Self {
        text.split(' ')
            .filter(|word| is_scope_token(word))
            .map(str::to_owned)
            .collect()
    }

    /// The scopes of [`SCOPES_ENV`], when it is set (an empty value grants nothing).
    pub fn from_env() -> Option<Self> {
        std::env::var(SCOPES_ENV)
            .ok()
            .map(|value| Scopes::parse(value.trim()))
    }

    /// Whether some granted scope covers `required` (see [`scope_covers`]).
    pub fn covers(&self, required: &str) -> bool {
        self.0.iter().any(|granted| scope_covers(granted, required))
    }

    /// Whether every scope of `required` is covered.
    pub fn covers_all<S: AsRef<str>>(&self, required: &[S]) -> bool {
        required.iter().all(|scope| self.covers(scope.as_ref()))
    }

    /// The scopes of `required` that are not covered, in their order.
    pub fn missing<'a, S: AsRef<str>>(&self, required: &'a [S]) -> Vec<&'a str> {
        required
            .iter()
            .map(AsRef::as_ref)
            .filter(|scope| !self.covers(scope))
            .collect()
    }

    /// The scopes, sorted.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }

    /// How many scopes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no scope is granted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for Scopes {
    /// The space-separated form of an OAuth `scope` parameter.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, scope) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str(" ")?;
            }
            f.write_str(scope)?;
        }
        Ok(())
    }
}

impl<S: Into<String>> FromIterator<S> for Scopes {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        Scopes(iter.into_iter().map(Into::into).collect())
    }
}

/// Values made once per granted scope set and shared (a caller's view of a dispatcher or a
/// server), for at most [`PerScopes::MAX`] sets at once: past it, they are made afresh.
pub(crate) struct PerScopes<T>(Mutex<HashMap<Scopes, Arc<T>>>);

impl<T> Default for PerScopes<T> {
    fn default() -> Self {
        PerScopes(Mutex::default())
    }
}

impl<T> PerScopes<T> {
    /// How many scope sets keep a value at once.
    const MAX: usize = 256;

    /// The value of `scopes`, made by `make` the first time.
    pub(crate) fn get_or_make(&self, scopes: &Scopes, make: impl FnOnce() -> T) -> Arc<T> {
        let mut values = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(value) = values.get(scopes) {
            return value.clone();
        }
        if values.len() >= Self::MAX {
            values.clear();
        }
        let value = Arc::new(make());
        values.insert(scopes.clone(), value.clone());
        value
    }
}

/// The caller of a request, as its access token says: handed to handlers by
/// [`CommandContext::principal`](crate::CommandContext::principal) for checks of the app's
/// own (the order belongs to this subject, say).
#[derive(Clone, PartialEq)]
pub struct Principal {
    subject: Arc<str>,
    client_id: Option<Arc<str>>,
    scopes: Arc<Scopes>,
    claims: Arc<Map<String, Value>>,
}

impl Principal {
    /// A principal with a subject and granted scopes.
    pub fn new(subject: impl Into<Arc<str>>, scopes: Scopes) -> Self {
        Principal {
            subject: subject.into(),
            client_id: None,
            scopes: Arc::new(scopes),
            claims: Arc::default(),
        }
    }

    /// Sets the OAuth client the token was issued to.
    #[must_use]
    pub fn with_client_id(mut self, client_id: impl Into<Arc<str>>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Sets the token's claims (a JWT's payload, or an introspection answer).
    #[must_use]
    pub fn with_claims(mut self, claims: Map<String, Value>) -> Self {
        self.claims = Arc::new(claims);
        self
    }

    /// The subject (`sub`): who the token speaks for.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// The OAuth client the token was issued to (`client_id`, else `azp`), if it says.
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The granted scopes.
    pub fn scopes(&self) -> &Scopes {
        &self.scopes
    }

    /// Every claim of the token, for app-level checks (`tenant`, `email`, ...).
    pub fn claims(&self) -> &Map<String, Value> {
        &self.claims
    }

    /// One claim.
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.claims.get(name)
    }
}

impl fmt::Debug for Principal {
    /// Subject, client and scopes; claims are left out (they may hold personal data).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Principal")
            .field("subject", &self.subject)
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_covers_itself_and_what_lies_below_it() {
        assert!(scope_covers("orders", "orders"));
        assert!(scope_covers("orders", "orders:write"));
        assert!(scope_covers("orders:write", "orders:write:refunds"));
        assert!(!scope_covers("orders", "orders-archive"));
        assert!(!scope_covers("orders:write", "orders"));
        assert!(!scope_covers("orders:w", "orders:write"));
    }

    #[test]
    fn a_set_covers_through_any_of_its_scopes() {
        let granted = Scopes::parse("a:x orders shop:read  zeta");
        assert_eq!(granted.len(), 4);
        assert!(granted.covers("orders:write:refunds"));
        assert!(granted.covers("shop:read"));
        assert!(granted.covers("zeta:1"));
        assert!(!granted.covers("shop:write"));
        assert!(!granted.covers("shop"));
        assert_eq!(
            granted.missing(&["shop:read", "shop:write", "b"]),
            vec!["shop:write", "b"]
        );
        assert_eq!(granted.to_string(), "a:x orders shop:read zeta");
    }

    #[test]
    fn scope_tokens_are_checked_byte_by_byte() {
        assert!(is_scope_token("orders:write"));
        assert!(is_scope_token("https://api.example.com/read"));
        assert!(!is_scope_token(""));
        assert!(!is_scope_token("two words"));
        assert!(!is_scope_token("quo\"te"));
        assert!(!is_scope_token("back\\slash"));
        assert!(!is_scope_token("é"));
        assert!(Scopes::parse("ok bad\"one").iter().eq(["ok"]));
    }

    #[test]
    fn debug_leaves_the_claims_out() {
        let mut claims = Map::new();
        claims.insert("email".into(), Value::from("someone@example.com"));
        let principal = Principal::new("user-1", Scopes::parse("a")).with_claims(claims);
        assert!(!format!("{principal:?}").contains("example.com"));
        assert_eq!(principal.claim("email").unwrap(), "someone@example.com");
    }
}
