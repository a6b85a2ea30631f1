//! Starting, in the background, the upstream an agent will most likely need next. After a
//! call, the tools that followed it most often (the usage statistics' transitions) are
//! looked up; the server of one that followed with a high probability, if it is not
//! running, is started now, so the agent's next call does not wait for its start. Bounded
//! (one start per call, only well-observed transitions, never a server in its restart
//! backoff) and switched off with `"predictiveStart": false` in the `gateway` settings.

use std::sync::Arc;

use crate::gateway::Gateway;
use crate::upstream::Status;

/// A transition counts when it is at least this share of what followed the call...
pub const MIN_PROBABILITY: f32 = 0.5;
/// ...and was seen at least this many times.
pub const MIN_TRANSITIONS: u64 = 3;
/// How many followers of a call are looked at.
const CANDIDATES: usize = 3;

impl Gateway {
    /// After a call of `called` (a tool id, or any name the catalog resolves): starts in
    /// the background the server of the tool most likely to be called next, where that is
    /// likely enough and the server is not running. Returns the server started, if any.
    pub fn start_predicted(self: &Arc<Self>, called: &str) -> Option<String> {
        if !self.predictive_start() {
            return None;
        }
        let server = self.server();
        let dispatcher = server.dispatcher();
        let registry = dispatcher.registry();
        let called = registry.get(called)?.name();
        let next = dispatcher
            .usage()
            .next_after(called, CANDIDATES)
            .into_iter()
            .filter(|next| next.probability >= MIN_PROBABILITY && next.count >= MIN_TRANSITIONS)
            .find_map(|next| {
                // A tool id is `server.tool`: its server is known even when its tools are
                // not (no cache, never started).
                let upstream = match registry.get(&next.command) {
                    Some(entry) => self.upstream(entry.category())?,
                    None => self.upstreams().iter().find(|upstream| {
                        next.command
                            .strip_prefix(upstream.name())
                            .is_some_and(|rest| rest.starts_with('.'))
                    })?,
                };
                (upstream.status() != Status::Running && upstream.backoff_left().is_none())
                    .then(|| (upstream.clone(), next))
            });
        let (upstream, next) = next?;
        tracing::debug!(
            server = upstream.name(),
            after = called,
            next = %next.command,
            probability = next.probability,
            "starting the server predicted next"
        );
        let name = upstream.name().to_owned();
        tokio::spawn(async move {
            if let Err(error) = upstream.connect().await {
                tracing::debug!(server = upstream.name(), error = %error.message, "the predicted server did not start");
            }
        });
        Some(name)
    }
}
