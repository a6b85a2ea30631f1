//! Prompts an app declares with `#[prompt]`: a name, a description, arguments read from a
//! struct's schema (names, descriptions, which are required), the messages the function
//! returns (a role and a [`Content`] block each: text, an image, an embedded resource),
//! completions for its arguments, and [`Prompts`], the set of them a server serves. Also
//! what the attribute expands to.
//!
//! ```
//! use afd_runtime::prelude::*;
//! use afd_runtime::prompt::{PromptMessage, Prompts};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Review {
//!     /// The code to review.
//!     code: String,
//!     /// What to look for (optional).
//!     focus: Option<String>,
//! }
//!
//! /// Ask for a code review.
//! #[prompt(name = "code_review")]
//! fn code_review(args: Review) -> Vec<PromptMessage> {
//!     let focus = args.focus.unwrap_or_else(|| "anything".to_owned());
//!     vec![PromptMessage::user(format!("Review this code for {focus}:\n{}", args.code))]
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let prompts = Prompts::global();
//! let review = prompts.get("code_review").unwrap();
//! assert_eq!(review.arguments()[0].name, "code");
//! assert!(review.arguments()[0].required && !review.arguments()[1].required);
//!
//! let args = json!({"code": "fn main() {}"}).as_object().unwrap().clone();
//! let messages = prompts.render("code_review", args, CommandContext::new()).await.unwrap();
//! assert!(messages[0].content.as_text().unwrap().starts_with("Review this code for anything"));
//!
//! let missing = prompts.render("code_review", Default::default(), CommandContext::new()).await;
//! assert_eq!(missing.unwrap_err().message, "missing required argument 'code' for prompt 'code_review'");
//! # });
//! ```

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::OnceLock;

use futures_util::FutureExt as _;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::command::SourceLocation;
use crate::command_context::CommandContext;
use crate::completion::{self, CompleteFn, Completion, CompletionArgs};
use crate::content::Content;
use crate::declared::{DeclarationError, at};
use crate::error::{CommandError, codes};

/// Who speaks a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant (the model).
    Assistant,
}

/// One message of a prompt: who says it, and a content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: Content,
}

impl PromptMessage {
    /// A message said by `role`.
    pub fn new(role: Role, content: impl Into<Content>) -> Self {
        PromptMessage {
            role,
            content: content.into(),
        }
    }

    /// A message from the user: `PromptMessage::user("Summarise this")`.
    pub fn user(content: impl Into<Content>) -> Self {
        PromptMessage::new(Role::User, content)
    }

    /// A message from the assistant.
    pub fn assistant(content: impl Into<Content>) -> Self {
        PromptMessage::new(Role::Assistant, content)
    }
}

/// One argument a prompt takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PromptArgument {
    /// Its name (the struct field's, as serialised).
    pub name: String,
    /// What it is (the field's doc comment).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    pub required: bool,
}

/// What rendering a prompt returns.
pub type PromptFuture =
    Pin<Box<dyn Future<Output = Result<Vec<PromptMessage>, CommandError>> + Send>>;

/// The type-erased function of a declared prompt: its arguments (checked) and a context.
pub type RenderFn = fn(Map<String, Value>, CommandContext) -> PromptFuture;

/// A declared prompt. Built by `#[prompt]`; const-constructible.
#[derive(Debug, Clone, Copy)]
pub struct PromptDef {
    name: &'static str,
    title: Option<&'static str>,
    description: &'static str,
    arguments_schema: Option<fn() -> Value>,
    render: RenderFn,
    completions: &'static [(&'static str, CompleteFn)],
    location: SourceLocation,
}

impl PromptDef {
    /// A prompt; `arguments_schema` is the JSON Schema of its arguments' struct (`None`: no
    /// arguments).
    pub const fn new(
        name: &'static str,
        description: &'static str,
        arguments_schema: Option<fn() -> Value>,
        render: RenderFn,
        location: SourceLocation,
    ) -> Self {
        PromptDef {
            name,
            title: None,
            description,
            arguments_schema,
            render,
            completions: &[],
            location,
        }
    }

