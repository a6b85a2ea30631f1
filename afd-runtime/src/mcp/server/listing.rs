//! `tools/list`: the listing of each strategy (computed once, at build) and the opaque
//! cursors of every paginated list.

use std::collections::HashSet;

use rmcp::model::{ErrorData, Tool};

use super::strategy::Strategy;
use super::tools::{
    Rendering, Route, bootstrap_tools, command_tool, group_tools, meta_tools, named_tool,
};
use crate::dispatch::Dispatcher;
use crate::registry::is_op;

/// The optional tools the builder asked for, and how command tools are rendered.
#[derive(Debug, Clone, Copy)]
pub(in crate::mcp) struct Options {
    pub(in crate::mcp) list_names: bool,
    pub(in crate::mcp) bootstrap: bool,
    pub(in crate::mcp) context_tools: bool,
    pub(in crate::mcp) rendering: Rendering,
}

/// The listing of `strategy`, in its fixed order, with the optional tools `options` asks
/// for.
pub(in crate::mcp) fn listing(
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

/// One page of `items`, from where `cursor` points (the start without one), and the cursor
/// of the next page if there is one: every `*/list` request pages the same way.
pub(in crate::mcp) fn page<T>(
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
pub(in crate::mcp) fn offset(cursor: Option<String>, len: usize) -> Result<usize, ErrorData> {
    match cursor {
        None => Ok(0),
        Some(cursor) => decode_cursor(&cursor, len)
            .ok_or_else(|| ErrorData::invalid_params(format!("invalid cursor '{cursor}'"), None)),
    }
}

/// An opaque cursor: the offset, tagged so a made-up cursor is rejected.
pub(in crate::mcp) fn encode_cursor(offset: usize) -> String {
    format!("afd1:{offset:x}")
}

fn decode_cursor(cursor: &str, len: usize) -> Option<usize> {
    let offset = usize::from_str_radix(cursor.strip_prefix("afd1:")?, 16).ok()?;
    (offset < len).then_some(offset)
}
