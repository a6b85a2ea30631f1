//! [`Registry`]: the immutable, indexed catalog of every command linked into the binary.
//!
//! - `builder.rs`: [`RegistryBuilder`], which checks definitions into a registry;
//! - `contexts.rs`: context declarations and their resolved tree;
//! - `context_ops.rs`: the catalog entries of the context operations;
//! - `exposed.rs`: which commands one dispatcher exposes, and afd-discover's browse lists.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, LazyLock, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

mod builder;
mod context_ops;
mod contexts;
mod exposed;

pub use builder::{Problem, RegistryBuilder, RegistryError};
pub(crate) use context_ops::is_op;
pub use context_ops::{
    CONTEXT_OPS, ENTER, EXIT, EnterInput, ExitInput, LIST, ListInput, SUGGEST, SuggestInput,
};
pub use contexts::{ContextDef, ContextTree, Scope};
pub(crate) use exposed::{BrowseIndex, Exposed};

use crate::command::CommandDef;
use crate::error::{CommandError, codes};
use crate::similarity::{did_you_mean, find_similar};
use crate::validate::InputValidator;

/// How many "Did you mean" names a not-found error carries.
const MAX_SUGGESTIONS: usize = 3;

/// One command registration, submitted to `inventory` by `#[command]`.
#[doc(hidden)]
#[derive(Debug)]
pub struct Registration {
    def: &'static CommandDef,
}

impl Registration {
    /// Wraps a definition for `inventory::submit!`.
    pub const fn new(def: &'static CommandDef) -> Self {
        Registration { def }
    }
}

inventory::collect!(Registration);

/// A category's description, declared once with [`category!`](crate::category):
///
/// ```
/// afd_runtime::category!("billing", "Invoices, payments and refunds.");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CategoryDef {
    name: &'static str,
    description: &'static str,
    scopes: &'static [&'static str],
}

impl CategoryDef {
    /// A category description.
    pub const fn new(name: &'static str, description: &'static str) -> Self {
        CategoryDef {
            name,
            description,
            scopes: &[],
        }
    }

    /// Sets the OAuth scopes a caller needs for the category's commands that declare
    /// none of their own.
    #[must_use]
    pub const fn with_scopes(mut self, scopes: &'static [&'static str]) -> Self {
        self.scopes = scopes;
        self
    }

    /// The category's name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// What the category holds.
    pub const fn description(&self) -> &'static str {
        self.description
    }

    /// The scopes its commands need by default (empty: none).
    pub const fn scopes(&self) -> &'static [&'static str] {
        self.scopes
    }
}

inventory::collect!(CategoryDef);

/// Declares what a category holds; agents see it when they browse the catalog. With
/// `scopes(...)`, the OAuth scopes a caller needs for the category's commands that declare
/// none of their own (see [`auth`](crate::auth)); each is checked at compile time.
///
/// ```
/// afd_runtime::category!("todo", "Todo items: create, list, complete and delete them.");
/// afd_runtime::category!("refund", "Refunds: request, approve and list them.", scopes("refunds:read"));
/// ```
///
/// ```compile_fail
/// afd_runtime::category!("billing", "Invoices and refunds.", scopes("two words"));
/// ```
#[macro_export]
macro_rules! category {
    ($name:literal, $description:literal $(,)?) => {
        $crate::__private::inventory::submit! {
            $crate::CategoryDef::new($name, $description)
        }
    };
    ($name:literal, $description:literal, scopes($($scope:literal),+ $(,)?) $(,)?) => {
        const _: () = {
            $(::core::assert!(
                $crate::auth::is_scope_token($scope),
                "a scope is one OAuth scope token: no spaces, quotes or backslashes"
            );)+
        };
        $crate::__private::inventory::submit! {
            $crate::CategoryDef::new($name, $description).with_scopes(&[$($scope),+])
        }
    };
}

/// How several tags combine in [`Registry::by_tags`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TagMode {
    /// A command matches when it has any of the tags (the default).
    #[default]
    Any,
    /// A command matches when it has all of the tags.
    All,
}

/// A command in the registry: its static definition plus what the runtime derives from it
/// once, on first use (schemas, the compiled validator).
pub struct CommandEntry {
    def: &'static CommandDef,
    input_schema: OnceLock<Value>,
    output_schema: OnceLock<Option<Value>>,
    validator: OnceLock<Result<InputValidator, String>>,
}

impl CommandEntry {
    fn new(def: &'static CommandDef) -> Self {
        CommandEntry {
            def,
            input_schema: OnceLock::new(),
            output_schema: OnceLock::new(),
            validator: OnceLock::new(),
        }
    }

