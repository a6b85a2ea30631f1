//! Middleware: `tower` layers around one command's execution.
//!
//! Add them with [`DispatcherBuilder::layer`](crate::DispatcherBuilder::layer). They wrap
//! [`CommandService`](crate::CommandService): a `Service<CommandRequest>` answering with a
//! `CommandResult` and never an error. Validation happens before the stack, and the
//! meta-tools' own introspection (afd-discover, afd-detail) bypasses it.
//!
//! ```
//! use std::time::Duration;
//! use afd_runtime::middleware::{RateLimitLayer, TimeoutLayer, TimingLayer, TraceLayer};
//! use afd_runtime::{Dispatcher, Registry};
//!
//! let dispatcher = Dispatcher::builder(Registry::global())
//!     .layer(TimeoutLayer::from_execution_time())
//!     .layer(RateLimitLayer::new(100, Duration::from_secs(1)).per_command())
//!     .layer(TimingLayer::new(Duration::from_millis(500)))
//!     .layer(TraceLayer::new())
//!     .build()
//!     .unwrap();
//! # let _ = dispatcher;
//! ```
//!
//! A layer of your own that runs code around a call is an async function given to
//! [`from_fn`]. Any other `tower::Layer<CommandService>` works as well.

mod from_fn;
mod rate_limit;
mod telemetry;
mod timeout;
mod timing;
mod trace;

use std::convert::Infallible;

use serde_json::Value;
use tower::Service;

pub use from_fn::{FromFn, FromFnLayer, Next, from_fn};
pub use rate_limit::{RateLimit, RateLimitLayer};
pub use telemetry::{Telemetry, TelemetryEvent, TelemetryLayer};
pub use timeout::{Timeout, TimeoutLayer};
pub use timing::{SlowCall, Timing, TimingLayer};
pub use tower::limit::{ConcurrencyLimit, ConcurrencyLimitLayer};
pub use trace::{Trace, TraceLayer};

use crate::dispatch::CommandRequest;
use crate::result::CommandResult;

/// A service the built-in layers can wrap: the command stack, or any layer of it.
pub trait CommandStack:
    Service<
        CommandRequest,
        Response = CommandResult<Value>,
        Error = Infallible,
        Future: Send + 'static,
    > + Clone
    + Send
    + 'static
{
}

impl<S> CommandStack for S where
    S: Service<
            CommandRequest,
            Response = CommandResult<Value>,
            Error = Infallible,
            Future: Send + 'static,
        > + Clone
        + Send
        + 'static
{
}

/// Takes the ready service out of `slot`, leaving a fresh clone (the usual tower pattern
/// for services whose futures outlive `&mut self`).
fn take_ready<S: Clone>(slot: &mut S) -> S {
    let clone = slot.clone();
    std::mem::replace(slot, clone)
}
