//! A tool list that changes while clients are connected: `test_trigger_tool_change` adds
//! `test_dynamic_tool` to the catalog the server serves, or takes it out again, with
//! [`McpServer::replace_catalog`]; clients listening on `subscriptions/listen` (MCP
//! 2026-07-28) and sessions of earlier revisions hear `notifications/tools/list_changed`.

use std::sync::{Mutex, OnceLock, PoisonError};

use afd_runtime::Registry;
use afd_runtime::mcp::{BuildError, McpServer, Strategy};
use afd_runtime::prelude::*;

/// The tool `test_trigger_tool_change` adds and takes out.
pub const DYNAMIC_TOOL: &str = "test_dynamic_tool";

/// The server the fixtures serve, once [`serve`] has been told of it.
static SERVED: OnceLock<McpServer> = OnceLock::new();

/// Whether [`DYNAMIC_TOOL`] is served now; held while the catalog is replaced, so that two
/// triggers at once take turns.
static SHOWN: Mutex<bool> = Mutex::new(false);

/// The fixtures' server: every command as its own tool, input schemas as generated,
/// [`DYNAMIC_TOOL`] only when `dynamic`; with `after`'s session and usage stores when it
/// is to replace `after`'s catalog.
///
/// # Errors
///
/// The catalog cannot be served (see [`BuildError`]).
pub fn build(dynamic: bool, after: Option<&McpServer>) -> Result<McpServer, BuildError> {
    let stores = after.map(|server| {
        let dispatcher = server.dispatcher();
        (dispatcher.sessions().clone(), dispatcher.usage().clone())
    });
    McpServer::builder(Registry::global())
        .name("afd-conformance")
        .strategy(Strategy::Individual)
        .compact_schemas(false)
        .context(crate::context())
        .dispatch(move |mut d| {
            if let Some((sessions, usage)) = stores {
                d = d.sessions(sessions).usage(usage);
            }
            if !dynamic {
                d = d.hide([DYNAMIC_TOOL]);
            }
            d
        })
        .build()
}

/// Remembers `server` as the one whose catalog `test_trigger_tool_change` replaces.
pub fn serve(server: &McpServer) {
    let _ = SERVED.set(server.clone());
}

/// Adds `test_dynamic_tool` to the tools this server serves, or takes it out if it is
/// there; every client that listens for tool list changes is told.
#[command(
    name = "test_trigger_tool_change",
    title = "Trigger a tool list change",
    category = "conformance",
    mutation
)]
pub fn trigger_tool_change() -> Result<String, CommandError> {
    let served = SERVED.get().ok_or_else(|| {
        CommandError::new(
            "NOT_SERVING",
            "this process serves no catalog to change (the fixtures' server sets one)",
        )
    })?;
    let mut shown = SHOWN.lock().unwrap_or_else(PoisonError::into_inner);
    let next = build(!*shown, Some(&served.current())).map_err(|error| {
        CommandError::new(
            "CATALOG_UNAVAILABLE",
            format!("cannot build the catalog: {error}"),
        )
    })?;
    served.replace_catalog(&next);
    *shown = !*shown;
    Ok(match *shown {
        true => format!("{DYNAMIC_TOOL} was added to the tool list"),
        false => format!("{DYNAMIC_TOOL} was taken out of the tool list"),
    })
}

/// A tool that is listed only while `test_trigger_tool_change` has added it.
#[command(
    name = "test_dynamic_tool",
    title = "Dynamic tool",
    category = "conformance"
)]
pub fn dynamic_tool() -> String {
    "This tool was added to the list while the server ran.".to_owned()
}
