//! `tools/list`: the listing of each strategy (computed once, at build), the listing of
//! one session where `tools/list` follows it, whether a call changed that listing, and
//! the opaque cursors of every paginated list.

use std::collections::HashSet;

use rmcp::model::{ErrorData, ListToolsResult, Tool};

use super::server::McpServer;
use super::strategy::Strategy;
use super::tools::{
    Rendering, Route, bootstrap_tools, command_tool, group_tool, group_tools, meta_tools,
    named_tool,
};
use crate::contexts::SessionState;
use crate::dispatch::Dispatcher;
use crate::registry::is_op;

/// The optional tools the builder asked for, and how command tools are rendered.
#[derive(Debug, Clone, Copy)]
pub(super) struct Options {
    pub(super) list_names: bool,
    pub(super) bootstrap: bool,
    pub(super) context_tools: bool,
    pub(super) rendering: Rendering,
}

/// The listing of `strategy`, in its fixed order, with the optional tools `options` asks
/// for.
pub(super) fn listing(
    dispatcher: &Dispatcher,
    strategy: Strategy,
    eager: &[&'static str],
    options: Options,
) -> Vec<(Tool, Route)> {
    let Options {
        list_names,
        bootstrap,
        context_tools,
        rendering,
    } = options;
    let mut tools = strategy_listing(dispatcher, strategy, eager, rendering);
    if context_tools && matches!(strategy, Strategy::Lazy | Strategy::Hybrid) {
        tools.extend(
            dispatcher
                .exposed_entries()
                .filter(|entry| is_op(entry.def()))
                .map(|entry| (command_tool(entry, rendering), Route::Command(entry.name()))),
        );
    }
    if bootstrap {
        tools.extend(bootstrap_tools());
    }
    if list_names && matches!(strategy, Strategy::Lazy | Strategy::Hybrid) {
        let listed: HashSet<String> = tools
            .iter()
            .map(|(tool, _)| tool.name.to_string())
            .collect();
        tools.extend(
            dispatcher
                .exposed_entries()
                .filter(|entry| !listed.contains(entry.name()))
                .map(|entry| (named_tool(entry), Route::Command(entry.name()))),
        );
    }
    tools
}

/// The strategy's own tools, before the optional ones.
fn strategy_listing(
    dispatcher: &Dispatcher,
    strategy: Strategy,
    eager: &[&'static str],
    rendering: Rendering,
) -> Vec<(Tool, Route)> {
    match strategy {
        Strategy::Individual => {
            let mut tools: Vec<(Tool, Route)> = dispatcher
                .exposed_entries()
                .map(|entry| (command_tool(entry, rendering), Route::Command(entry.name())))
                .collect();
            tools.extend(meta_tools(dispatcher, false));
            tools
        }
        Strategy::Grouped => {
            let mut tools = group_tools(dispatcher, rendering);
            tools.extend(meta_tools(dispatcher, false));
            tools
        }
        Strategy::Lazy => meta_tools(dispatcher, true),
        Strategy::Hybrid => {
            let mut tools = meta_tools(dispatcher, true);
            tools.extend(
                dispatcher
                    .exposed_entries()
                    .filter(|entry| entry.def().is_eager() || eager.contains(&entry.name()))
                    .map(|entry| (command_tool(entry, rendering), Route::Command(entry.name()))),
            );
            tools
        }
    }
}

impl McpServer {
    /// One page of `tools/list`: the session's listing where it is followed, else the
    /// fixed one. `legacy`: the client's protocol keeps sessions.
    pub(super) async fn tools_page(
        &self,
        cursor: Option<String>,
        legacy: bool,
    ) -> Result<ListToolsResult, ErrorData> {
        let followed = match self.followed_session(legacy).await {
            Some(handle) => {
                // A session whose store cannot be read lists nothing it might not call.
                let state = self
                    .inner
                    .dispatcher
                    .session(&handle)
                    .await
                    .map_err(|error| {
                        let data = super::call::error_data(&error);
                        ErrorData::internal_error(error.message, Some(data))
                    })?;
                Some(self.session_tools(state.as_deref()))
            }
            None => None,
        };
        let tools = followed.as_ref().unwrap_or(&self.inner.tools);
        let offset = offset(cursor, tools.len())?;
        let end = (offset + self.inner.page_size).min(tools.len());
        Ok(ListToolsResult {
            tools: tools[offset..end].to_vec(),
            next_cursor: (end < tools.len()).then(|| encode_cursor(end)),
            ..Default::default()
        })
    }

    /// The session `tools/list` follows: the transport's, when the author opted in and the
    /// client's protocol has sessions (`legacy`).
    pub(super) async fn followed_session(&self, legacy: bool) -> Option<String> {
        if !self.inner.session_tools || !legacy {
            return None;
        }
        self.transport_session(legacy).await
    }

    /// The listing for a session: commands outside its context left out, and the commands
    /// it activated added with their full schemas.
    pub(super) fn session_tools(&self, state: Option<&SessionState>) -> Vec<Tool> {
        let inner = &*self.inner;
        let dispatcher = &inner.dispatcher;
        let registry = dispatcher.registry();
        let mut tools: Vec<Tool> = inner
            .tools
            .iter()
            .filter_map(|tool| match inner.routes.get(tool.name.as_ref()) {
                Some(Route::Command(name)) => registry
                    .get(name)
                    .is_some_and(|entry| dispatcher.allows(state, entry.def()))
                    .then(|| tool.clone()),
                // A category's tool offers only the actions the session may call.
                Some(Route::Group(category)) => {
                    let entries: Vec<_> = dispatcher
                        .exposed_entries()
                        .filter(|e| e.category() == *category && dispatcher.allows(state, e.def()))
                        .collect();
                    (!entries.is_empty()).then(|| group_tool(dispatcher, category, &entries).0)
                }
                _ => Some(tool.clone()),
            })
            .collect();
        if matches!(inner.strategy, Strategy::Lazy | Strategy::Hybrid)
            && let Some(state) = state
        {
            for name in state.activated() {
                if tools.iter().any(|tool| tool.name == name.as_str()) {
                    continue;
                }
                if let Some(entry) = registry.get(name)
                    && dispatcher.is_exposed(entry.name())
                    && dispatcher.allows(Some(state), entry.def())
                {
                    tools.push(command_tool(entry, inner.rendering));
                }
            }
        }
        tools
    }

    /// Whether the session's listing differs between two states of the session.
    pub(super) fn listing_changed(
        &self,
        before: Option<&SessionState>,
        after: Option<&SessionState>,
    ) -> bool {
        if before == after {
            return false;
        }
        let names = |tools: Vec<Tool>| -> Vec<String> {
            tools
                .into_iter()
                .map(|tool| tool.name.into_owned())
                .collect()
        };
        names(self.session_tools(before)) != names(self.session_tools(after))
    }
}

/// One page of `items`, from where `cursor` points (the start without one), and the cursor
/// of the next page if there is one: every `*/list` request pages the same way.
pub(super) fn page<T>(
    items: Vec<T>,
    cursor: Option<String>,
    size: usize,
) -> Result<(Vec<T>, Option<String>), ErrorData> {
    let offset = offset(cursor, items.len())?;
    let end = offset.saturating_add(size).min(items.len());
    let next = (end < items.len()).then(|| encode_cursor(end));
    let page = items.into_iter().skip(offset).take(end - offset).collect();
    Ok((page, next))
}

/// Where a page starts: 0 without a cursor, the cursor's offset if it is one of ours.
pub(super) fn offset(cursor: Option<String>, len: usize) -> Result<usize, ErrorData> {
    match cursor {
        None => Ok(0),
        Some(cursor) => decode_cursor(&cursor, len)
            .ok_or_else(|| ErrorData::invalid_params(format!("invalid cursor '{cursor}'"), None)),
    }
}

/// An opaque cursor: the offset, tagged so a made-up cursor is rejected.
pub(super) fn encode_cursor(offset: usize) -> String {
    format!("afd1:{offset:x}")
}

fn decode_cursor(cursor: &str, len: usize) -> Option<usize> {
    let offset = usize::from_str_radix(cursor.strip_prefix("afd1:")?, 16).ok()?;
    (offset < len).then_some(offset)
}
