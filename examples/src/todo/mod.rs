//! The reference AFD todo contract (`todo-create` ... `todo-toggle-batch`) as `#[command]`
//! functions over a SQLite store.
//!
//! The store reaches the handlers as context state: `CommandContext::new().with_state(store)`.

mod store;

use afd_runtime::prelude::*;

use store::ListQuery;
pub use store::TodoStore;

/// How urgent a todo is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Whenever.
    Low,
    /// Soon (the default).
    #[default]
    Medium,
    /// First.
    High,
}

impl Priority {
    fn as_str(self) -> &'static str {
        match self {
            Priority::Low => "low",
            Priority::Medium => "medium",
            Priority::High => "high",
        }
    }

    fn parse(text: &str) -> Option<Priority> {
        match text {
            "low" => Some(Priority::Low),
            "medium" => Some(Priority::Medium),
            "high" => Some(Priority::High),
            _ => None,
        }
    }
}

/// A todo item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Todo {
    /// Unique identifier.
    pub id: String,
    /// What to do.
    pub title: String,
    /// More detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// How urgent.
    pub priority: Priority,
    /// Whether it is done.
    pub completed: bool,
    /// When it was created (ISO 8601).
    pub created_at: String,
    /// When it last changed (ISO 8601).
    pub updated_at: String,
    /// When it was completed (ISO 8601), while completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
}

/// Input of `todo-create`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateTodo {
    /// What to do.
    #[schemars(length(min = 1, max = 200))]
    pub title: String,
    /// More detail.
    #[schemars(length(max = 1000))]
    pub description: Option<String>,
    /// How urgent (default: medium).
    #[serde(default)]
    pub priority: Priority,
}

/// Create a new todo item. Priority defaults to medium.
#[command(
    blocking,
    title = "Create todo",
    category = "todo",
    tags("crud", "write"),
    mutation
)]
pub fn todo_create(input: CreateTodo, ctx: &CommandContext) -> CommandResult<Todo> {
    let created = ctx
        .state::<TodoStore>()
        .and_then(|store| store.create(&input.title, input.description.as_deref(), input.priority));
    match created {
        Ok(todo) => {
            let reasoning = format!(
                "Created todo '{}' with {} priority",
                todo.title,
                todo.priority.as_str()
            );
            CommandResult::success(todo)
                .with_reasoning(reasoning)
                .with_confidence(1.0)
        }
        Err(error) => CommandResult::failure(error),
    }
}

/// Field to sort `todo-list` by.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SortBy {
    /// Creation time (the default).
    #[default]
    CreatedAt,
    /// Last change.
    UpdatedAt,
    /// Priority (high > medium > low).
    Priority,
    /// Title, alphabetically.
    Title,
}

/// Sort direction.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SortOrder {
    /// Ascending.
    Asc,
    /// Descending (the default).
    #[default]
    Desc,
}

fn default_limit() -> u32 {
    20
}

/// Input of `todo-list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListTodos {
    /// Only completed (true) or pending (false) todos.
    pub completed: Option<bool>,
    /// Only this priority.
    pub priority: Option<Priority>,
    /// Text to find in the title or description.
    pub search: Option<String>,
    /// Sort field (default: createdAt).
    #[serde(default)]
    pub sort_by: SortBy,
    /// Sort direction (default: desc).
    #[serde(default)]
    pub sort_order: SortOrder,
    /// Page size, 1 to 100 (default 20).
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: u32,
    /// Todos to skip (default 0).
    #[serde(default)]
    pub offset: u32,
}

/// A page of todos.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TodoPage {
    /// The todos on this page.
    pub todos: Vec<Todo>,
    /// How many todos match the filters.
    pub total: u64,
    /// Whether more pages follow.
    pub has_more: bool,
}

/// List todos with filtering, sorting and pagination.
#[command(
    blocking,
    title = "List todos",
    category = "todo",
    tags("crud", "read")
)]
pub fn todo_list(input: ListTodos, ctx: &CommandContext) -> Result<TodoPage, CommandError> {
    let order_by = match input.sort_by {
        SortBy::CreatedAt => "created_at",
        SortBy::UpdatedAt => "updated_at",
        SortBy::Priority => "CASE priority WHEN 'low' THEN 0 WHEN 'medium' THEN 1 ELSE 2 END",
        SortBy::Title => "lower(title)",
    };
    let direction = match input.sort_order {
        SortOrder::Asc => "ASC",
        SortOrder::Desc => "DESC",
    };
    let query = ListQuery {
        completed: input.completed,
        priority: input.priority,
        search: input.search.as_deref(),
        order_by,
        direction,
        limit: input.limit,
        offset: input.offset,
    };
    let (todos, total) = ctx.state::<TodoStore>()?.list(&query)?;
    let has_more = u64::from(input.offset) + (todos.len() as u64) < total;
    Ok(TodoPage {
        todos,
        total,
        has_more,
    })
}

/// Input naming one todo.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TodoId {
    /// The todo's id.
    pub id: String,
}

