//! Announcing that the tool list changed: [`ListChanges`] carries the announcement to every
//! `subscriptions/listen` stream (MCP 2026-07-28) that asked for `toolsListChanged`, and to
//! every session of an earlier revision, on every server that shares it (a gateway shares
//! one among the catalogs it rebuilds, so a stream opened on the catalog before hears that
//! the next one is in place).

use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

/// Where a server announces that its tool list changed. Cheap to clone; clones announce
/// to the same listeners.
#[derive(Debug, Clone)]
pub struct ListChanges {
    sender: broadcast::Sender<()>,
}

impl Default for ListChanges {
    fn default() -> Self {
        ListChanges::new()
    }
}

impl ListChanges {
    /// Announcements no listener has heard yet, beyond which a slow listener hears one
    /// announcement for all it missed.
    const BACKLOG: usize = 16;

    /// A bus of its own.
    #[must_use]
    pub fn new() -> Self {
        ListChanges {
            sender: broadcast::channel(Self::BACKLOG).0,
        }
    }

    /// Tells every listening client that the tool list changed (each gets
    /// `notifications/tools/list_changed` and lists the tools again). Call it once the new
    /// list is in place ([`McpServer::replace_catalog`](super::McpServer::replace_catalog)
    /// does).
    pub fn tools_changed(&self) {
        // No listener is no error: nobody is waiting to hear it.
        let _ = self.sender.send(());
    }

    /// Relays each announcement from now on to one listener through `tell` (announcements
    /// it missed, as one: the client lists again either way) until `until` completes or
    /// `tell` answers that the listener is gone.
    pub(in crate::mcp) async fn relay<Told>(
        &self,
        until: impl Future<Output = ()>,
        mut tell: impl FnMut() -> Told,
    ) where
        Told: Future<Output = bool>,
    {
        let mut heard = self.sender.subscribe();
        let mut until = std::pin::pin!(until);
        loop {
            tokio::select! {
                () = &mut until => return,
                change = heard.recv() => match change {
                    Ok(()) | Err(RecvError::Lagged(_)) => {
                        if !tell().await {
                            return;
                        }
                    }
                    // Not while `self` lasts, which holds a sender.
                    Err(RecvError::Closed) => return until.await,
                },
            }
        }
    }
}