    /// The static definition.
    pub fn def(&self) -> &'static CommandDef {
        self.def
    }

    /// The command's name.
    pub fn name(&self) -> &'static str {
        self.def.name()
    }

    /// The full description.
    pub fn description(&self) -> &'static str {
        self.def.description()
    }

    /// The category (declared, or derived from the name).
    pub fn category(&self) -> &'static str {
        self.def.category()
    }

    /// The tags.
    pub fn tags(&self) -> &'static [&'static str] {
        self.def.tags()
    }

    /// Whether the command changes state.
    pub fn is_mutation(&self) -> bool {
        self.def.is_mutation()
    }

    /// The input JSON Schema, generated once.
    pub fn input_schema(&self) -> &Value {
        self.input_schema
            .get_or_init(|| self.def.generate_input_schema())
    }

    /// The input JSON Schema if it has been generated already (by
    /// [`input_schema`](Self::input_schema) or validation), without generating it.
    pub fn cached_input_schema(&self) -> Option<&Value> {
        self.input_schema.get()
    }

    /// The output JSON Schema, generated once, when the output type has one.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema
            .get_or_init(|| self.def.generate_output_schema())
            .as_ref()
    }

    /// Validates `input` against the input schema (the validator is compiled once).
    ///
    /// # Errors
    ///
    /// `VALIDATION_ERROR` listing every violation; `INTERNAL_ERROR` if the command's own
    /// schema does not compile.
    pub fn validate(&self, input: &Value) -> Result<(), CommandError> {
        let validator = self
            .validator
            .get_or_init(|| InputValidator::new(self.input_schema()));
        match validator {
            Ok(validator) => validator.validate(self.name(), input),
            Err(reason) => Err(CommandError::internal(format!(
                "the input schema of '{}' is not a valid JSON Schema: {reason}",
                self.name()
            ))),
        }
    }
}

impl fmt::Debug for CommandEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.def.fmt(f)
    }
}

/// How a name resolved in the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    /// The command's own name.
    Canonical,
    /// One of its aliases.
    Alias,
    /// One of its deprecated aliases: callers should move to the canonical name.
    DeprecatedAlias,
}

/// A name resolved to a command.
#[derive(Debug, Clone, Copy)]
pub struct Resolved<'r> {
    /// The command.
    pub entry: &'r CommandEntry,
    /// How the name matched.
    pub kind: NameKind,
}

/// A registry a dispatcher holds: the `'static` one most programs use, or one shared
/// by reference count (built at run time, as the gateway does).
#[derive(Clone)]
pub(crate) enum SharedRegistry {
    /// A registry that lives for the whole program, such as [`Registry::global`].
    Static(&'static Registry),
    /// A registry built at run time.
    Shared(Arc<Registry>),
}

impl std::ops::Deref for SharedRegistry {
    type Target = Registry;

    fn deref(&self) -> &Registry {
        match self {
            SharedRegistry::Static(registry) => registry,
            SharedRegistry::Shared(registry) => registry,
        }
    }
}

/// The catalog of commands: built once, immutable, indexed by name, alias, category and
/// tag. Commands are kept sorted by name, so every listing is deterministic.
///
/// Most programs use [`Registry::global`], built from every `#[command]` in the binary.
pub struct Registry {
    contexts: ContextTree,
    entries: Vec<CommandEntry>,
    names: HashMap<&'static str, (usize, NameKind)>,
    categories: BTreeMap<&'static str, Vec<usize>>,
    descriptions: HashMap<&'static str, &'static CategoryDef>,
    tags: BTreeMap<&'static str, Vec<usize>>,
}

static GLOBAL: LazyLock<Result<Registry, RegistryError>> =
    LazyLock::new(|| Registry::builder().with_inventory().build());

impl Registry {
    /// A builder, for registries assembled explicitly.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// The registry of every `#[command]` linked into the binary, built on first use.
    ///
    /// # Errors
    ///
    /// The [`RegistryError`] listing every name conflict.
    pub fn try_global() -> Result<&'static Registry, &'static RegistryError> {
        GLOBAL.as_ref()
    }

    /// The registry of every `#[command]` linked into the binary, built on first use.
    ///
    /// # Panics
    ///
    /// At start-up, when two commands claim one name: the message names both source
    /// locations. Use [`Registry::try_global`] to handle that yourself.
    pub fn global() -> &'static Registry {
        match Registry::try_global() {
            Ok(registry) => registry,
            Err(error) => panic!("{error}"),
        }
    }

    /// Every command, sorted by name.
    pub fn commands(&self) -> &[CommandEntry] {
        &self.entries
    }

