//! rmcp's [`ServerHandler`] for [`McpServer`], written by hand over the catalog: server
//! info, `tools/list`, the resources (with subscriptions: `resources/subscribe` up to
//! 2025-11-25, `subscriptions/listen` from 2026-07-28), the prompts, completions,
//! `logging/setLevel`, and `tools/call` through the one call path.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, ErrorData, GetPromptRequestParams, GetPromptResponse, GetTaskParams,
    GetTaskResult, Implementation, InitializeRequestParams, InitializeResult, JsonObject,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, PromptsCapability, ReadResourceRequestParams, ReadResourceResponse,
    ResourceUpdatedNotification, ResourceUpdatedNotificationParam, ServerCapabilities,
    ServerConfig, ServerNotification, SubscribeRequestParams, SubscriptionFilter, Tool,
    UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{RoleServer, ServerHandler};
use serde_json::Value;

use super::server::answer::{Answer, CALL_PANICKED};
use super::server::asking::Declared;
use super::server::call::{Input, Outbound, ToolCall};
use super::server::listing::page;
use super::server::observe::{Observed, Request};
use super::server::rounds::Bound;
use super::server::state::McpServer;
use super::server::{prompts, resources};
use super::wire::message::META_CAPABILITIES;
use crate::resource::{ResourceUpdates, SubscriberId};

