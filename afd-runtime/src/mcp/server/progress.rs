//! [`Progress`]: the progress a command reports, sent to the MCP client that asked for it
//! as `notifications/progress`: through rmcp's peer of the client, or into the stream of
//! the HTTP answer the front writes itself.

use std::fmt;

use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};

use tokio::sync::mpsc::UnboundedSender;

use crate::progress::{ProgressSink, ProgressUpdate};

/// Progress reporting to the MCP client, for a `tools/call` whose request carried a
/// progress token. Handlers report through
/// [`CommandContext::report_progress`](crate::CommandContext::report_progress), which this
/// serves on MCP; it is also in the context's state (`ctx.try_state::<Progress>()`, absent
/// when the client asked for no progress) for code that forwards progress of its own, such
/// as a gateway relaying an upstream server's notifications.
#[derive(Clone)]
pub struct Progress {
    to: To,
    token: ProgressToken,
}

/// Where a [`Progress`] sends its notifications.
#[derive(Clone)]
enum To {
    Peer(rmcp::Peer<RoleServer>),
    /// The HTTP front's answer, which writes each one as it comes.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    Answer(UnboundedSender<ProgressNotificationParam>),
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
    pub(in crate::mcp) fn new(peer: rmcp::Peer<RoleServer>, token: ProgressToken) -> Self {
        Progress {
            to: To::Peer(peer),
            token,
        }
    }

    /// Reporting into `answer`, for the request that carried `token`.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(in crate::mcp) fn for_answer(
        answer: UnboundedSender<ProgressNotificationParam>,
        token: ProgressToken,
    ) -> Self {
        Progress {
            to: To::Answer(answer),
            token,
        }
    }

    /// Sends one `notifications/progress` (progress should grow with every report); a
    /// client that went away is logged, not an error of the call.
    pub async fn report(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let mut params = ProgressNotificationParam::new(self.token.clone(), progress);
        params.total = total;
        params.message = message;
        match &self.to {
            To::Peer(peer) => {
                if let Err(error) = peer.notify_progress(params).await {
                    tracing::debug!(%error, "could not send notifications/progress");
                }
            }
            // An answer no longer written (its client went away) takes nothing more.
            To::Answer(answer) => {
                let _ = answer.send(params);
            }
        }
    }
}

impl ProgressSink for Progress {
    fn report(&self, update: ProgressUpdate) -> BoxFuture<'_, ()> {
        Progress::report(self, update.progress, update.total, update.message).boxed()
    }
}
