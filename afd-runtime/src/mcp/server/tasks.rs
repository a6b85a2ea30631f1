//! Calls that run as tasks (MCP's tasks extension, `io.modelcontextprotocol/tasks`): a
//! command declared `task = "optional" | "required"` (or `long-running`), called by a
//! client that declared the extension, is answered at once with a task; its handler runs
//! on in the background, and the client polls `tasks/get`, answers the handler's questions
//! with `tasks/update` and may cancel it with `tasks/cancel`.
//!
//! [`Tasks`] is the server's side of it: the store the records live in (this process's
//! memory, or Redis beside the sessions, so any replica answers for any task), and the
//! tasks this process runs. [`TaskClient`] is the handler's client inside a task: a
//! question is written into the record and waits there until the client answers it (each
//! on its own, so a handler's `join!` of two questions lists both at once). A handler
//! declared `task_start = "handler"` runs as a plain call (asking through rounds) until it
//! calls `ctx.continue_as_task()`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures_util::future::BoxFuture;
use rmcp::model::{
    CreateTaskResult, DetailedTask, ErrorCode, ErrorData, GetTaskResult, InputRequests, JsonObject,
    ServerNotification, Task, TaskPayload, TaskStatus, TaskStatusNotification,
    TaskStatusNotificationParams,
};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio::sync::{Notify, oneshot};
use tokio_util::sync::CancellationToken;

use super::asking::{Asker, Declared, Keys};
use crate::client::{ClientRequests, Elicitation, Root, SamplingRequest, SamplingResponse};
use crate::error::{CommandError, codes};
use crate::ops::Drain;
use crate::tasks::{TaskRecord, TaskState, TaskStore};

/// How long a task's record is kept after it was created, unless the builder says
/// otherwise (rmcp's default).
pub(in crate::mcp) const DEFAULT_TASK_TTL: Duration = Duration::from_secs(300);

/// How often a client should poll, unless the builder says otherwise (rmcp's default).
pub(in crate::mcp) const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);

/// How long a cancelled handler is given to return before its task is marked cancelled
/// without it (its late result is dropped).
const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// How often a replica running a task reads a shared store for answers and cancellations
/// that reached another replica.
const SHARED_POLL: Duration = Duration::from_millis(200);

/// The server's tasks: where their records live, and those this process runs.
pub(in crate::mcp) struct Tasks {
    store: Arc<dyn TaskStore>,
    ttl_ms: u64,
    poll_ms: u64,
    /// The tasks this process runs, by id.
    running: Mutex<HashMap<String, Arc<Running>>>,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("ttl_ms", &self.ttl_ms)
            .field("poll_ms", &self.poll_ms)
            .finish_non_exhaustive()
    }
}

/// What this process holds of a task it runs.
pub(in crate::mcp) struct Running {
    /// The handler's cancellation: fired by `tasks/cancel` or the drain.
    cancel: CancellationToken,
    /// Whether the client cancelled it (else a cancellation is the drain's).
    by_client: AtomicBool,
    /// Woken when answers arrive.
    answered: Notify,
    /// Where its status changes are announced (`notifications/tasks`): the client's
    /// session, where it has one. The stateless wire routes them through
    /// `subscriptions/listen`, which defines no filter for tasks yet: clients there poll.
    announce: Option<Peer<RoleServer>>,
}

impl Running {
    /// Announces the task as `record` now has it, where its client keeps a session.
    fn announce(&self, record: &TaskRecord) {
        let Some(peer) = &self.announce else {
            return;
        };
        let Ok(task) = detailed(record) else {
            return;
        };
        let notification = ServerNotification::TaskStatusNotification(TaskStatusNotification::new(
            TaskStatusNotificationParams::from(task),
        ));
        let peer = peer.clone();
        tokio::spawn(async move {
            if let Err(error) = peer.send_notification(notification).await {
                tracing::debug!(%error, "a task's status could not be announced");
            }
        });
    }
}

