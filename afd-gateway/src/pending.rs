//! Servers whose tool lists are not known yet: a request that needs one waits for it to
//! start (each bounded by its own start timeout), and afd-discover and afd-detail name
//! every server whose tools they still cannot show, with its error and when to try again.
//! So no answer silently leaves out a configured server.

use std::sync::Arc;
use std::time::Duration;

use afd_runtime::Registry;
use afd_runtime::mcp::{BATCH, CALL, DETAIL, DISCOVER, PIPE};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde::Serialize;
use serde_json::Value;

use crate::upstream::{Status, Upstream};

/// The warning code on an afd-discover or afd-detail answer that lacks some server's tools.
pub const SERVERS_UNAVAILABLE: &str = "SERVERS_UNAVAILABLE";

/// A configured server whose tools an answer cannot show.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unlisted {
    /// The server's name.
    pub server: String,
    /// `failing` (its start failed: see `error`) or `starting` (not done yet).
    pub status: &'static str,
    /// Why its start failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// When another start may be tried (its restart backoff), in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

/// The servers a `tools/call` of `tool` waits for: for afd-discover and afd-detail, every
/// server whose tools are not known yet; for a call (afd-call, each afd-batch entry and
/// afd-pipe step, or a tool called by its id), the server named by the id's prefix when
/// the catalog lacks the id and that server is not running (its list is unknown, or was
/// cached and may be stale).
pub fn needed(
    upstreams: &[Arc<Upstream>],
    registry: &Registry,
    tool: &str,
    arguments: Option<&JsonObject>,
) -> Vec<Arc<Upstream>> {
    if tool == DISCOVER || tool == DETAIL {
        return upstreams
            .iter()
            .filter(|upstream| upstream.tools().is_none())
            .cloned()
            .collect();
    }
    let argument = |key: &str| arguments.and_then(|arguments| arguments.get(key));
    let named = |entries: Option<&Value>| -> Vec<String> {
        entries
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.get("command").and_then(Value::as_str))
            .map(str::to_owned)
            .collect()
    };
    let commands: Vec<String> = match tool {
        CALL => argument("command")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .into_iter()
            .collect(),
        BATCH => named(argument("commands")),
        PIPE => named(argument("steps")),
        other => vec![other.to_owned()],
    };
    let mut needed: Vec<Arc<Upstream>> = Vec::new();
    for command in commands {
        if registry.lookup(&command).is_some() {
            continue;
        }
        let server = upstreams.iter().find(|upstream| {
            command
                .strip_prefix(upstream.name())
                .is_some_and(|rest| rest.starts_with('.'))
        });
        if let Some(server) = server
            && server.status() != Status::Running
            && !needed.iter().any(|known| Arc::ptr_eq(known, server))
        {
            needed.push(server.clone());
        }
    }
    needed
}

/// Starts (or joins the start of) each server, all at once, each bounded by its start
/// timeout; true when any of them is now running (its tool list known).
pub async fn wait_for(upstreams: &[Arc<Upstream>]) -> bool {
    let starts = upstreams.iter().map(|upstream| async move {
        match upstream.connect().await {
            Ok(_) => true,
            Err(error) => {
                tracing::debug!(server = upstream.name(), error = %error.message, "a server a request waits for did not start");
                false
            }
        }
    });
    futures_util::future::join_all(starts)
        .await
        .into_iter()
        .any(|started| started)
}

/// The servers whose tools are still not known (what afd-discover and afd-detail lack).
pub fn unlisted(upstreams: &[Arc<Upstream>]) -> Vec<Unlisted> {
    upstreams
        .iter()
        .filter(|upstream| upstream.tools().is_none())
        .map(|upstream| describe(upstream))
        .collect()
}

/// Of the servers a call waited for, those that are still not running (the call could
/// not reach their tools).
pub fn not_running(needed: &[Arc<Upstream>]) -> Vec<Unlisted> {
    needed
        .iter()
        .filter(|upstream| upstream.status() != Status::Running)
        .map(|upstream| describe(upstream))
        .collect()
}

fn describe(upstream: &Upstream) -> Unlisted {
    let error = upstream.last_error();
    Unlisted {
        server: upstream.name().to_owned(),
        status: match (upstream.status(), &error) {
            (Status::Unauthorized, _) => Status::Unauthorized.as_str(),
            (_, Some(_)) => "failing",
            (_, None) => "starting",
        },
        error,
        retry_after_ms: upstream
            .backoff_left()
            .map(|wait| u64::try_from(wait.as_millis()).unwrap_or(u64::MAX)),
    }
}

/// Adds to an answer the servers it lacks (afd-discover and afd-detail: every server whose
/// tools are unknown; a call: the servers it needed that did not start):
/// `unavailableServers` in its data (or beside its error), and a `SERVERS_UNAVAILABLE` warning that names each with its error and
/// says when to ask again. The text content is the structured content again, as
/// afd-runtime writes it.
pub fn annotate(result: &mut CallToolResult, unlisted: &[Unlisted]) {
    if unlisted.is_empty() {
        return;
    }
    let Some(Value::Object(structured)) = result.structured_content.as_mut() else {
        return;
    };
    let names: Vec<String> = unlisted
        .iter()
        .map(|server| match &server.error {
            Some(error) => format!("'{}' ({error})", server.server),
            None => format!("'{}' (still starting)", server.server),
        })
        .collect();
    let retry = unlisted
        .iter()
        .filter_map(|server| server.retry_after_ms)
        .max()
        .map_or_else(
            || "ask again shortly".to_owned(),
            |ms| {
                format!(
                    "ask again in {} s",
                    Duration::from_millis(ms).as_secs().max(1)
                )
            },
        );
    let message = format!(
        "Not listed: the tools of {}; {retry} to see them (afd-discover {{\"server\": \"{}\"}})",
        names.join(", "),
        unlisted[0].server
    );
    let servers = serde_json::to_value(unlisted).unwrap_or_default();
    match structured.get_mut("data") {
        Some(Value::Object(data)) => {
            data.insert("unavailableServers".to_owned(), servers);
        }
        _ => {
            structured.insert("unavailableServers".to_owned(), servers);
        }
    }
    let warning = serde_json::json!({
        "code": SERVERS_UNAVAILABLE,
        "message": message,
        "severity": "warning",
    });
    match structured.get_mut("warnings") {
        Some(Value::Array(warnings)) => warnings.push(warning),
        _ => {
            structured.insert("warnings".to_owned(), Value::Array(vec![warning]));
        }
    }
    let text = Value::Object(structured.clone()).to_string();
    result.content = vec![ContentBlock::text(text)];
}
