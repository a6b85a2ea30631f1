//! [`Progress`]: how a command reports progress to the client that asked for it.

use std::fmt;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};

/// Progress reporting to the MCP client, for a `tools/call` whose request carried a
/// progress token: handlers find it in their context (`ctx.state::<Progress>()`, absent
/// when the client asked for no progress) and send `notifications/progress` through it.
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