/// Get a single todo by id.
#[command(
    blocking,
    title = "Get todo",
    category = "todo",
    tags("crud", "read"),
    errors("NOT_FOUND")
)]
pub fn todo_get(input: TodoId, ctx: &CommandContext) -> Result<Todo, CommandError> {
    ctx.state::<TodoStore>()?.get(&input.id)
}

/// Input of `todo-update`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct UpdateTodo {
    /// The todo's id.
    pub id: String,
    /// New title.
    #[schemars(length(min = 1, max = 200))]
    pub title: Option<String>,
    /// New description.
    #[schemars(length(max = 1000))]
    pub description: Option<String>,
    /// New priority.
    pub priority: Option<Priority>,
    /// New completion state.
    pub completed: Option<bool>,
}

/// Update a todo's fields. Fields left out keep their value.
#[command(
    blocking,
    title = "Update todo",
    category = "todo",
    tags("crud", "write"),
    mutation,
    idempotent,
    errors("NOT_FOUND", "NO_CHANGES")
)]
pub fn todo_update(input: UpdateTodo, ctx: &CommandContext) -> Result<Todo, CommandError> {
    if input.title.is_none()
        && input.description.is_none()
        && input.priority.is_none()
        && input.completed.is_none()
    {
        return Err(
            CommandError::new("NO_CHANGES", "No fields to update were provided")
                .with_suggestion("Pass at least one of title, description, priority or completed."),
        );
    }
    ctx.state::<TodoStore>()?.update(
        &input.id,
        input.title.as_deref(),
        input.description.as_deref(),
        input.priority,
        input.completed,
    )
}

/// Toggle a todo between completed and pending.
#[command(
    blocking,
    title = "Toggle todo",
    category = "todo",
    tags("write"),
    mutation,
    errors("NOT_FOUND")
)]
pub fn todo_toggle(input: TodoId, ctx: &CommandContext) -> Result<Todo, CommandError> {
    ctx.state::<TodoStore>()?.toggle(&input.id, None)
}

/// Result of `todo-delete`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Deleted {
    /// Always true on success.
    pub deleted: bool,
    /// The deleted todo's id.
    pub id: String,
}

/// Delete a todo permanently.
#[command(
    blocking,
    title = "Delete todo",
    category = "todo",
    tags("crud", "write"),
    mutation,
    destructive,
    confirm_prompt = "This will delete todo {id}. Continue?",
    errors("NOT_FOUND")
)]
pub fn todo_delete(input: TodoId, ctx: &CommandContext) -> Result<Deleted, CommandError> {
    ctx.state::<TodoStore>()?.delete(&input.id)?;
    Ok(Deleted {
        deleted: true,
        id: input.id,
    })
}

/// Result of `todo-clear`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Cleared {
    /// Todos removed.
    pub cleared: u64,
    /// Todos left.
    pub remaining: u64,
}

/// Clear all completed todos.
#[command(
    blocking,
    title = "Clear completed todos",
    category = "todo",
    tags("write"),
    mutation,
    destructive,
    confirm_prompt = "This will delete every completed todo. Continue?"
)]
pub fn todo_clear(ctx: &CommandContext) -> Result<Cleared, CommandError> {
    let (cleared, remaining) = ctx.state::<TodoStore>()?.clear_completed()?;
    Ok(Cleared { cleared, remaining })
}

/// Todo counts by priority.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ByPriority {
    /// Low-priority todos.
    pub low: u64,
    /// Medium-priority todos.
    pub medium: u64,
    /// High-priority todos.
    pub high: u64,
}

/// Result of `todo-stats`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// All todos.
    pub total: u64,
    /// Completed todos.
    pub completed: u64,
    /// Pending todos.
    pub pending: u64,
    /// Counts by priority.
    pub by_priority: ByPriority,
    /// Completed / total (0 when there are none).
    pub completion_rate: f64,
}

/// Get todo statistics: totals, completion and counts by priority.
#[command(blocking, title = "Todo statistics", category = "todo", tags("read"))]
pub fn todo_stats(ctx: &CommandContext) -> Result<Stats, CommandError> {
    let (total, completed, low, medium, high) = ctx.state::<TodoStore>()?.counts()?;
    let completion_rate = if total == 0 {
        0.0
    } else {
        completed as f64 / total as f64
    };
    Ok(Stats {
        total,
        completed,
        pending: total - completed,
        by_priority: ByPriority { low, medium, high },
        completion_rate,
    })
}

/// Counts of a batch operation.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BatchSummary {
    /// Items requested.
    pub total: usize,
    /// Items that succeeded.
    pub success_count: usize,
    /// Items that failed.
    pub failure_count: usize,
}

/// One item of a batch that failed.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BatchFailure {
    /// The item's position in the request.
    pub index: usize,
    /// The item's id, when it named one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Why it failed.
    #[schemars(with = "serde_json::Value")]
    pub error: CommandError,
}

/// Result of the batch commands that return todos.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TodoBatch {
    /// The todos that succeeded.
    pub succeeded: Vec<Todo>,
    /// The items that failed.
    pub failed: Vec<BatchFailure>,
    /// Counts.
    pub summary: BatchSummary,
}