    /// With a human-readable title.
    #[must_use]
    pub const fn with_title(mut self, title: &'static str) -> Self {
        self.title = Some(title);
        self
    }

    /// With completion functions for arguments, by argument name.
    #[must_use]
    pub const fn with_completions(
        mut self,
        completions: &'static [(&'static str, CompleteFn)],
    ) -> Self {
        self.completions = completions;
        self
    }

    /// The name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Where it is declared.
    pub fn location(&self) -> &SourceLocation {
        &self.location
    }
}

/// A prompt as served: its declaration and its arguments, read from the schema once.
#[derive(Debug, Clone)]
pub struct PromptEntry {
    def: &'static PromptDef,
    arguments: Vec<PromptArgument>,
}

impl PromptEntry {
    /// The name.
    pub fn name(&self) -> &'static str {
        self.def.name
    }

    /// The title, if declared.
    pub fn title(&self) -> Option<&'static str> {
        self.def.title
    }

    /// The description.
    pub fn description(&self) -> &'static str {
        self.def.description
    }

    /// The arguments, in the struct's order.
    pub fn arguments(&self) -> &[PromptArgument] {
        &self.arguments
    }
}

/// One prompt registration, submitted to `inventory` by `#[prompt]`.
#[doc(hidden)]
#[derive(Debug)]
pub struct PromptRegistration {
    def: &'static PromptDef,
}

impl PromptRegistration {
    /// Wraps a definition for `inventory::submit!`.
    pub const fn new(def: &'static PromptDef) -> Self {
        PromptRegistration { def }
    }
}

inventory::collect!(PromptRegistration);

/// The declared prompts a server serves, sorted by name.
#[derive(Debug, Clone, Default)]
pub struct Prompts {
    entries: Vec<PromptEntry>,
}