impl ServerHandler for McpServer {
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        // The catalog served now: one replaced since the connection began says so.
        let this = self.current();
        let inner = &this.inner;
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_logging()
            .build();
        // Prompts and completions only when the app declares prompts or resource
        // templates; the resource lists never change, so no `listChanged`.
        if !inner.prompts.is_empty() {
            capabilities.prompts = Some(PromptsCapability::default());
        }
        if !inner.prompts.is_empty() || inner.resources.templates().next().is_some() {
            capabilities.completions = Some(Default::default());
        }
        // MCP's tasks extension, where a command runs as a task.
        if inner.offers_tasks {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(
                    rmcp::model::TASKS_EXTENSION_ID.to_owned(),
                    Default::default(),
                );
        }
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                inner.name.clone(),
                inner.version.clone(),
            ))
            .with_instructions(inner.instructions.clone())
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let observed = self.observe("initialize", None, &context);
        self.timed(observed, async move {
            context.peer.set_peer_info(request.clone());
            self.negotiate_initialize(&request)
        })
        .await
    }

    /// A session of a revision before 2026-07-28 hears of every change of the tool list
    /// ([`McpServer::replace_catalog`]) as `notifications/tools/list_changed`, until it
    /// ends.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let peer = context.peer;
        let changes = self.inner.list_changes.clone();
        let closed = self.closed();
        tokio::spawn(async move {
            changes
                .relay(closed.cancelled(), || {
                    let peer = peer.clone();
                    async move {
                        let sent = peer.notify_tool_list_changed().await;
                        if let Err(error) = &sent {
                            tracing::debug!(%error, "a tool list change could not be sent");
                        }
                        sent.is_ok()
                    }
                })
                .await;
        });
    }

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.timed(self.observe("ping", None, &context), async { Ok(()) })
            .await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.timed(self.observe("tools/list", None, &context), async move {
            self.seen_by(principal(&context).as_ref())
                .tools_page(request.and_then(|r| r.cursor), legacy(&context))
                .await
        })
        .await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.timed(self.observe("resources/list", None, &context), async move {
            let this = self.seen_by(principal(&context).as_ref());
            let all = resources::all(&this.inner.dispatcher, &this.inner.resources);
            let (resources, next_cursor) =
                page(all, request.and_then(|r| r.cursor), this.inner.page_size)?;
            Ok(ListResourcesResult {
                resources,
                next_cursor,
                ..Default::default()
            })
        })
        .await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.timed(
            self.observe("resources/templates/list", None, &context),
            async move {
                let all = resources::templates(&self.inner.resources);
                let (resource_templates, next_cursor) =
                    page(all, request.and_then(|r| r.cursor), self.inner.page_size)?;
                Ok(ListResourceTemplatesResult {
                    resource_templates,
                    next_cursor,
                    ..Default::default()
                })
            },
        )
        .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.timed(
            self.observe("resources/read", Some(&request.uri), &context),
            async move {
                let principal = principal(&context);
                let this = self.seen_by(principal.as_ref());
                let mut ctx = this.inner.context.clone();
                if let Some(principal) = principal {
                    ctx = ctx.with_principal(principal);
                }
                resources::read(
                    &this.inner.dispatcher,
                    &this.inner.resources,
                    ctx,
                    &request.uri,
                )
                .await
                .map(Into::into)
            },
        )
        .await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        removed_in_stateless("resources/subscribe", &context)?;
        let observed = self.observe("resources/subscribe", Some(&request.uri), &context);
        self.timed(observed, async move {
            let declared = &self.inner.resources;
            if declared.find(&request.uri).is_none() {
                let mut error = declared.not_found(&request.uri);
                error.message = format!(
                    "{}: only the app's declared resources can be subscribed to",
                    error.message
                );
                return Err(resources::error_data(error));
            }
            let peer = context.peer.clone();
            declared
                .updates()
                .subscribe(self.subscriber(), request.uri, move |uri| {
                    let peer = peer.clone();
                    async move {
                        if let Err(error) = peer
                            .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                            .await
                        {
                            tracing::debug!(%error, "a resource update could not be sent");
                        }
                    }
                });
            Ok(())
        })
        .await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        removed_in_stateless("resources/unsubscribe", &context)?;
        let observed = self.observe("resources/unsubscribe", Some(&request.uri), &context);
        self.timed(observed, async move {
            // Unsubscribing from what was not subscribed to is not an error: the result is
            // the same.
            self.inner
                .resources
                .updates()
                .unsubscribe(self.subscriber(), &request.uri);
            Ok(())
        })
        .await
    }

    /// What a `subscriptions/listen` request (2026-07-28) is granted: updates of the
    /// declared resources among those it names, and changes of the tool list (which
    /// [`ListChanges`](super::server::ListChanges) announces). The lists of prompts and
    /// resources never change under that protocol, so their `listChanged` is not granted.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let declared = &self.inner.resources;
        let uris: Vec<String> = requested
            .resource_subscriptions
            .iter()
            .flatten()
            .filter(|uri| declared.find(uri).is_some())
            .cloned()
            .collect();
        let mut accepted = SubscriptionFilter::new();
        accepted.resource_subscriptions = (!uris.is_empty()).then_some(uris);
        accepted.tools_list_changed = requested.tools_list_changed.filter(|on| *on);
        Some(accepted)
    }

    /// One `subscriptions/listen` stream: each granted resource's updates go to it until
    /// the client cancels the request or the connection ends.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let listener = Listener {
            updates: self.inner.resources.updates().clone(),
            subscriber: SubscriberId::next(),
        };
        for uri in context.accepted().resource_subscriptions.iter().flatten() {
            let sink = context.sink().clone();
            listener
                .updates
                .subscribe(listener.subscriber, uri.clone(), move |uri| {
                    let sink = sink.clone();
                    async move {
                        let updated = ResourceUpdatedNotification::new(
                            ResourceUpdatedNotificationParam::new(uri),
                        );
                        let notification = ServerNotification::ResourceUpdatedNotification(updated);
                        if let Err(error) = sink.send(notification).await {
                            tracing::debug!(%error, "a resource update could not be sent");
                        }
                    }
                });
        }
        if context.accepted().tools_list_changed != Some(true) {
            context.cancelled().await;
            return Ok(());
        }
        let context = &context;
        self.inner
            .list_changes
            .relay(context.cancelled(), move || async move {
                if let Err(error) = context.sink().notify_tool_list_changed().await {
                    tracing::debug!(%error, "a tool list change could not be sent");
                }
                // The stream lasts until the client cancels it.
                true
            })
            .await;
        Ok(())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.timed(self.observe("prompts/list", None, &context), async move {
            let all = prompts::list(&self.inner.prompts);
            let (prompts, next_cursor) =
                page(all, request.and_then(|r| r.cursor), self.inner.page_size)?;
            Ok(ListPromptsResult {
                prompts,
                next_cursor,
                ..Default::default()
            })
        })
        .await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.timed(
            self.observe("prompts/get", Some(&request.name), &context),
            async move {
                let mut ctx = self.inner.context.clone();
                // On the stateless revision a prompt asks its client through rounds, as a
                // tool call does.
                let round = match legacy(&context) {
                    true => None,
                    false => {
                        let arguments =
                            Value::Object(request.arguments.clone().unwrap_or_default());
                        let subject = principal(&context).map(|p| p.subject().to_owned());
                        let bound = Bound::new(
                            "prompts/get",
                            &request.name,
                            &arguments,
                            subject.as_deref(),
                        );
                        let responses = request
                            .input_responses
                            .clone()
                            .map(|responses| Value::Object(responses.into_iter().collect()));
                        let round = Arc::new(self.inner.rounds.client(
                            &bound,
                            Declared::of(context.meta.0.0.get(META_CAPABILITIES)),
                            responses.as_ref(),
                            request.request_state.as_deref(),
                        )?);
                        ctx = ctx.with_client(round.clone());
                        Some((round, bound))
                    }
                };
                let result = prompts::get(&self.inner.prompts, ctx, request).await;
                if let Some((round, bound)) = round
                    && let Some(asked) = self.inner.rounds.settle(&bound, &round)?
                {
                    return Ok(GetPromptResponse::InputRequired(asked));
                }
                result.map(Into::into)
            },
        )
        .await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.timed(
            self.observe("completion/complete", None, &context),
            async move { prompts::complete(&self.inner.prompts, &self.inner.resources, &request) },
        )
        .await
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        removed_in_stateless("logging/setLevel", &context)?;
        self.timed(self.observe("logging/setLevel", None, &context), async {
            let level = super::server::client::level_of(&request.level)
                .ok_or_else(|| ErrorData::invalid_params("unknown log level", None))?;
            self.log_level().set(level);
            Ok(())
        })
        .await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let observed = self.observe("tasks/get", Some(&request.task_id), &context);
        self.timed(observed, async {
            let subject = principal(&context).map(|p| p.subject().to_owned());
            self.inner
                .tasks
                .get(&request.task_id, subject.as_deref())
                .await
        })
        .await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let observed = self.observe("tasks/update", Some(&request.task_id), &context);
        self.timed(observed, async {
            let subject = principal(&context).map(|p| p.subject().to_owned());
            let responses: JsonObject = request.input_responses.into_iter().collect();
            self.inner
                .tasks
                .update(&request.task_id, subject.as_deref(), &responses)
                .await
        })
        .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let observed = self.observe("tasks/cancel", Some(&request.task_id), &context);
        self.timed(observed, async {
            let subject = principal(&context).map(|p| p.subject().to_owned());
            self.inner
                .tasks
                .cancel(&request.task_id, subject.as_deref())
                .await
        })
        .await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.current()
            .inner
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
        let responses = request
            .input_responses
            .map(|responses| Value::Object(responses.into_iter().collect()));
        let declared = Declared::of(context.meta.0.0.get(META_CAPABILITIES));
        let principal = principal(&context);
        let this = self.seen_by(principal.as_ref());
        let call = this.run_tool_call(ToolCall {
            name: &request.name,
            arguments,
            meta: Some(&context.meta.0.0),
            cancel: context.ct.child_token(),
            peer: Outbound::Peer(&context.peer),
            legacy: legacy(&context),
            principal,
            request_id: Some(context.id.to_string()),
            origin: if crate::telemetry::enabled() {
                origin(&context)
            } else {
                crate::telemetry::Origin::default()
            },
            input: Input {
                declared,
                responses: responses.as_ref(),
                state: request.request_state.as_deref(),
            },
        });
        // A panic here would end rmcp's task for the request without an answer: answered
        // as the stdio front answers it.
        match AssertUnwindSafe(call).catch_unwind().await {
            Ok(called) => match called.answer {
                Answer::InputRequired(result) => Ok(CallToolResponse::InputRequired(result)),
                Answer::Task(result) => Ok(CallToolResponse::Task(result)),
                Answer::Protocol(error) => Err(error),
                answer => Ok(answer.into_tool_result().into()),
            },
            Err(_) => {
                tracing::error!(tool = %request.name, "a tools/call panicked outside its handler");
                Err(ErrorData::internal_error(CALL_PANICKED, None))
            }
        }
    }
}

