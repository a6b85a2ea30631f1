//! The context operations as catalog entries: afd-context-list, afd-context-enter,
//! afd-context-exit and afd-context-suggest (category `context`), which every registry that
//! declares a context holds, and their inputs. What they do is in [`crate::contexts`]: the
//! call path runs them with the sessions of the dispatcher that serves them.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::contexts::Scope;
use crate::command::{CommandDef, ExecutionTime, HandlerFuture, SourceLocation};
use crate::command_context::CommandContext;
use crate::error::{CommandError, codes};
use crate::macro_support::input_schema;
use crate::result::CommandResult;

/// The category of the context operations.
pub const CATEGORY: &str = "context";

const fn here(line: u32) -> SourceLocation {
    SourceLocation {
        file: file!(),
        line,
        column: 1,
        module_path: module_path!(),
    }
}

/// afd-context-list.
pub static LIST: CommandDef = CommandDef::new(
    "afd-context-list",
    "List the contexts that scope which commands may be called, with the active one. Enter one with afd-context-enter.",
    without_dispatcher,
    input_schema::<ListInput>,
    here(line!()),
)
.with_title("List contexts")
.with_category(CATEGORY)
.with_execution_time(ExecutionTime::Instant);

/// afd-context-enter.
pub static ENTER: CommandDef = CommandDef::new(
    "afd-context-enter",
    "Enter a context: its commands become callable for this session, and afd-context-exit returns to the previous one. Returns the session handle to pass as `session` where the transport keeps no session.",
    without_dispatcher,
    input_schema::<EnterInput>,
    here(line!()),
)
.with_title("Enter a context")
.with_category(CATEGORY)
.with_errors(&[codes::CONTEXT_NOT_FOUND, codes::SESSION_NOT_FOUND])
.with_execution_time(ExecutionTime::Instant);

/// afd-context-exit.
pub static EXIT: CommandDef = CommandDef::new(
    "afd-context-exit",
    "Leave the active context and return to the one entered before it.",
    without_dispatcher,
    input_schema::<ExitInput>,
    here(line!()),
)
.with_title("Leave the context")
.with_category(CATEGORY)
.with_errors(&[codes::SESSION_NOT_FOUND])
.with_execution_time(ExecutionTime::Instant);

/// afd-context-suggest.
pub static SUGGEST: CommandDef = CommandDef::new(
    "afd-context-suggest",
    "Suggest the contexts that fit an intent, ranked by trigger keywords and by the names and descriptions of their commands.",
    without_dispatcher,
    input_schema::<SuggestInput>,
    here(line!()),
)
.with_title("Suggest a context")
.with_category(CATEGORY)
.with_execution_time(ExecutionTime::Instant);

/// The four context operations, added to every registry that declares a context.
pub static CONTEXT_OPS: [&CommandDef; 4] = [&LIST, &ENTER, &EXIT, &SUGGEST];

/// Whether `def` is one of the context operations.
pub(crate) fn is_op(def: &CommandDef) -> bool {
    CONTEXT_OPS.iter().any(|op| std::ptr::eq(*op, def))
}

/// The handler the definitions carry. A context operation reads and changes the sessions
/// of the dispatcher that runs it, so the call path runs it with them
/// (`crate::contexts::commands`); without a dispatcher there are no sessions to act on.
fn without_dispatcher(_input: Value, _ctx: CommandContext) -> HandlerFuture {
    Box::pin(std::future::ready(CommandResult::failure(
        CommandError::internal("context operations run through a Dispatcher, not Registry::call"),
    )))
}

/// The input of afd-context-list.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListInput {
    /// The session handle (optional where the transport keeps a session).
    #[serde(default)]
    pub session: Option<String>,
}

/// The input of afd-context-enter.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnterInput {
    /// The context to enter.
    #[schemars(length(min = 1))]
    pub context: String,
    /// `read-only` to refuse every mutation while in it (default `full`; a read-only
    /// context is always read-only).
    #[serde(default)]
    pub scope: Option<Scope>,
    /// The session handle; omit it to use the transport's session or to start a new one.
    #[serde(default)]
    pub session: Option<String>,
}

/// The input of afd-context-exit.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExitInput {
    /// The session handle (optional where the transport keeps a session).
    #[serde(default)]
    pub session: Option<String>,
}

/// The input of afd-context-suggest.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuggestInput {
    /// What the agent means to do, in words.
    #[schemars(length(min = 1, max = 2000))]
    pub intent: String,
    /// Most suggestions (default 3).
    #[serde(default)]
    #[schemars(range(min = 1, max = 20))]
    pub limit: Option<usize>,
    /// The session handle (optional).
    #[serde(default)]
    pub session: Option<String>,
}
