//! rmcp's [`ServerHandler`] for [`McpServer`], written by hand over the catalog: server
//! info, `tools/list`, the resources, `logging/setLevel`, and `tools/call` through the one call path.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::Value;

use super::call::{CALL_PANICKED, ToolCall};
use super::listing::{encode_cursor, offset};
use super::resources;
use super::server::McpServer;

impl ServerHandler for McpServer {
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new(
            self.inner.name.clone(),
            self.inner.version.clone(),
        ))
        .with_instructions(self.inner.instructions.clone())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.tools_page(request.and_then(|r| r.cursor), legacy(&context))
            .await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let all = resources::all(&self.inner.dispatcher);
        let offset = offset(request.and_then(|r| r.cursor), all.len())?;
        Ok(resources::page(
            all,
            offset,
            self.inner.page_size,
            encode_cursor,
        ))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        resources::read(&self.inner.dispatcher, &request.uri)
            .await
            .map(Into::into)
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let level = super::client::level_of(&request.level)
            .ok_or_else(|| ErrorData::invalid_params("unknown log level", None))?;
        self.log_level().set(level);
        Ok(())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner
            .tools
            .iter()
            .find(|tool| tool.name == name)
            .cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let call = self.run_tool_call(ToolCall {
            name: &request.name,
            arguments,
            meta: Some(&context.meta.0.0),
            cancel: context.ct.child_token(),
            peer: &context.peer,
            legacy: legacy(&context),
        });
        // A panic here would end rmcp's task for the request without an answer: answered
        // as the stdio front answers it.
        match AssertUnwindSafe(call).catch_unwind().await {
            Ok(called) => Ok(called.answer.into_tool_result().into()),
            Err(_) => {
                tracing::error!(tool = %request.name, "a tools/call panicked outside its handler");
                Err(ErrorData::internal_error(CALL_PANICKED, None))
            }
        }
    }
}

/// Whether the request's protocol keeps sessions (2025-11-25 and earlier, which begin with
/// `initialize`); 2026-07-28 is stateless.
fn legacy(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_none_or(|version| version.has_initialize())
}