impl McpServer {
    /// A request rmcp hands this handler, to time and trace: its SERVER span (see
    /// [`server_span`](McpServer::server_span)) of its id, `_meta` and HTTP origin.
    fn observe(
        &self,
        method: &'static str,
        target: Option<&str>,
        context: &RequestContext<RoleServer>,
    ) -> Observed {
        if !crate::telemetry::enabled() {
            return Observed {
                method,
                span: tracing::Span::none(),
            };
        }
        let origin = origin(context);
        let id = context.id.to_string();
        let span = self.server_span(&Request {
            method,
            target,
            id: Some(&id),
            meta: Some(&context.meta.0.0),
            origin: &origin,
        });
        Observed { method, span }
    }
}

/// The caller the HTTP front checked the token of, carried in the request's HTTP parts;
/// none on other transports, or without OAuth.
fn principal(context: &RequestContext<RoleServer>) -> Option<crate::auth::Principal> {
    #[cfg(feature = "http")]
    {
        super::server::caller::principal_of(&context.extensions)
    }
    #[cfg(not(feature = "http"))]
    {
        let _ = context;
        None
    }
}

/// Where the request came from (its HTTP headers' trace context, session, protocol and
/// client address); nothing on other transports.
fn origin(context: &RequestContext<RoleServer>) -> crate::telemetry::Origin {
    #[cfg(feature = "http")]
    {
        super::server::caller::origin_of(&context.extensions)
    }
    #[cfg(not(feature = "http"))]
    {
        let _ = context;
        crate::telemetry::Origin::default()
    }
}

/// Whether the request's protocol keeps sessions (2025-11-25 and earlier, which begin with
/// `initialize`); 2026-07-28 is stateless.
fn legacy(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_none_or(|version| version.has_initialize())
}

/// Refuses, as an unknown method, a method the 2026-07-28 revision removed when the request
/// is of that revision's stateless lifecycle.
fn removed_in_stateless(
    method: &str,
    context: &RequestContext<RoleServer>,
) -> Result<(), ErrorData> {
    if legacy(context) {
        return Ok(());
    }
    Err(ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("Method not found: `{method}` is not part of the stateless protocol"),
        None,
    ))
}

/// The subscriptions of one `subscriptions/listen` stream, ended with it: when the request
/// is cancelled, and also when its future is dropped because the connection went away.
struct Listener {
    updates: ResourceUpdates,
    subscriber: SubscriberId,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.updates.forget(self.subscriber);
    }
}
