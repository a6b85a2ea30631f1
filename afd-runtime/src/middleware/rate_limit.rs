//! Rate limiting with a token bucket: a call over the rate fails at once with
//! `RATE_LIMITED`, saying when to retry (it is not queued).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::time::Instant;
use tower::Layer;

use super::{Around, CommandService, FromFn, Next};
use crate::dispatch::{CallKind, CommandRequest};
use crate::error::{CommandError, codes};
use crate::result::CommandResult;

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    updated: Instant,
}

/// Allows `capacity` calls per `period` (refilled continuously), across all commands or,
/// with [`RateLimitLayer::per_command`], for each command separately.
#[derive(Debug, Clone)]
pub struct RateLimitLayer {
    capacity: u32,
    period: Duration,
    per_command: bool,
    buckets: Arc<Mutex<HashMap<&'static str, Bucket>>>,
}

impl RateLimitLayer {
    /// `capacity` calls per `period`.
    pub fn new(capacity: u32, period: Duration) -> Self {
        RateLimitLayer {
            capacity: capacity.max(1),
            period,
            per_command: false,
            buckets: Arc::default(),
        }
    }

    /// One bucket per command instead of one for all.
    #[must_use]
    pub fn per_command(mut self) -> Self {
        self.per_command = true;
        self
    }

    /// Takes a token, or says how long until one is available.
    fn acquire(&self, command: &'static str) -> Result<(), Duration> {
        let key = if self.per_command { command } else { "" };
        let capacity = f64::from(self.capacity);
        let rate = capacity / self.period.as_secs_f64().max(f64::EPSILON);
        let now = Instant::now();
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let bucket = buckets.entry(key).or_insert(Bucket {
            tokens: capacity,
            updated: now,
        });
        bucket.tokens =
            (bucket.tokens + now.duration_since(bucket.updated).as_secs_f64() * rate).min(capacity);
        bucket.updated = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / rate))
        }
    }
}

/// The service of [`RateLimitLayer`].
pub type RateLimit = FromFn<RateLimitLayer>;

impl Layer<CommandService> for RateLimitLayer {
    type Service = RateLimit;

    fn layer(&self, inner: CommandService) -> RateLimit {
        FromFn::new(self.clone(), inner)
    }
}

impl Around for RateLimitLayer {
    type Future = BoxFuture<'static, CommandResult<Value>>;

    fn around(&self, request: CommandRequest, next: Next) -> Self::Future {
        // Built-in tools are not counted: the commands a batch or pipeline runs are.
        if request.kind() == CallKind::Meta {
            return Box::pin(next.run(request));
        }
        let command = request.def.name();
        let acquired = self.acquire(command);
        crate::metrics::rate_limit(command, acquired.is_ok());
        match acquired {
            Ok(()) => Box::pin(next.run(request)),
            Err(wait) => {
                let retry_after_ms = wait.as_millis().max(1) as u64;
                let scope = if self.per_command {
                    format!("'{command}'")
                } else {
                    "this server".to_owned()
                };
                let error = CommandError::new(
                    codes::RATE_LIMITED,
                    format!(
                        "Rate limit exceeded for {scope}: at most {} calls per {} ms",
                        self.capacity,
                        self.period.as_millis()
                    ),
                )
                .with_suggestion(format!(
                    "Wait {:.1} seconds (retryAfterMs: {retry_after_ms}) and try again.",
                    wait.as_secs_f64()
                ))
                .with_retryable(true)
                .with_details(json!({"retryAfterMs": retry_after_ms}));
                Box::pin(async move { CommandResult::failure(error) })
            }
        }
    }
}