fn summarise<T>(
    results: Vec<(Option<String>, Result<T, CommandError>)>,
) -> (Vec<T>, Vec<BatchFailure>, BatchSummary) {
    let total = results.len();
    let mut succeeded = Vec::new();
    let mut failed = Vec::new();
    for (index, (id, result)) in results.into_iter().enumerate() {
        match result {
            Ok(item) => succeeded.push(item),
            Err(error) => failed.push(BatchFailure { index, id, error }),
        }
    }
    let summary = BatchSummary {
        total,
        success_count: succeeded.len(),
        failure_count: failed.len(),
    };
    (succeeded, failed, summary)
}

/// Input of `todo-create-batch`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateTodos {
    /// The todos to create.
    pub todos: Vec<CreateTodo>,
}

/// Create several todos at once; each succeeds or fails on its own.
#[command(
    blocking,
    title = "Create todos",
    category = "todo",
    tags("batch", "write"),
    mutation
)]
pub fn todo_create_batch(
    input: CreateTodos,
    ctx: &CommandContext,
) -> Result<TodoBatch, CommandError> {
    let store = ctx.state::<TodoStore>()?;
    let results = input
        .todos
        .iter()
        .map(|todo| {
            (
                None,
                store.create(&todo.title, todo.description.as_deref(), todo.priority),
            )
        })
        .collect();
    let (succeeded, failed, summary) = summarise(results);
    Ok(TodoBatch {
        succeeded,
        failed,
        summary,
    })
}

/// Input naming several todos.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TodoIds {
    /// The todos' ids.
    pub ids: Vec<String>,
}

/// Result of `todo-delete-batch`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeletedBatch {
    /// The ids deleted.
    pub deleted_ids: Vec<String>,
    /// The ids that could not be deleted.
    pub failed: Vec<BatchFailure>,
    /// Counts.
    pub summary: BatchSummary,
}

/// Delete several todos at once; unknown ids are reported, the rest deleted.
#[command(
    title = "Delete todos",
    category = "todo",
    tags("batch", "write"),
    mutation,
    destructive,
    confirm_prompt = "This will delete {ids}. Continue?"
)]
pub async fn todo_delete_batch(
    input: TodoIds,
    ctx: &CommandContext,
) -> Result<DeletedBatch, CommandError> {
    let store = ctx.state::<TodoStore>()?;
    let total = input.ids.len() as f64;
    let mut results = Vec::with_capacity(input.ids.len());
    for (done, id) in input.ids.iter().enumerate() {
        results.push((Some(id.clone()), store.delete(id).map(|()| id.clone())));
        // Whoever runs the call sees how far along it is: an MCP client that asked for
        // progress, a bar on the command line.
        ctx.report_progress(
            (done + 1) as f64,
            Some(total),
            Some(format!("deleted {id}")),
        )
        .await;
    }
    let (deleted_ids, failed, summary) = summarise(results);
    Ok(DeletedBatch {
        deleted_ids,
        failed,
        summary,
    })
}

/// Input of `todo-toggle-batch`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ToggleTodos {
    /// The todos' ids.
    pub ids: Vec<String>,
    /// Set every todo to this state instead of flipping each.
    pub completed: Option<bool>,
}

/// Toggle several todos at once, or set them all to one state.
#[command(
    blocking,
    title = "Toggle todos",
    category = "todo",
    tags("batch", "write"),
    mutation
)]
pub fn todo_toggle_batch(
    input: ToggleTodos,
    ctx: &CommandContext,
) -> Result<TodoBatch, CommandError> {
    let store = ctx.state::<TodoStore>()?;
    let results = input
        .ids
        .iter()
        .map(|id| (Some(id.clone()), store.toggle(id, input.completed)))
        .collect();
    let (succeeded, failed, summary) = summarise(results);
    Ok(TodoBatch {
        succeeded,
        failed,
        summary,
    })
}

/// Every todo command, for explicit registration (`Registry::builder().register_all(...)`).
pub const COMMANDS: [&afd_runtime::CommandDef; 11] = [
    todo_create::COMMAND,
    todo_list::COMMAND,
    todo_get::COMMAND,
    todo_update::COMMAND,
    todo_toggle::COMMAND,
    todo_delete::COMMAND,
    todo_clear::COMMAND,
    todo_stats::COMMAND,
    todo_create_batch::COMMAND,
    todo_delete_batch::COMMAND,
    todo_toggle_batch::COMMAND,
];

/// A registry of the todo commands alone (the binary may link other apps' commands and
/// contexts; this one holds exactly the todo app).
pub fn registry() -> &'static afd_runtime::Registry {
    static REGISTRY: std::sync::LazyLock<afd_runtime::Registry> = std::sync::LazyLock::new(|| {
        afd_runtime::Registry::builder()
            .register_all(COMMANDS)
            .build()
            .expect("the todo commands have distinct names")
    });
    &REGISTRY
}

/// A context carrying `store`, ready for `Registry::call`.
pub fn context(store: TodoStore) -> CommandContext {
    CommandContext::new().with_state(store)
}
