//! Progress reporting that does not depend on the surface: a handler reports through its
//! [`CommandContext`](crate::CommandContext), and whichever surface runs the call decides
//! where the report goes (`notifications/progress` to an MCP client, a bar or plain lines
//! on the command line).

use futures_util::future::BoxFuture;

/// One progress report: how far along the call is, out of how much, and what it is doing.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProgressUpdate {
    /// Work done so far; should grow with every report.
    pub progress: f64,
    /// The whole amount of work, when known.
    pub total: Option<f64>,
    /// What the call is doing now.
    pub message: Option<String>,
}

impl ProgressUpdate {
    /// A report of `progress` out of `total`, with an optional message.
    pub fn new(progress: f64, total: Option<f64>, message: Option<String>) -> Self {
        ProgressUpdate {
            progress,
            total,
            message,
        }
    }
}

/// Where a surface sends the progress a handler reports. A sink never fails the call: a
/// report that cannot be delivered (the client went away) is logged and dropped.
pub trait ProgressSink: Send + Sync + 'static {
    /// Delivers one report.
    fn report(&self, update: ProgressUpdate) -> BoxFuture<'_, ()>;
}