impl Tasks {
    /// Tasks kept in `store`, each readable `ttl` after its creation, clients told to poll
    /// every `poll`.
    pub(in crate::mcp) fn new(store: Arc<dyn TaskStore>, ttl: Duration, poll: Duration) -> Self {
        let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1);
        Tasks {
            store,
            ttl_ms: millis(ttl),
            poll_ms: millis(poll),
            running: Mutex::default(),
        }
    }

    fn running(&self, id: &str) -> Option<Arc<Running>> {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
    }

    /// Creates the record of a task of `tool` for `subject`, run here with `cancel`:
    /// returns once it is stored (any replica reads it from then on).
    async fn create(
        &self,
        tool: &str,
        subject: Option<&str>,
        cancel: CancellationToken,
        announce: Option<Peer<RoleServer>>,
    ) -> Result<(CreateTaskResult, Arc<Running>), ErrorData> {
        let now = crate::text::iso8601(std::time::SystemTime::now());
        let record = TaskRecord {
            id: crate::random::hex128(),
            subject: subject.map(str::to_owned),
            tool: tool.to_owned(),
            state: TaskState::Working,
            status_message: None,
            created_at: now.clone(),
            last_updated_at: now,
            ttl_ms: self.ttl_ms,
            poll_interval_ms: self.poll_ms,
            input_requests: Default::default(),
            answers: Default::default(),
            cancel_requested: false,
            result: None,
            error: None,
        };
        self.store.create(&record).await.map_err(unavailable)?;
        let running = Arc::new(Running {
            cancel,
            by_client: AtomicBool::new(false),
            answered: Notify::new(),
            announce,
        });
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(record.id.clone(), running.clone());
        Ok((CreateTaskResult::new(task_of(&record)), running))
    }

    /// The record of task `id` as `subject` may see it: another caller's task is unknown.
    async fn visible(&self, id: &str, subject: Option<&str>) -> Result<TaskRecord, ErrorData> {
        match self.store.get(id).await.map_err(unavailable)? {
            Some(record) if record.subject.as_deref() == subject => Ok(record),
            _ => Err(unknown_task(id)),
        }
    }

    /// `tasks/get`: the task as it stands.
    pub(in crate::mcp) async fn get(
        &self,
        id: &str,
        subject: Option<&str>,
    ) -> Result<GetTaskResult, ErrorData> {
        let record = self.visible(id, subject).await?;
        Ok(GetTaskResult::new(detailed(&record)?))
    }

    /// `tasks/update`: the client's answers to the task's questions. Answers to keys the
    /// task is not waiting on are ignored.
    pub(in crate::mcp) async fn update(
        &self,
        id: &str,
        subject: Option<&str>,
        responses: &JsonObject,
    ) -> Result<(), ErrorData> {
        self.visible(id, subject).await?;
        let answer = |record: &mut TaskRecord| {
            let mut changed = false;
            for (key, value) in responses {
                if record.input_requests.remove(key).is_some() {
                    record.answers.insert(key.clone(), value.clone());
                    changed = true;
                }
            }
            if changed {
                if record.input_requests.is_empty() && record.state == TaskState::InputRequired {
                    record.state = TaskState::Working;
                }
                record.touch();
            }
        };
        self.store
            .update(id, &answer)
            .await
            .map_err(unavailable)?
            .ok_or_else(|| unknown_task(id))?;
        if let Some(running) = self.running(id) {
            running.answered.notify_waiters();
        }
        Ok(())
    }

    /// `tasks/cancel`: asks the task's handler to stop. A task that has ended stays as it
    /// was (the same empty answer).
    pub(in crate::mcp) async fn cancel(
        &self,
        id: &str,
        subject: Option<&str>,
    ) -> Result<(), ErrorData> {
        let record = self.visible(id, subject).await?;
        if record.state.is_terminal() {
            return Ok(());
        }
        let request = |record: &mut TaskRecord| {
            if !record.state.is_terminal() {
                record.cancel_requested = true;
            }
        };
        self.store.update(id, &request).await.map_err(unavailable)?;
        if let Some(running) = self.running(id) {
            running.by_client.store(true, Ordering::SeqCst);
            running.cancel.cancel();
        }
        Ok(())
    }

    /// Waits for the handler of task `id` (`handle`) and writes how it ended. Meanwhile,
    /// with a shared store, brings in answers and cancellations another replica took; a
    /// cancelled handler that does not return within [`CANCEL_GRACE`] is left behind.
    pub(in crate::mcp) async fn finish(
        self: Arc<Self>,
        id: String,
        running: Arc<Running>,
        mut handle: tokio::task::JoinHandle<super::answer::Answer>,
        drain: Drain,
    ) {
        let _work = drain.enter_admitted();
        let shared = self.store.is_shared();
        let joined = loop {
            tokio::select! {
                joined = &mut handle => break Some(joined),
                () = async {
                    running.cancel.cancelled().await;
                    tokio::time::sleep(CANCEL_GRACE).await;
                } => {
                    handle.abort();
                    break None;
                }
                () = drain.aborted(), if !running.cancel.is_cancelled() => running.cancel.cancel(),
                () = tokio::time::sleep(SHARED_POLL), if shared => {
                    if let Ok(Some(record)) = self.store.get(&id).await {
                        if record.cancel_requested && !running.cancel.is_cancelled() {
                            running.by_client.store(true, Ordering::SeqCst);
                            running.cancel.cancel();
                        }
                        if !record.answers.is_empty() {
                            running.answered.notify_waiters();
                        }
                    }
                }
            }
        };
        let ended = Ended::of(joined, &running);
        let end = |record: &mut TaskRecord| ended.apply(record);
        match self.store.update(&id, &end).await {
            Ok(Some(record)) => running.announce(&record),
            Ok(None) => {}
            Err(error) => tracing::error!(task = %id, %error, "could not record how a task ended"),
        }
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
    }
}

