//! [`CommandContext`]: what a handler gets besides its input: app state and call details.

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::auth::Principal;
use crate::client::{
    self, ClientRequests, Elicitation, LogLevel, LogMessage, LogSink, SamplingRequest,
    SamplingResponse,
};
use crate::error::{CommandError, codes};
use crate::progress::{ProgressSink, ProgressUpdate};

type StateMap = HashMap<TypeId, Arc<dyn Any + Send + Sync>>;

/// The context a command runs in: typed app state, the trace id of the call, a
/// cancellation token, and runtime switches. Cheap to clone (one `Arc`).
///
/// A long handler can watch [`CommandContext::cancelled`] (or poll
/// [`CommandContext::is_cancelled`]) to stop early; the dispatcher reports a cancelled call
/// as `CANCELLED`, never as a success.
///
/// ```
/// use afd_runtime::CommandContext;
///
/// struct Db { url: String }
///
/// let ctx = CommandContext::new().with_state(Db { url: "sqlite::memory:".into() });
/// assert_eq!(ctx.state::<Db>().unwrap().url, "sqlite::memory:");
/// assert!(ctx.state::<String>().is_err());
/// ```
#[derive(Clone, Default)]
pub struct CommandContext {
    inner: Arc<Inner>,
}

#[derive(Clone, Default)]
struct Inner {
    state: StateMap,
    trace_id: Option<String>,
    session: Option<Arc<str>>,
    principal: Option<Arc<Principal>>,
    dev_mode: bool,
    cancel: CancellationToken,
    progress: Option<Arc<dyn ProgressSink>>,
    log: Option<Arc<dyn LogSink>>,
    client: Option<Arc<dyn ClientRequests>>,
}

impl CommandContext {
    /// An empty context.
    pub fn new() -> Self {
        CommandContext::default()
    }

