//! [`Progress`]: the progress a command reports, sent to the MCP client that asked for it
//! as `notifications/progress`.

use std::fmt;

use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};

use crate::progress::{ProgressSink, ProgressUpdate};

/// Progress reporting to the MCP client, for a `tools/call` whose request carried a
/// progress token. Handlers report through
/// [`CommandContext::report_progress`](crate::CommandContext::report_progress), which this
/// serves on MCP; it is also in the context's state (`ctx.try_state::<Progress>()`, absent
/// when the client asked for no progress) for code that forwards progress of its own, such
/// as a gateway relaying an upstream server's notifications.
#[derive(Clone)]
pub struct Progress {
    peer: rmcp::Peer<RoleServer>,
    token: ProgressToken,
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Progress")
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

impl Progress {
    /// Reporting through `peer` for the request that carried `token`.
    pub(super) fn new(peer: rmcp::Peer<RoleServer>, token: ProgressToken) -> Self {
        Progress { peer, token }
    }

    /// Sends one `notifications/progress` (progress should grow with every report); a
    /// client that went away is logged, not an error of the call.
    pub async fn report(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let mut params = ProgressNotificationParam::new(self.token.clone(), progress);
        params.total = total;
        params.message = message;
        if let Err(error) = self.peer.notify_progress(params).await {
            tracing::debug!(%error, "could not send notifications/progress");
        }
    }
}

impl ProgressSink for Progress {
    fn report(&self, update: ProgressUpdate) -> BoxFuture<'_, ()> {
        Progress::report(self, update.progress, update.total, update.message).boxed()
    }
}