/// How a task ended, as its record will say.
enum Ended {
    Completed(Value),
    Failed(Value),
    Cancelled,
}

impl Ended {
    fn of(
        joined: Option<Result<super::answer::Answer, tokio::task::JoinError>>,
        running: &Running,
    ) -> Ended {
        use super::answer::Answer;
        if running.by_client.load(Ordering::SeqCst) {
            return Ended::Cancelled;
        }
        let failed = |message: &str, data: Option<Value>| {
            let mut error = json!({"code": ErrorCode::INTERNAL_ERROR.0, "message": message});
            if let Some(data) = data {
                error["data"] = data;
            }
            Ended::Failed(error)
        };
        if running.cancel.is_cancelled() {
            return failed(
                "the server shut down before the task finished",
                Some(json!({"retryable": true})),
            );
        }
        match joined {
            None => Ended::Cancelled,
            Some(Err(_)) => failed(super::answer::CALL_PANICKED, None),
            Some(Ok(Answer::Protocol(error))) => {
                Ended::Failed(serde_json::to_value(error).unwrap_or_default())
            }
            Some(Ok(Answer::InputRequired(_) | Answer::Task(_))) => failed(
                "the task's handler asked its client through rounds, which a task cannot answer",
                None,
            ),
            // A failure inside the server (a handler that panicked) is the task's failure;
            // any other error is the tool's result, as in a plain call.
            Some(Ok(Answer::Command(result)))
                if result
                    .error
                    .as_ref()
                    .is_some_and(|error| error.code == codes::INTERNAL_ERROR) =>
            {
                let message = result
                    .error
                    .as_ref()
                    .map(|error| error.message.clone())
                    .unwrap_or_default();
                failed(&message, None)
            }
            Some(Ok(answer)) => {
                let mut result =
                    serde_json::to_value(answer.into_tool_result()).unwrap_or_default();
                if let Some(result) = result.as_object_mut() {
                    result.remove("resultType");
                }
                Ended::Completed(result)
            }
        }
    }

    fn apply(&self, record: &mut TaskRecord) {
        if record.state.is_terminal() {
            return;
        }
        record.input_requests.clear();
        record.answers.clear();
        match self {
            Ended::Completed(result) => {
                record.state = TaskState::Completed;
                record.result = Some(result.clone());
            }
            Ended::Failed(error) => {
                record.state = TaskState::Failed;
                record.error = Some(error.clone());
            }
            Ended::Cancelled => record.state = TaskState::Cancelled,
        }
        record.touch();
    }
}

/// A record's base fields as the wire has them.
fn task_of(record: &TaskRecord) -> Task {
    let status = match record.state {
        TaskState::Working => TaskStatus::Working,
        TaskState::InputRequired => TaskStatus::InputRequired,
        TaskState::Completed => TaskStatus::Completed,
        TaskState::Failed => TaskStatus::Failed,
        TaskState::Cancelled => TaskStatus::Cancelled,
    };
    let mut task = Task::new(
        record.id.clone(),
        status,
        record.created_at.clone(),
        record.last_updated_at.clone(),
    )
    .with_ttl_ms(record.ttl_ms)
    .with_poll_interval_ms(record.poll_interval_ms);
    if let Some(message) = &record.status_message {
        task = task.with_status_message(message.clone());
    }
    task
}