impl Prompts {
    /// Every `#[prompt]` linked into the binary, built once.
    ///
    /// # Panics
    ///
    /// When the declarations conflict (see [`try_global`](Self::try_global)).
    pub fn global() -> &'static Prompts {
        match Prompts::try_global() {
            Ok(prompts) => prompts,
            Err(error) => panic!("{error}"),
        }
    }

    /// Every `#[prompt]` linked into the binary, or what is wrong with them.
    ///
    /// # Errors
    ///
    /// Two prompts share a name, or a completion names an argument the prompt lacks.
    pub fn try_global() -> Result<&'static Prompts, DeclarationError> {
        static GLOBAL: OnceLock<Result<Prompts, DeclarationError>> = OnceLock::new();
        GLOBAL
            .get_or_init(|| {
                Prompts::from_defs(
                    inventory::iter::<PromptRegistration>
                        .into_iter()
                        .map(|registration| registration.def),
                )
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The given declarations (explicit registration: `my_prompt::PROMPT`).
    ///
    /// # Errors
    ///
    /// Two prompts share a name, or a completion names an argument the prompt lacks.
    pub fn from_defs(
        defs: impl IntoIterator<Item = &'static PromptDef>,
    ) -> Result<Prompts, DeclarationError> {
        let mut problems = Vec::new();
        let mut entries: Vec<PromptEntry> = Vec::new();
        for def in defs {
            if let Some(first) = entries.iter().find(|entry| entry.def.name == def.name) {
                problems.push(format!(
                    "two prompts are named `{}`: at {} and at {}",
                    def.name,
                    at(&first.def.location),
                    at(&def.location)
                ));
                continue;
            }
            let arguments = def
                .arguments_schema
                .map(|schema| arguments(&schema()))
                .unwrap_or_default();
            for (name, _) in def.completions {
                if !arguments.iter().any(|argument| argument.name == *name) {
                    problems.push(format!(
                        "the prompt `{}` completes `{name}`, which is not one of its arguments (at {})",
                        def.name,
                        at(&def.location)
                    ));
                }
            }
            entries.push(PromptEntry { def, arguments });
        }
        DeclarationError::check(problems)?;
        entries.sort_by_key(|entry| entry.def.name);
        Ok(Prompts { entries })
    }

    /// Whether nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every prompt, sorted by name.
    pub fn list(&self) -> &[PromptEntry] {
        &self.entries
    }

    /// The prompt called `name`.
    pub fn get(&self, name: &str) -> Option<&PromptEntry> {
        self.entries.iter().find(|entry| entry.def.name == name)
    }

    fn entry(&self, name: &str) -> Result<&PromptEntry, CommandError> {
        self.get(name).ok_or_else(|| {
            let similar = crate::similarity::find_similar(
                name,
                self.entries.iter().map(PromptEntry::name),
                3,
            );
            let suggestion = match similar.first() {
                Some(close) => {
                    format!("Did you mean '{close}'? List the prompts with prompts/list.")
                }
                None => "List the prompts with prompts/list.".to_owned(),
            };
            CommandError::new(codes::NOT_FOUND, format!("no prompt named '{name}'"))
                .with_suggestion(suggestion)
        })
    }

    /// The messages of the prompt `name` for `arguments`.
    ///
    /// # Errors
    ///
    /// `NOT_FOUND` for an unknown prompt; `VALIDATION_ERROR` for a missing required
    /// argument, an unknown one, or one its field cannot hold; what the function returned;
    /// `INTERNAL_ERROR` when it panicked.
    pub async fn render(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        context: CommandContext,
    ) -> Result<Vec<PromptMessage>, CommandError> {
        let entry = self.entry(name)?;
        check_arguments(entry, &arguments)?;
        match AssertUnwindSafe((entry.def.render)(arguments, context))
            .catch_unwind()
            .await
        {
            Ok(rendered) => rendered,
            Err(_) => {
                tracing::error!(prompt = %name, "a prompt's function panicked");
                Err(CommandError::internal(format!(
                    "the prompt '{name}' failed inside the server"
                )))
            }
        }
    }

    /// Completes the argument `argument` of the prompt `name` for what the user typed, with
    /// no other argument chosen yet.
    ///
    /// # Errors
    ///
    /// `NOT_FOUND` for an unknown prompt or argument.
    pub fn complete(
        &self,
        name: &str,
        argument: &str,
        typed: &str,
    ) -> Result<Completion, CommandError> {
        self.complete_with(name, argument, typed, &CompletionArgs::new())
    }

    /// Completes the argument `argument` of the prompt `name` for what the user typed,
    /// given the arguments already chosen (`args`).
    ///
    /// # Errors
    ///
    /// `NOT_FOUND` for an unknown prompt or argument.
    pub fn complete_with(
        &self,
        name: &str,
        argument: &str,
        typed: &str,
        args: &CompletionArgs,
    ) -> Result<Completion, CommandError> {
        let entry = self.entry(name)?;
        if !entry.arguments.iter().any(|known| known.name == argument) {
            return Err(CommandError::new(
                codes::NOT_FOUND,
                format!("the prompt '{name}' has no argument '{argument}'"),
            )
            .with_suggestion(argument_list(entry)));
        }
        Ok(completion::complete(
            entry.def.completions,
            argument,
            typed,
            args,
        ))
    }
}

fn argument_list(entry: &PromptEntry) -> String {
    if entry.arguments.is_empty() {
        return format!("The prompt '{}' takes no arguments.", entry.name());
    }
    let names: Vec<&str> = entry.arguments.iter().map(|a| a.name.as_str()).collect();
    format!("Its arguments: {}.", names.join(", "))
}

/// Every required argument given, and no unknown one.
fn check_arguments(entry: &PromptEntry, given: &Map<String, Value>) -> Result<(), CommandError> {
    let name = entry.name();
    for argument in &entry.arguments {
        if argument.required && given.get(&argument.name).is_none_or(Value::is_null) {
            return Err(CommandError::new(
                codes::VALIDATION_ERROR,
                format!(
                    "missing required argument '{}' for prompt '{name}'",
                    argument.name
                ),
            )
            .with_suggestion(argument_list(entry)));
        }
    }
    if let Some(unknown) = given.keys().find(|key| {
        !entry
            .arguments
            .iter()
            .any(|argument| &argument.name == *key)
    }) {
        return Err(CommandError::new(
            codes::VALIDATION_ERROR,
            format!("the prompt '{name}' has no argument '{unknown}'"),
        )
        .with_suggestion(argument_list(entry)));
    }
    Ok(())
}

/// The arguments a struct's schema describes: its properties, in order.
fn arguments(schema: &Value) -> Vec<PromptArgument> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema["properties"]
        .as_object()
        .map(|properties| {
            properties
                .iter()
                .map(|(name, property)| PromptArgument {
                    name: name.clone(),
                    description: property["description"].as_str().map(str::to_owned),
                    required: required.contains(&name.as_str()),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A type whose schema gives a prompt's arguments.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold a prompt's arguments: it has no JSON Schema",
    label = "the arguments type must implement `schemars::JsonSchema`",
    note = "add `#[derive(JsonSchema)]` to `{Self}` (the derive is in `afd_runtime::prelude`)"
)]
pub trait PromptArgumentsSchema: JsonSchema {}

#[diagnostic::do_not_recommend]
impl<T: JsonSchema> PromptArgumentsSchema for T {}

/// A type a prompt's arguments are decoded into.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold a prompt's arguments: it cannot be deserialised",
    label = "the arguments type must implement `serde::Deserialize`",
    note = "add `#[derive(Deserialize)]` to `{Self}` (the derive is in `afd_runtime::prelude`)"
)]
pub trait PromptArgumentsDecode: DeserializeOwned {}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned> PromptArgumentsDecode for T {}

/// A value a prompt's function returns: messages, one message, or text (one user message).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned by a prompt",
    label = "a prompt returns its messages",
    note = "return `Vec<PromptMessage>`, `PromptMessage`, `String`, or a `Result` of one of them with an error that converts into `CommandError`"
)]
pub trait IntoPromptMessages {
    /// The messages.
    ///
    /// # Errors
    ///
    /// The function's own error.
    fn into_messages(self) -> Result<Vec<PromptMessage>, CommandError>;
}

