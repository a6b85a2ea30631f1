//! `tools/list` on one connection: one page of the session's listing where `tools/list`
//! follows the session, else of the fixed listing; whether a call changed that listing.

use rmcp::model::{ErrorData, ListToolsResult, Tool};

use super::errors::error_data;
use super::listing::{encode_cursor, offset};
use super::state::McpServer;
use super::strategy::Strategy;
use super::tools::{Route, command_tool, group_tool};
use crate::contexts::SessionState;

impl McpServer {
    /// One page of `tools/list`: the session's listing where it is followed, else the
    /// fixed one. `legacy`: the client's protocol keeps sessions.
    pub(in crate::mcp) async fn tools_page(
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
                        let data = error_data(&error);
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
    pub(in crate::mcp) async fn followed_session(&self, legacy: bool) -> Option<String> {
        if !self.inner.session_tools || !legacy {
            return None;
        }
        self.transport_session(legacy).await
    }

    /// The listing for a session: commands outside its context left out, and the commands
    /// it activated added with their full schemas.
    pub(in crate::mcp) fn session_tools(&self, state: Option<&SessionState>) -> Vec<Tool> {
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
    pub(in crate::mcp) fn listing_changed(
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
