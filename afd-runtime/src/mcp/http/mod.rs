//! The streamable HTTP transport: the front (`front`: binding, `Host` and `Origin` checks,
//! bearer tokens or OAuth, sessions, rmcp's service behind it), the direct path that answers
//! a plain `tools/call` on its connection (`direct`), and the operator's endpoints and the
//! response bodies a drain watches (`ops`).

mod direct;
mod front;
mod ops;

pub use front::{HttpHandle, HttpOptions};
#[cfg(feature = "metrics")]
pub use ops::MetricsListener;
