//! Tokens already checked, with their principal, until they expire and at most
//! [`REMEMBER`]: a client sends the same token on request after request, and only its
//! first request should pay for the signature or the introspection call.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::auth::Principal;

/// The longest a checked token is remembered (never past its expiry): how late a key
/// removed from the issuer's key set, or a token revoked at the issuer, stops being honoured.
pub(super) const REMEMBER: Duration = Duration::from_secs(60);

/// The most tokens remembered; past it, those expired go, then all.
const MAX_REMEMBERED: usize = 10_000;

/// Checked tokens, by their exact text.
#[derive(Default)]
pub(super) struct Remembered(Mutex<HashMap<Box<str>, (Principal, Instant)>>);

impl Remembered {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<Box<str>, (Principal, Instant)>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The principal of `token`, if it was checked and is still remembered.
    pub(super) fn get(&self, token: &str) -> Option<Principal> {
        match self.map().get(token) {
            Some((principal, until)) if Instant::now() < *until => Some(principal.clone()),
            _ => None,
        }
    }

    /// Remembers `token` as `principal` until `exp` (seconds since the epoch; unknown: the
    /// longest), at most [`REMEMBER`]. An expired token is not remembered.
    pub(super) fn keep(&self, token: &str, principal: &Principal, exp: Option<u64>) {
        let left = match exp {
            None => REMEMBER,
            Some(exp) => {
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_secs();
                Duration::from_secs(exp.saturating_sub(now)).min(REMEMBER)
            }
        };
        if left.is_zero() {
            return;
        }
        let mut map = self.map();
        if map.len() >= MAX_REMEMBERED {
            let now = Instant::now();
            map.retain(|_, (_, until)| *until > now);
            if map.len() >= MAX_REMEMBERED {
                map.clear();
            }
        }
        map.insert(token.into(), (principal.clone(), Instant::now() + left));
    }
}