    /// The number of commands.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the registry has no commands.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The command with this name or alias.
    pub fn get(&self, name: &str) -> Option<&CommandEntry> {
        self.lookup(name).map(|resolved| resolved.entry)
    }

    /// The command with this name or alias, and how the name matched.
    pub fn lookup(&self, name: &str) -> Option<Resolved<'_>> {
        self.names.get(name).map(|&(index, kind)| Resolved {
            entry: &self.entries[index],
            kind,
        })
    }

    /// The command with this name or alias.
    ///
    /// # Errors
    ///
    /// `COMMAND_NOT_FOUND` with "Did you mean" suggestions.
    pub fn resolve(&self, name: &str) -> Result<Resolved<'_>, CommandError> {
        self.lookup(name).ok_or_else(|| self.not_found(name))
    }

    /// The `COMMAND_NOT_FOUND` error for `name`, with up to three similar names.
    pub fn not_found(&self, name: &str) -> CommandError {
        self.not_found_among(name, self.entries.iter().map(CommandEntry::name))
    }

    /// The `COMMAND_NOT_FOUND` error for `name`, with up to three similar names among
    /// `candidates`.
    pub(crate) fn not_found_among(
        &self,
        name: &str,
        candidates: impl IntoIterator<Item = &'static str>,
    ) -> CommandError {
        let similar = find_similar(name, candidates, MAX_SUGGESTIONS);
        CommandError::new(
            codes::COMMAND_NOT_FOUND,
            format!("No command named '{name}'"),
        )
        .with_suggestion(did_you_mean(
            similar.first().copied(),
            "Use afd-discover to list all commands.",
        ))
        .with_retryable(false)
        .with_details(json!({ "suggestions": similar }))
    }

    /// Up to `max` command names similar to `name` (normalised similarity >= 0.4).
    pub fn suggest(&self, name: &str, max: usize) -> Vec<&'static str> {
        find_similar(name, self.entries.iter().map(CommandEntry::name), max)
    }

    /// The commands of a category, in name order.
    pub fn by_category<'r>(
        &'r self,
        category: &str,
    ) -> impl Iterator<Item = &'r CommandEntry> + 'r {
        self.indexed(self.categories.get(category))
    }

    /// The commands carrying the tags, combined by `mode`, in name order. No tags matches
    /// every command.
    pub fn by_tags<'r>(&'r self, tags: &[&str], mode: TagMode) -> Vec<&'r CommandEntry> {
        if tags.is_empty() {
            return self.entries.iter().collect();
        }
        let mut lists: Vec<&[usize]> = tags
            .iter()
            .map(|tag| self.tags.get(tag).map_or(&[][..], Vec::as_slice))
            .collect();
        let mut hits: Vec<usize> = match mode {
            TagMode::Any => lists.concat(),
            TagMode::All => {
                lists.sort_by_key(|list| list.len());
                let (shortest, rest) = lists.split_first().expect("tags is not empty");
                shortest
                    .iter()
                    .copied()
                    .filter(|index| rest.iter().all(|list| list.binary_search(index).is_ok()))
                    .collect()
            }
        };
        hits.sort_unstable();
        hits.dedup();
        hits.into_iter().map(|index| &self.entries[index]).collect()
    }

    /// Every category with its command count, sorted.
    pub fn categories(&self) -> impl Iterator<Item = (&'static str, usize)> + '_ {
        self.categories
            .iter()
            .map(|(name, list)| (*name, list.len()))
    }

    /// The declared contexts, resolved.
    pub fn contexts(&self) -> &ContextTree {
        &self.contexts
    }

    /// The declared description of a category.
    pub fn category_description(&self, category: &str) -> Option<&'static str> {
        self.descriptions.get(category).map(|def| def.description())
    }

    /// The scopes a caller needs for a command: those it declares, else its category's
    /// default (`category!(..., scopes(...))`), else none.
    pub fn required_scopes(&self, def: &CommandDef) -> &'static [&'static str] {
        if !def.scopes().is_empty() {
            return def.scopes();
        }
        self.descriptions
            .get(def.category())
            .map_or(&[], |category| category.scopes())
    }

    /// Every tag with its command count, sorted.
    pub fn tags(&self) -> impl Iterator<Item = (&'static str, usize)> + '_ {
        self.tags.iter().map(|(name, list)| (*name, list.len()))
    }

    fn indexed<'r>(
        &'r self,
        list: Option<&'r Vec<usize>>,
    ) -> impl Iterator<Item = &'r CommandEntry> + 'r {
        list.into_iter()
            .flatten()
            .map(|&index| &self.entries[index])
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("commands", &self.entries.len())
            .field("categories", &self.categories.len())
            .field("tags", &self.tags.len())
            .finish()
    }
}