/// A record as `tasks/get` answers it.
fn detailed(record: &TaskRecord) -> Result<DetailedTask, ErrorData> {
    let object = |value: &Option<Value>| match value {
        Some(Value::Object(object)) => object.clone(),
        _ => JsonObject::new(),
    };
    let payload = match record.state {
        TaskState::Working => TaskPayload::Working,
        TaskState::InputRequired => {
            let requests = Value::Object(
                record
                    .input_requests
                    .iter()
                    .map(|(key, request)| (key.clone(), request.clone()))
                    .collect(),
            );
            let input_requests: InputRequests = serde_json::from_value(requests).map_err(|e| {
                ErrorData::internal_error(format!("a task's input request: {e}"), None)
            })?;
            TaskPayload::InputRequired { input_requests }
        }
        TaskState::Completed => TaskPayload::Completed {
            result: object(&record.result),
        },
        TaskState::Failed => TaskPayload::Failed {
            error: object(&record.error),
        },
        TaskState::Cancelled => TaskPayload::Cancelled,
    };
    Ok(DetailedTask::new(task_of(record), payload))
}

/// -32602 for a task this caller cannot see: unknown, expired, or another caller's.
fn unknown_task(id: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("no task '{id}': unknown, expired, or started by another caller"),
        Some(json!({"taskId": id})),
    )
}

/// The error of a store that could not be read or written: retryable.
fn unavailable(error: crate::tasks::TaskStoreError) -> ErrorData {
    ErrorData::internal_error(
        format!("the task store is unavailable: {}", error.message()),
        Some(json!({"retryable": true})),
    )
}

/// What a call that runs as a task (or may become one) is known by until it is one.
struct Seed {
    tool: String,
    subject: Option<String>,
}

/// A handler's client in a call that is, or may become, a task.
pub(in crate::mcp) struct TaskClient {
    tasks: Arc<Tasks>,
    /// Where questions go before the call is a task (`task_start = "handler"`).
    before: Option<Arc<dyn ClientRequests>>,
    parked: Arc<Parked>,
    seed: Seed,
    /// The call's cancellation, the task's once it is one.
    cancel: CancellationToken,
    /// The client's session, where its status changes are announced.
    announce: Option<Peer<RoleServer>>,
    /// Where the call is told that the handler turned it into a task.
    promote: Mutex<Option<oneshot::Sender<CreateTaskResult>>>,
}

/// The questions of a task: each waits in the record for its answer.
struct Parked {
    tasks: Arc<Tasks>,
    declared: Declared,
    /// The task, once there is one.
    task: OnceLock<(String, Arc<Running>)>,
    /// The keys of its questions.
    keys: Keys,
}

impl TaskClient {
    /// The client of a call of `tool` by `subject` whose client declared `declared`;
    /// questions go to `before` until the call is a task.
    pub(in crate::mcp) fn new(
        tasks: Arc<Tasks>,
        declared: Declared,
        before: Option<Arc<dyn ClientRequests>>,
        tool: &str,
        subject: Option<&str>,
        cancel: CancellationToken,
        announce: Option<Peer<RoleServer>>,
    ) -> Self {
        TaskClient {
            parked: Arc::new(Parked {
                tasks: tasks.clone(),
                declared,
                task: OnceLock::new(),
                keys: Keys::default(),
            }),
            tasks,
            before,
            seed: Seed {
                tool: tool.to_owned(),
                subject: subject.map(str::to_owned),
            },
            cancel,
            announce,
            promote: Mutex::new(None),
        }
    }

    /// Makes the call a task now (`task_start = "call"`): its answer to the client, and
    /// what [`Tasks::finish`] needs.
    pub(in crate::mcp) async fn start(
        &self,
    ) -> Result<(CreateTaskResult, String, Arc<Running>), ErrorData> {
        let (created, running) = self
            .tasks
            .create(
                &self.seed.tool,
                self.seed.subject.as_deref(),
                self.cancel.clone(),
                self.announce.clone(),
            )
            .await?;
        let id = created.task.task_id.clone();
        let _ = self.parked.task.set((id.clone(), running.clone()));
        Ok((created, id, running))
    }

    /// Lets the handler make the call a task (`task_start = "handler"`): the call learns
    /// it through `promoted`.
    pub(in crate::mcp) fn offer(&self, promoted: oneshot::Sender<CreateTaskResult>) {
        *self.promote.lock().unwrap_or_else(|e| e.into_inner()) = Some(promoted);
    }

