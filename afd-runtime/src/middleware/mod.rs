//! Middleware: `tower` layers around one command's execution.
//!
//! Add them with [`DispatcherBuilder::layer`](crate::DispatcherBuilder::layer). They wrap
//! [`CommandService`]: a `Service<CommandRequest>` answering with a `CommandResult` and
//! never an error. Validation happens before the stack. The built-in tools (afd-discover,
//! afd-detail, afd-batch, afd-pipe, ...) and the context operations pass through it too,
//! as requests of [`CallKind::Meta`](crate::dispatch::CallKind): observers (telemetry,
//! tracing, timing) see them, while the limits (timeouts, rate limits, concurrency) apply
//! to commands only, so a batch's commands are limited once each.
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
//! [`from_fn`]; the built-in layers are written on the same service, [`FromFn`]. Any other
//! `tower::Layer<CommandService>` works as well.

mod concurrency;
mod from_fn;
mod rate_limit;
mod telemetry;
mod timeout;
mod timing;
mod trace;

pub use concurrency::{ConcurrencyLimit, ConcurrencyLimitLayer};
pub use from_fn::{FromFn, FromFnLayer, Next, from_fn};
pub use rate_limit::{RateLimit, RateLimitLayer};
pub use telemetry::{Telemetry, TelemetryEvent, TelemetryLayer};
pub use timeout::{Timeout, TimeoutLayer};
pub use timing::{SlowCall, Timing, TimingLayer};
pub use trace::{Trace, TraceLayer};

use crate::dispatch::CommandService;
use from_fn::Around;
