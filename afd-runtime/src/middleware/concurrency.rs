//! A bound on how many commands run at once, which lets the built-in tools through.
//!
//! tower's `ConcurrencyLimit` does the counting. afd-batch and afd-pipe pass through the
//! stack and then run each of their commands through it again: were they counted, a
//! batch would hold a slot while its commands wait for one, and as many batches as slots
//! would wait forever.

use std::convert::Infallible;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use serde_json::Value;
use tower::limit::ConcurrencyLimit as TowerLimit;
use tower::{Layer, Service, ServiceExt};

use super::CommandService;
use crate::dispatch::{CallKind, CommandRequest};
use crate::result::CommandResult;

/// Runs at most `max` commands at once; the others wait for a slot. Built-in tools
/// ([`CallKind::Meta`]) are not counted: the commands they run are.
#[derive(Debug, Clone, Copy)]
pub struct ConcurrencyLimitLayer {
    max: usize,
}

impl ConcurrencyLimitLayer {
    /// At most `max` commands at once.
    pub fn new(max: usize) -> Self {
        ConcurrencyLimitLayer { max }
    }
}

impl Layer<CommandService> for ConcurrencyLimitLayer {
    type Service = ConcurrencyLimit;

    fn layer(&self, inner: CommandService) -> ConcurrencyLimit {
        ConcurrencyLimit {
            limited: TowerLimit::new(inner.clone(), self.max),
            inner,
        }
    }
}

/// The service of [`ConcurrencyLimitLayer`].
#[derive(Clone)]
pub struct ConcurrencyLimit {
    limited: TowerLimit<CommandService>,
    inner: CommandService,
}

impl std::fmt::Debug for ConcurrencyLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConcurrencyLimit").finish_non_exhaustive()
    }
}

impl Service<CommandRequest> for ConcurrencyLimit {
    type Response = CommandResult<Value>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<CommandResult<Value>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // The slot is taken per request, in `call`: whether one is needed depends on it.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: CommandRequest) -> Self::Future {
        if request.kind() == CallKind::Meta {
            Box::pin(self.inner.clone().oneshot(request))
        } else {
            Box::pin(self.limited.clone().oneshot(request))
        }
    }
}