    /// The task the call became, if it did.
    pub(in crate::mcp) fn task(&self) -> Option<(String, Arc<Running>)> {
        self.parked.task.get().cloned()
    }

    fn is_task(&self) -> bool {
        self.parked.task.get().is_some()
    }

    /// Where a question goes now.
    fn now(&self) -> &dyn ClientRequests {
        match (&self.before, self.is_task()) {
            (Some(before), false) => before.as_ref(),
            _ => self.parked.as_ref(),
        }
    }
}

impl ClientRequests for TaskClient {
    fn can_sample(&self) -> bool {
        self.now().can_sample()
    }

    fn sample(
        &self,
        request: SamplingRequest,
    ) -> BoxFuture<'_, Result<SamplingResponse, CommandError>> {
        self.now().sample(request)
    }

    fn sample_keyed(
        &self,
        key: Option<&str>,
        request: SamplingRequest,
    ) -> BoxFuture<'_, Result<SamplingResponse, CommandError>> {
        self.now().sample_keyed(key, request)
    }

    fn can_elicit(&self) -> bool {
        self.now().can_elicit()
    }

    fn elicit(
        &self,
        message: String,
        schema: Value,
    ) -> BoxFuture<'_, Result<Elicitation<Value>, CommandError>> {
        self.now().elicit(message, schema)
    }

    fn elicit_keyed(
        &self,
        key: Option<&str>,
        message: String,
        schema: Value,
    ) -> BoxFuture<'_, Result<Elicitation<Value>, CommandError>> {
        self.now().elicit_keyed(key, message, schema)
    }

    fn can_list_roots(&self) -> bool {
        self.now().can_list_roots()
    }

    fn list_roots(&self, key: Option<&str>) -> BoxFuture<'_, Result<Vec<Root>, CommandError>> {
        self.now().list_roots(key)
    }

    fn continue_as_task(&self) -> BoxFuture<'_, bool> {
        Box::pin(async move {
            if self.is_task() {
                return true;
            }
            let Some(promoted) = self
                .promote
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
            else {
                return false;
            };
            let (created, id, running) = match self.start().await {
                Ok(started) => started,
                Err(error) => {
                    tracing::warn!(error = %error.message, "a call could not continue as a task");
                    return false;
                }
            };
            if promoted.send(created).is_err() {
                // The call ended meanwhile (cancelled): the task will never be read.
                running.cancel.cancel();
                let end = |record: &mut TaskRecord| Ended::Cancelled.apply(record);
                let _ = self.tasks.store.update(&id, &end).await;
                self.tasks
                    .running
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id);
                return false;
            }
            true
        })
    }
}

impl Parked {
    /// Writes the question into the record and waits for its answer.
    async fn park(
        &self,
        key: String,
        method: &'static str,
        params: Value,
    ) -> Result<Value, CommandError> {
        let Some((id, running)) = self.task.get().cloned() else {
            return Err(CommandError::internal("a task's question before the task"));
        };
        let question = json!({"method": method, "params": params});
        let ask = |record: &mut TaskRecord| {
            if !record.answers.contains_key(&key) {
                record.input_requests.insert(key.clone(), question.clone());
                record.state = TaskState::InputRequired;
                record.touch();
            }
        };
        let store = &self.tasks.store;
        let asked = store
            .update(&id, &ask)
            .await
            .map_err(|error| store_error(&error))?
            .ok_or_else(gone)?;
        running.announce(&asked);
        loop {
            let answered = running.answered.notified();
            tokio::pin!(answered);
            answered.as_mut().enable();
            let taken = Mutex::new(None);
            let take = |record: &mut TaskRecord| {
                let answer = record.answers.remove(&key);
                if answer.is_some() && record.input_requests.is_empty() {
                    record.state = TaskState::Working;
                    record.touch();
                }
                *taken.lock().unwrap_or_else(|e| e.into_inner()) = answer;
            };
            let record = store
                .update(&id, &take)
                .await
                .map_err(|error| store_error(&error))?
                .ok_or_else(gone)?;
            if let Some(answer) = taken.into_inner().unwrap_or_else(|e| e.into_inner()) {
                if record.state == TaskState::Working {
                    running.announce(&record);
                }
                return Ok(answer);
            }
            tokio::select! {
                () = &mut answered => {}
                () = running.cancel.cancelled() => {
                    return Err(CommandError::new(
                        codes::CANCELLED,
                        "The task was cancelled while it waited for the client's answer",
                    ));
                }
                () = tokio::time::sleep(SHARED_POLL), if store.is_shared() => {}
            }
        }
    }
}

