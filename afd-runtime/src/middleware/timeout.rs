//! Timeouts derived from each command's execution-time class.

use std::collections::HashMap;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tower::Layer;

use super::{Around, CommandService, FromFn, Next};
use crate::command::ExecutionTime;
use crate::dispatch::{CallKind, CommandRequest};
use crate::error::{CommandError, codes};
use crate::result::CommandResult;

/// Ends a call that runs longer than its command's execution-time class allows, with
/// `TIMEOUT`, and cancels the handler's token.
///
/// Defaults: `instant` 5 s, `fast` 30 s, `slow` 2 min, `long-running` no limit, undeclared
/// 1 min.
#[derive(Debug, Clone)]
pub struct TimeoutLayer {
    by_class: HashMap<ExecutionTime, Option<Duration>>,
    undeclared: Option<Duration>,
}

impl TimeoutLayer {
    /// The default timeouts.
    pub fn from_execution_time() -> Self {
        let by_class = HashMap::from([
            (ExecutionTime::Instant, Some(Duration::from_secs(5))),
            (ExecutionTime::Fast, Some(Duration::from_secs(30))),
            (ExecutionTime::Slow, Some(Duration::from_secs(120))),
            (ExecutionTime::LongRunning, None),
        ]);
        TimeoutLayer {
            by_class,
            undeclared: Some(Duration::from_secs(60)),
        }
    }

    /// Sets the timeout of one class (`None`: no limit).
    #[must_use]
    pub fn with_class(mut self, class: ExecutionTime, timeout: Option<Duration>) -> Self {
        self.by_class.insert(class, timeout);
        self
    }

    /// Sets the timeout of commands that declare no execution time (`None`: no limit).
    #[must_use]
    pub fn with_undeclared(mut self, timeout: Option<Duration>) -> Self {
        self.undeclared = timeout;
        self
    }

    fn timeout_for(&self, class: Option<ExecutionTime>) -> Option<Duration> {
        match class {
            Some(class) => self.by_class.get(&class).copied().flatten(),
            None => self.undeclared,
        }
    }
}

/// The service of [`TimeoutLayer`].
pub type Timeout = FromFn<TimeoutLayer>;

impl Layer<CommandService> for TimeoutLayer {
    type Service = Timeout;

    fn layer(&self, inner: CommandService) -> Timeout {
        FromFn::new(self.clone(), inner)
    }
}

impl Around for TimeoutLayer {
    type Future = BoxFuture<'static, CommandResult<Value>>;

    fn around(&self, mut request: CommandRequest, next: Next) -> Self::Future {
        // Built-in tools are not cut: afd-batch and afd-pipe bound their own time, and
        // each of their commands passes here on its own.
        if request.kind() == CallKind::Meta {
            return Box::pin(next.run(request));
        }
        let class = request.def.execution_time();
        let Some(limit) = self.timeout_for(class) else {
            return Box::pin(next.run(request));
        };
        let def = request.def;
        // The handler gets a child token, so a timeout cancels this call and nothing else.
        request.ctx = request.ctx.child();
        let token = request.ctx.cancellation_token().clone();
        Box::pin(async move {
            match tokio::time::timeout(limit, next.run(request)).await {
                Ok(result) => result,
                Err(_) => {
                    token.cancel();
                    let ms = limit.as_millis() as u64;
                    let class_text = class.map_or("undeclared".to_owned(), |c| c.to_string());
                    let mut suggestion = "Try again later, or with less work per call.".to_owned();
                    if def.is_mutation() {
                        suggestion = format!(
                            "'{}' changes state and may have applied part of its work: check the state before retrying.",
                            def.name()
                        );
                    }
                    let error = CommandError::new(
                        codes::TIMEOUT,
                        format!("Command '{}' timed out after {ms} ms", def.name()),
                    )
                    .with_suggestion(suggestion)
                    .with_retryable(!def.is_mutation())
                    .with_details(json!({"timeoutMs": ms, "executionTime": class_text}));
                    CommandResult::failure(error)
                }
            }
        })
    }
}