    /// Adds a value of app state, replacing any earlier value of the same type.
    #[must_use]
    pub fn with_state<T: Send + Sync + 'static>(self, value: T) -> Self {
        self.with_shared_state(Arc::new(value))
    }

    /// Adds shared app state, replacing any earlier value of the same type.
    #[must_use]
    pub fn with_shared_state<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        Arc::make_mut(&mut self.inner)
            .state
            .insert(TypeId::of::<T>(), value);
        self
    }

    /// Sets the trace id of the call.
    #[must_use]
    pub fn with_trace_id(mut self, trace_id: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.inner).trace_id = Some(trace_id.into());
        self
    }

    /// Sets the session the call belongs to (a handle from
    /// [`Dispatcher::open_session`](crate::Dispatcher::open_session) or afd-context-enter):
    /// its active context and scope decide what the call may run.
    #[must_use]
    pub fn with_session(mut self, session: impl Into<Arc<str>>) -> Self {
        Arc::make_mut(&mut self.inner).session = Some(session.into());
        self
    }

    /// The session the call belongs to, if any.
    pub fn session(&self) -> Option<&str> {
        self.inner.session.as_deref()
    }

    /// Sets who is calling: the surface that checked the caller's token sets it, and the
    /// dispatcher shows the caller only the commands its scopes cover.
    #[must_use]
    pub fn with_principal(mut self, principal: Principal) -> Self {
        Arc::make_mut(&mut self.inner).principal = Some(Arc::new(principal));
        self
    }

    /// Who is calling, where the surface checked a token (HTTP with OAuth): subject,
    /// client, scopes and claims, for the app's own checks.
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.principal.as_deref()
    }

    /// Uses `token` as the call's cancellation token.
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        Arc::make_mut(&mut self.inner).cancel = token;
        self
    }

    /// A context for a sub-call (a batch entry, a pipeline step): the same state, and a
    /// child cancellation token, cancelled with this one or on its own.
    #[must_use]
    pub fn child(&self) -> Self {
        let token = self.inner.cancel.child_token();
        self.clone().with_cancellation(token)
    }

    /// The call's cancellation token.
    pub fn cancellation_token(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Whether the call was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Completes when the call is cancelled.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await;
    }

    /// Sends the call's progress reports to `sink` (the surface running the call sets it).
    #[must_use]
    pub fn with_progress(mut self, sink: Arc<dyn ProgressSink>) -> Self {
        Arc::make_mut(&mut self.inner).progress = Some(sink);
        self
    }

    /// Whether the caller asked for progress reports: a handler may skip computing them
    /// when not.
    pub fn wants_progress(&self) -> bool {
        self.inner.progress.is_some()
    }

    /// Reports progress to the caller: `progress` out of `total` (when known), with an
    /// optional message. Does nothing when nobody asked for progress; never fails.
    ///
    /// ```
    /// use afd_runtime::CommandContext;
    ///
    /// # async fn demo(ctx: &CommandContext) {
    /// for step in 1..=3 {
    ///     ctx.report_progress(f64::from(step), Some(3.0), Some(format!("step {step}"))).await;
    /// }
    /// # }
    /// ```
    pub async fn report_progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) {
        if let Some(sink) = &self.inner.progress {
            sink.report(ProgressUpdate::new(progress, total, message))
                .await;
        }
    }

    /// Sends the call's log messages to `sink` (the surface running the call sets it).
    #[must_use]
    pub fn with_log(mut self, sink: Arc<dyn LogSink>) -> Self {
        Arc::make_mut(&mut self.inner).log = Some(sink);
        self
    }

    /// Where the call's log messages go, if anywhere.
    pub fn log_sink(&self) -> Option<&Arc<dyn LogSink>> {
        self.inner.log.as_ref()
    }

    /// Forwards the call's sampling and elicitation requests to `client` (the surface
    /// running the call sets it; an in-process host may set its own).
    #[must_use]
    pub fn with_client(mut self, client: Arc<dyn ClientRequests>) -> Self {
        Arc::make_mut(&mut self.inner).client = Some(client);
        self
    }

    /// Whether the caller wants log messages of `level`: a handler may skip building
    /// costly ones when not.
    pub fn wants_log(&self, level: LogLevel) -> bool {
        self.inner
            .log
            .as_ref()
            .and_then(|sink| sink.threshold())
            .is_some_and(|threshold| level >= threshold)
    }

    /// Sends a log message to the caller (`notifications/message` to an MCP client, a
    /// line on stderr on the command line): text or any JSON. Sent only when the caller's
    /// level allows it (an MCP client's `logging/setLevel`; `info` until it sends one);
    /// never fails.
    ///
    /// ```
    /// use afd_runtime::CommandContext;
    /// use afd_runtime::client::LogLevel;
    /// use serde_json::json;
    ///
    /// # async fn demo(ctx: &CommandContext) {
    /// ctx.log(LogLevel::Info, "import started").await;
    /// ctx.log(LogLevel::Warning, json!({"skipped": 3, "reason": "duplicates"})).await;
    /// # }
    /// ```
    pub async fn log(&self, level: LogLevel, data: impl Into<Value>) {
        self.log_message(LogMessage::new(level, data)).await;
    }

    /// Sends a log message built whole (with a logger name, say); see [`log`](Self::log).
    pub async fn log_message(&self, message: LogMessage) {
        if let Some(sink) = &self.inner.log
            && sink
                .threshold()
                .is_some_and(|threshold| message.level >= threshold)
        {
            sink.send(message).await;
        }
    }

    /// Whether the caller can answer [`sample`](Self::sample).
    pub fn can_sample(&self) -> bool {
        self.inner
            .client
            .as_ref()
            .is_some_and(|client| client.can_sample())
    }

    /// Asks the caller's model for a completion (MCP's `sampling/createMessage`).
    ///
    /// # Errors
    ///
    /// `CLIENT_CANNOT_SAMPLE` when the caller did not declare sampling (or the surface has
    /// no model, as on the command line); `CLIENT_REQUEST_FAILED` when the request failed
    /// or the client refused it.
    pub async fn sample(&self, request: SamplingRequest) -> Result<SamplingResponse, CommandError> {
        self.sample_keyed(None, request).await
    }

    /// [`sample`](Self::sample) under a key of the handler's choosing, which names the
    /// question across the rounds of an MCP 2026-07-28 call (the client answers under that
    /// key). Without one the key is derived from the request itself.
    ///
    /// # Errors
    ///
    /// As [`sample`](Self::sample).
    pub async fn sample_as(
        &self,
        key: &str,
        request: SamplingRequest,
    ) -> Result<SamplingResponse, CommandError> {
        self.sample_keyed(Some(key), request).await
    }

    async fn sample_keyed(
        &self,
        key: Option<&str>,
        request: SamplingRequest,
    ) -> Result<SamplingResponse, CommandError> {
        match &self.inner.client {
            Some(client) if client.can_sample() => client.sample_keyed(key, request).await,
            _ => Err(client::cannot_sample()),
        }
    }

    /// Whether the caller can answer [`roots`](Self::roots).
    pub fn can_list_roots(&self) -> bool {
        self.inner
            .client
            .as_ref()
            .is_some_and(|client| client.can_list_roots())
    }

    /// The roots the caller works in (MCP's `roots/list`).
    ///
    /// # Errors
    ///
    /// `CLIENT_CANNOT_LIST_ROOTS` when the caller did not declare roots (or the surface
    /// has none); `CLIENT_REQUEST_FAILED` when the request failed.
    pub async fn roots(&self) -> Result<Vec<client::Root>, CommandError> {
        self.roots_keyed(None).await
    }

    /// [`roots`](Self::roots) under a key of the handler's choosing (see
    /// [`sample_as`](Self::sample_as)).
    ///
    /// # Errors
    ///
    /// As [`roots`](Self::roots).
    pub async fn roots_as(&self, key: &str) -> Result<Vec<client::Root>, CommandError> {
        self.roots_keyed(Some(key)).await
    }

    /// Lets the call go on as a task: the client is answered now with a task it polls
    /// (`tasks/get`), and the handler keeps running; its questions from here on wait in the
    /// task until the client answers them (`tasks/update`), and its result is the task's.
    /// For a command declared `task_start = "handler"` (which runs as a plain call until
    /// then, asking through rounds on MCP 2026-07-28), called by a client that declared the
    /// tasks extension. Returns whether the call is a task now: `false` at once where it
    /// cannot be (another client, another surface, a command without `task_start =
    /// "handler"`), and the call goes on as it was.
    ///
    /// ```
    /// use afd_runtime::client::{Elicitation, confirmation_schema};
    /// use afd_runtime::{CommandContext, CommandError};
    ///
    /// # async fn demo(ctx: &CommandContext) -> Result<String, CommandError> {
    /// let form = confirmation_schema("Rebuild the index? It takes minutes.");
    /// let answer = ctx.elicit_schema("Rebuild the index?", form).await?;
    /// if !matches!(answer, Elicitation::Accept(_)) {
    ///     return Ok("left as it was".into());
    /// }
    /// // The client has its answer: the rest runs as a task it polls.
    /// ctx.continue_as_task().await;
    /// Ok("rebuilt".into())
    /// # }
    /// ```
    pub async fn continue_as_task(&self) -> bool {
        match &self.inner.client {
            Some(client) => client.continue_as_task().await,
            None => false,
        }
    }

    async fn roots_keyed(&self, key: Option<&str>) -> Result<Vec<client::Root>, CommandError> {
        match &self.inner.client {
            Some(client) if client.can_list_roots() => client.list_roots(key).await,
            _ => Err(client::cannot_list_roots()),
        }
    }

    /// Whether the caller can answer [`elicit`](Self::elicit).
    pub fn can_elicit(&self) -> bool {
        self.inner
            .client
            .as_ref()
            .is_some_and(|client| client.can_elicit())
    }

    /// Asks the caller's user to fill in a form whose fields are `T`'s (MCP's
    /// `elicitation/create`): the answer decoded as `T`, or that the user declined or
    /// cancelled. The form's schema is [`client::form_schema::<T>`](client::form_schema).
    ///
    /// ```
    /// use afd_runtime::CommandContext;
    /// use afd_runtime::client::Elicitation;
    /// use afd_runtime::prelude::*;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Shipping {
    ///     /// Where to send the parcel.
    ///     address: String,
    ///     /// Leave it with a neighbour if nobody is in.
    ///     #[serde(default)]
    ///     neighbour_ok: bool,
    /// }
    ///
    /// # async fn demo(ctx: &CommandContext) -> Result<(), CommandError> {
    /// match ctx.elicit::<Shipping>("Where should the order go?").await? {
    ///     Elicitation::Accept(shipping) => println!("to {}", shipping.address),
    ///     Elicitation::Decline | Elicitation::Cancel => println!("not shipped"),
    /// }
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// `CLIENT_CANNOT_ELICIT` when the caller cannot show forms (the command line
    /// included); `CLIENT_REQUEST_FAILED` when the request failed; `VALIDATION_ERROR` when
    /// the answer does not decode as `T`; `INTERNAL_ERROR` when `T` is not a flat object of
    /// primitives and enums.
    pub async fn elicit<T: JsonSchema + DeserializeOwned>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, CommandError> {
        self.elicit_keyed(None, message.into()).await
    }

    /// [`elicit`](Self::elicit) under a key of the handler's choosing, which names the
    /// question across the rounds of an MCP 2026-07-28 call (the client answers under that
    /// key). Without one the key is derived from the form itself.
    ///
    /// # Errors
    ///
    /// As [`elicit`](Self::elicit).
    pub async fn elicit_as<T: JsonSchema + DeserializeOwned>(
        &self,
        key: &str,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, CommandError> {
        self.elicit_keyed(Some(key), message.into()).await
    }

    async fn elicit_keyed<T: JsonSchema + DeserializeOwned>(
        &self,
        key: Option<&str>,
        message: String,
    ) -> Result<Elicitation<T>, CommandError> {
        if !self.can_elicit() {
            return Err(client::cannot_elicit());
        }
        let schema = client::form_schema::<T>()?;
        match self.elicit_schema_keyed(key, message, schema).await? {
            Elicitation::Accept(value) => serde_json::from_value(value)
                .map(Elicitation::Accept)
                .map_err(|error| {
                    CommandError::new(
                        codes::VALIDATION_ERROR,
                        format!("The user's answer does not fit the form: {error}"),
                    )
                    .with_suggestion("Ask again, or take the value as input instead.")
                }),
            Elicitation::Decline => Ok(Elicitation::Decline),
            Elicitation::Cancel => Ok(Elicitation::Cancel),
        }
    }

    /// Asks the caller's user to fill in a form given by its schema as it is (a flat
    /// object of primitives, as MCP requires), for forms a Rust type does not describe;
    /// the answer stays JSON. See [`elicit`](Self::elicit).
    ///
    /// # Errors
    ///
    /// As [`elicit`](Self::elicit), except the decoding.
    pub async fn elicit_schema(
        &self,
        message: impl Into<String>,
        schema: Value,
    ) -> Result<Elicitation<Value>, CommandError> {
        self.elicit_schema_keyed(None, message.into(), schema).await
    }

    /// [`elicit_schema`](Self::elicit_schema) under a key of the handler's choosing (see
    /// [`elicit_as`](Self::elicit_as)).
    ///
    /// # Errors
    ///
    /// As [`elicit_schema`](Self::elicit_schema).
    pub async fn elicit_schema_as(
        &self,
        key: &str,
        message: impl Into<String>,
        schema: Value,
    ) -> Result<Elicitation<Value>, CommandError> {
        self.elicit_schema_keyed(Some(key), message.into(), schema)
            .await
    }

    async fn elicit_schema_keyed(
        &self,
        key: Option<&str>,
        message: String,
        schema: Value,
    ) -> Result<Elicitation<Value>, CommandError> {
        match &self.inner.client {
            Some(client) if client.can_elicit() => client.elicit_keyed(key, message, schema).await,
            _ => Err(client::cannot_elicit()),
        }
    }

    /// Turns dev mode on or off: in dev mode, internal errors carry the panic message.
    #[must_use]
    pub fn with_dev_mode(mut self, on: bool) -> Self {
        Arc::make_mut(&mut self.inner).dev_mode = on;
        self
    }

    /// The app state of type `T`.
    ///
    /// # Errors
    ///
    /// `INTERNAL_ERROR` when no state of that type was added: the host forgot to provide
    /// it, which the caller cannot fix, so handlers can simply use `?`.
    pub fn state<T: Send + Sync + 'static>(&self) -> Result<&T, CommandError> {
        self.try_state::<T>().ok_or_else(|| {
            CommandError::internal(format!(
                "no state of type `{}` was provided to the command context",
                type_name::<T>()
            ))
        })
    }

    /// The app state of type `T`, if present.
    pub fn try_state<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.inner
            .state
            .get(&TypeId::of::<T>())
            .and_then(|value| value.downcast_ref::<T>())
    }

    /// The trace id of the call, if one was set.
    pub fn trace_id(&self) -> Option<&str> {
        self.inner.trace_id.as_deref()
    }

    /// Whether dev mode is on.
    pub fn dev_mode(&self) -> bool {
        self.inner.dev_mode
    }
}

impl fmt::Debug for CommandContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandContext")
            .field("state_entries", &self.inner.state.len())
            .field("trace_id", &self.inner.trace_id)
            .field("session", &self.inner.session)
            .field("principal", &self.inner.principal)
            .field("dev_mode", &self.inner.dev_mode)
            .field("cancelled", &self.inner.cancel.is_cancelled())
            .field("progress", &self.inner.progress.is_some())
            .field("log", &self.inner.log.is_some())
            .field("client", &self.inner.client.is_some())
            .finish()
    }
}