impl Asker for Parked {
    fn declared(&self) -> Declared {
        self.declared
    }

    fn key(&self, given: Option<&str>, kind: &str, params: &Value) -> String {
        self.keys.key(given, kind, params)
    }

    fn answer(
        &self,
        key: String,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<'_, Result<Value, CommandError>> {
        Box::pin(self.park(key, method, params))
    }

    fn invalid(&self, key: &str, what: &str) -> CommandError {
        CommandError::new(
            codes::VALIDATION_ERROR,
            format!("The client's answer under `{key}` is not {what}"),
        )
        .with_retryable(false)
    }
}

fn store_error(error: &crate::tasks::TaskStoreError) -> CommandError {
    CommandError::new(
        codes::SESSION_STORE_UNAVAILABLE,
        format!("The task store is unavailable: {}", error.message()),
    )
    .with_retryable(true)
}

fn gone() -> CommandError {
    CommandError::new(
        codes::NOT_FOUND,
        "The task's record expired while its handler was still running",
    )
    .with_retryable(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::MemoryTaskStore;

    fn tasks() -> Arc<Tasks> {
        Arc::new(Tasks::new(
            Arc::new(MemoryTaskStore::new()),
            DEFAULT_TASK_TTL,
            DEFAULT_POLL_INTERVAL,
        ))
    }

    #[tokio::test]
    async fn a_task_is_seen_answered_and_cancelled_only_by_the_caller_that_started_it() {
        let tasks = tasks();
        let (created, _) = tasks
            .create("report", Some("alice"), CancellationToken::new(), None)
            .await
            .unwrap();
        let id = created.task.task_id;
        assert_eq!(
            tasks
                .get(&id, Some("alice"))
                .await
                .unwrap()
                .task
                .task
                .task_id,
            id
        );
        for other in [Some("mallory"), None] {
            let refused = tasks.get(&id, other).await.unwrap_err();
            assert_eq!(refused.code, ErrorCode::INVALID_PARAMS);
            // Told apart from an unknown task by nothing.
            let unknown = tasks.get("no-such-task", other).await.unwrap_err();
            assert_eq!(refused.code, unknown.code);
            assert!(tasks.cancel(&id, other).await.is_err());
            assert!(tasks.update(&id, other, &JsonObject::new()).await.is_err());
        }
        tasks.cancel(&id, Some("alice")).await.unwrap();
        let running = tasks.running(&id).unwrap();
        assert!(running.cancel.is_cancelled());
    }

    #[tokio::test]
    async fn a_question_waits_in_the_record_until_its_answer_comes() {
        let tasks = tasks();
        let client = Arc::new(TaskClient::new(
            tasks.clone(),
            Declared {
                elicitation: true,
                tasks: true,
                ..Declared::default()
            },
            None,
            "ask",
            None,
            CancellationToken::new(),
            None,
        ));
        let (_, id, _) = client.start().await.unwrap();
        let asking = {
            let client = client.clone();
            tokio::spawn(async move {
                let form = crate::client::confirmation_schema("Sure?");
                client
                    .elicit_keyed(Some("sure"), "Sure?".into(), form)
                    .await
            })
        };
        let asked = loop {
            let record = tasks.store.get(&id).await.unwrap().unwrap();
            if record.state == TaskState::InputRequired {
                break record;
            }
            tokio::task::yield_now().await;
        };
        assert_eq!(asked.input_requests["sure"]["method"], "elicitation/create");
        let mut answers = JsonObject::new();
        answers.insert(
            "sure".into(),
            json!({"action": "accept", "content": {"confirm": true}}),
        );
        tasks.update(&id, None, &answers).await.unwrap();
        let answer = asking.await.unwrap().unwrap();
        assert!(matches!(answer, Elicitation::Accept(content) if content["confirm"] == true));
        let record = tasks.store.get(&id).await.unwrap().unwrap();
        assert_eq!(record.state, TaskState::Working);
        assert!(record.input_requests.is_empty() && record.answers.is_empty());
    }
}
