//! Each MCP request as an operator sees it: the helpers that time a request into
//! `mcp.server.operation.duration` (see [`metrics`](crate::metrics)) with its
//! method, the tool it called (bounded to the names the server knows) and the error type
//! if it failed.

use std::future::Future;
use std::time::Instant;

use rmcp::model::ErrorData;

use super::McpServer;
use crate::metrics;

impl McpServer {
    /// `name` if this server lists or serves a tool by it, else
    /// [`OTHER`](metrics::OTHER): a value that keeps the metric's labels bounded.
    pub(super) fn bounded_tool<'a>(&self, name: &'a str) -> &'a str {
        let known = self.inner.routes.contains_key(name)
            || self.inner.dispatcher.registry().get(name).is_some();
        if known { name } else { metrics::OTHER }
    }

    /// Runs `request`, a request of MCP's `method`, timed into the operation metric (its
    /// JSON-RPC error code as `error.type` when it fails).
    pub(super) async fn timed<T>(
        &self,
        method: &'static str,
        request: impl Future<Output = Result<T, ErrorData>>,
    ) -> Result<T, ErrorData> {
        if !metrics::is_installed() {
            return request.await;
        }
        let started = Instant::now();
        let result = request.await;
        let error = result.as_ref().err().map(|error| error.code.0.to_string());
        metrics::operation(
            method,
            None,
            self.network_transport(),
            error.as_deref(),
            started.elapsed().as_secs_f64(),
        );
        result
    }
}