impl IntoPromptMessages for Vec<PromptMessage> {
    fn into_messages(self) -> Result<Vec<PromptMessage>, CommandError> {
        Ok(self)
    }
}

impl IntoPromptMessages for PromptMessage {
    fn into_messages(self) -> Result<Vec<PromptMessage>, CommandError> {
        Ok(vec![self])
    }
}

impl IntoPromptMessages for String {
    fn into_messages(self) -> Result<Vec<PromptMessage>, CommandError> {
        Ok(vec![PromptMessage::user(self)])
    }
}

impl IntoPromptMessages for &'static str {
    fn into_messages(self) -> Result<Vec<PromptMessage>, CommandError> {
        Ok(vec![PromptMessage::user(self)])
    }
}

impl<T: IntoPromptMessages, E: Into<CommandError>> IntoPromptMessages for Result<T, E> {
    fn into_messages(self) -> Result<Vec<PromptMessage>, CommandError> {
        self.map_err(Into::into)?.into_messages()
    }
}

/// The schema of a prompt's arguments (what `#[prompt]` expands to).
#[doc(hidden)]
pub fn prompt_arguments_schema<T: PromptArgumentsSchema>() -> Value {
    crate::macro_support::input_schema::<T>()
}

/// A prompt's arguments decoded into their struct (what `#[prompt]` expands to).
#[doc(hidden)]
pub fn prompt_arguments<T: PromptArgumentsDecode>(
    prompt: &str,
    arguments: Map<String, Value>,
) -> Result<T, CommandError> {
    crate::validate::deserialize_input(prompt, Value::Object(arguments))
}

/// The messages of what a prompt's function returned (what `#[prompt]` expands to).
#[doc(hidden)]
pub fn prompt_messages<T: IntoPromptMessages>(
    output: T,
) -> Result<Vec<PromptMessage>, CommandError> {
    output.into_messages()
}
