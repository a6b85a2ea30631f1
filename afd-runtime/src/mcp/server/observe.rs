//! Each MCP request as an operator sees it: the helpers that time a request into
//! `mcp.server.operation.duration` (see [`metrics`](crate::metrics)), and trace it, with its
//! method, the tool it called (bounded to the names the server knows) and the error type
//! if it failed.

use std::future::Future;
use std::time::Instant;

use rmcp::model::{ErrorData, JsonObject};
use tracing::Instrument as _;

use super::state::McpServer;
use crate::metrics;
use crate::telemetry::{self, Origin, TraceContext};

/// A SERVER span of target [`telemetry::TARGET`] named `$name`, every attribute it may
/// record declared (a `tracing` span records only the fields it was created with).
macro_rules! span {
    ($name:expr, $method:expr, $server:expr) => {
        tracing::info_span!(
            target: "afd::otel",
            "mcp.server",
            otel.name = %$name,
            otel.kind = "server",
            otel.status_code = tracing::field::Empty,
            mcp.method.name = $method,
            gen_ai.tool.name = tracing::field::Empty,
            gen_ai.prompt.name = tracing::field::Empty,
            gen_ai.operation.name = tracing::field::Empty,
            mcp.resource.uri = tracing::field::Empty,
            jsonrpc.request.id = tracing::field::Empty,
            mcp.session.id = tracing::field::Empty,
            mcp.protocol.version = tracing::field::Empty,
            network.transport = $server.network_transport().as_str(),
            client.address = tracing::field::Empty,
            error.type = tracing::field::Empty,
            trace_id = tracing::field::Empty,
            span_id = tracing::field::Empty,
        )
    };
}

impl McpServer {
    /// `name` if this server lists or serves a tool by it, else
    /// [`OTHER`](metrics::OTHER): a value that keeps the metric's labels bounded.
    pub(in crate::mcp) fn bounded_tool<'a>(&self, name: &'a str) -> &'a str {
        let known = self.inner.routes.contains_key(name)
            || self.inner.dispatcher.registry().get(name).is_some();
        if known { name } else { metrics::OTHER }
    }

    /// The SERVER span of one MCP request, named `{mcp.method.name} {target}` (the tool or
    /// prompt name, bounded to the names this server knows) with the MCP semantic
    /// conventions' attributes, and the child of the caller's trace context (`_meta`, else
    /// the HTTP headers, linked when both). Disabled, and free, when no subscriber takes
    /// afd's spans.
    pub(in crate::mcp) fn server_span(&self, request: &Request<'_>) -> tracing::Span {
        if !telemetry::enabled() {
            return tracing::Span::none();
        }
        let method = request.method;
        let tool =
            (method == "tools/call").then(|| self.bounded_tool(request.target.unwrap_or("")));
        let prompt =
            (method == "prompts/get").then(|| self.bounded_prompt(request.target.unwrap_or("")));
        let span = match tool.or(prompt) {
            Some(target) => span!(format_args!("{method} {target}"), method, self),
            None => span!(method, method, self),
        };
        if span.is_disabled() {
            return span;
        }
        if let Some(tool) = tool {
            span.record("gen_ai.tool.name", tool);
            span.record("gen_ai.operation.name", "execute_tool");
        }
        if let Some(prompt) = prompt {
            span.record("gen_ai.prompt.name", prompt);
        }
        if matches!(
            method,
            "resources/read" | "resources/subscribe" | "resources/unsubscribe"
        ) && let Some(uri) = request.target
        {
            span.record("mcp.resource.uri", uri);
        }
        let origin = request.origin;
        if let Some(id) = request.id {
            span.record("jsonrpc.request.id", id);
        }
        if let Some(session) = &origin.session {
            span.record("mcp.session.id", session.as_str());
        }
        if let Some(protocol) = &origin.protocol {
            span.record("mcp.protocol.version", protocol.as_str());
        }
        if let Some(client) = &origin.client {
            span.record("client.address", client.as_str());
        }
        let from_meta = request.meta.and_then(TraceContext::from_meta);
        telemetry::adopt(&span, from_meta.as_ref(), origin.headers.as_ref());
        span
    }

    /// `name` if this server has a prompt by it, else [`OTHER`](metrics::OTHER).
    fn bounded_prompt<'a>(&self, name: &'a str) -> &'a str {
        if self.inner.prompts.get(name).is_some() {
            name
        } else {
            metrics::OTHER
        }
    }

    /// Runs `request`, the request `observed` describes, timed into the operation metric
    /// (its JSON-RPC error code as `error.type` when it fails) within its span.
    pub(in crate::mcp) async fn timed<T>(
        &self,
        observed: Observed,
        request: impl Future<Output = Result<T, ErrorData>>,
    ) -> Result<T, ErrorData> {
        let Observed { method, span } = observed;
        if !metrics::is_installed() && span.is_disabled() {
            return request.await;
        }
        let started = Instant::now();
        let result = request.instrument(span.clone()).await;
        let error = result.as_ref().err().map(|error| error.code.0.to_string());
        if let Some(error) = &error {
            telemetry::fail(&span, error);
        }
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

/// A request being timed and traced: its method and its span.
pub(in crate::mcp) struct Observed {
    /// `mcp.method.name`.
    pub(in crate::mcp) method: &'static str,
    /// Its SERVER span (disabled when no subscriber takes afd's spans).
    pub(in crate::mcp) span: tracing::Span,
}

/// One MCP request as its span describes it.
pub(in crate::mcp) struct Request<'a> {
    /// `mcp.method.name`.
    pub(in crate::mcp) method: &'static str,
    /// The tool, prompt or resource the request names, if any.
    pub(in crate::mcp) target: Option<&'a str>,
    /// `jsonrpc.request.id`, as written.
    pub(in crate::mcp) id: Option<&'a str>,
    /// The request's `params._meta`, for its trace context.
    pub(in crate::mcp) meta: Option<&'a JsonObject>,
    /// Where it came from.
    pub(in crate::mcp) origin: &'a Origin,
}
