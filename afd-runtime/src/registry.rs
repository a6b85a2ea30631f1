//! [`Registry`]: the immutable, indexed catalog of every command linked into the binary.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{LazyLock, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::command::{CommandDef, SourceLocation};
use crate::contexts::{CONTEXT_OPS, ContextDef, ContextTree};
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
}

impl CategoryDef {
    /// A category description.
    pub const fn new(name: &'static str, description: &'static str) -> Self {
        CategoryDef { name, description }
    }

    /// The category's name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// What the category holds.
    pub const fn description(&self) -> &'static str {
        self.description
    }
}

inventory::collect!(CategoryDef);

/// Declares what a category holds; agents see it when they browse the catalog.
///
/// ```
/// afd_runtime::category!("todo", "Todo items: create, list, complete and delete them.");
/// ```
#[macro_export]
macro_rules! category {
    ($name:literal, $description:literal $(,)?) => {
        $crate::__private::inventory::submit! {
            $crate::CategoryDef::new($name, $description)
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

/// A problem that stops a registry from being built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// Two commands (or a command and another's alias) share a name.
    DuplicateName {
        /// The shared name.
        name: &'static str,
        /// Where the first holder is defined.
        first: SourceLocation,
        /// Where the second holder is defined.
        second: SourceLocation,
    },
    /// A category is described twice with different texts.
    ConflictingCategory {
        /// The category.
        name: &'static str,
    },
    /// A command names a context that nobody declares.
    UndeclaredContext {
        /// The command.
        command: &'static str,
        /// The context it names.
        context: &'static str,
        /// Where the command is defined.
        location: SourceLocation,
    },
    /// A context is nested under a context that nobody declares.
    UndeclaredParent {
        /// The context.
        context: &'static str,
        /// Its parent.
        parent: &'static str,
        /// Where the context is declared.
        location: SourceLocation,
    },
    /// Two different declarations share a context name.
    DuplicateContext {
        /// The name.
        name: &'static str,
        /// Where the first is declared.
        first: SourceLocation,
        /// Where the second is declared.
        second: SourceLocation,
    },
    /// Contexts are nested in a loop.
    ContextCycle {
        /// The contexts of the loop.
        contexts: Vec<&'static str>,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::DuplicateName {
                name,
                first,
                second,
            } => write!(
                f,
                "the name '{name}' is claimed twice: by the command defined at {first} and by \
                 the one defined at {second}; rename one (`#[command(name = \"...\")]`)"
            ),
            Problem::ConflictingCategory { name } => write!(
                f,
                "the category '{name}' is described twice, differently; keep one `category!(\"{name}\", ...)`"
            ),
            Problem::UndeclaredContext {
                command,
                context,
                location,
            } => write!(
                f,
                "the command '{command}' (defined at {location}) names the context '{context}', \
                 which is not declared; declare it with `afd_runtime::context! {{ name = \"{context}\", ... }}`"
            ),
            Problem::UndeclaredParent {
                context,
                parent,
                location,
            } => write!(
                f,
                "the context '{context}' (declared at {location}) is nested under '{parent}', \
                 which is not declared"
            ),
            Problem::DuplicateContext {
                name,
                first,
                second,
            } => write!(
                f,
                "the context '{name}' is declared twice: at {first} and at {second}; keep one"
            ),
            Problem::ContextCycle { contexts } => write!(
                f,
                "the contexts {} are nested in a loop; a context cannot be its own ancestor",
                contexts.join(" -> ")
            ),
        }
    }
}

/// Why a registry could not be built: every problem found, not just the first.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", display_problems(.problems))]
pub struct RegistryError {
    problems: Vec<Problem>,
}

fn display_problems(problems: &[Problem]) -> String {
    let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
    format!(
        "the command registry is invalid:\n  - {}",
        lines.join("\n  - ")
    )
}

impl RegistryError {
    /// Every problem found.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }
}

/// Collects definitions into a [`Registry`].
#[derive(Debug, Default)]
pub struct RegistryBuilder {
    defs: Vec<&'static CommandDef>,
    categories: Vec<&'static CategoryDef>,
    contexts: Vec<&'static ContextDef>,
}

impl RegistryBuilder {
    /// Adds one definition (for example `todo_create::COMMAND`).
    #[must_use]
    pub fn register(mut self, def: &'static CommandDef) -> Self {
        self.defs.push(def);
        self
    }

    /// Adds several definitions.
    #[must_use]
    pub fn register_all(mut self, defs: impl IntoIterator<Item = &'static CommandDef>) -> Self {
        self.defs.extend(defs);
        self
    }

    /// Adds a category description.
    #[must_use]
    pub fn category(mut self, category: &'static CategoryDef) -> Self {
        self.categories.push(category);
        self
    }

    /// Adds a context declaration (see [`context!`](crate::context)).
    #[must_use]
    pub fn context(mut self, context: &'static ContextDef) -> Self {
        self.contexts.push(context);
        self
    }

    /// Adds every context declared with `context!` in the linked crates, for a registry
    /// whose commands are registered explicitly.
    #[must_use]
    pub fn with_inventory_contexts(mut self) -> Self {
        self.contexts.extend(inventory::iter::<ContextDef>);
        self
    }

    /// Adds every command registered with `#[command]`, every category declared with
    /// `category!` and every context declared with `context!` in the linked crates.
    #[must_use]
    pub fn with_inventory(mut self) -> Self {
        self.categories.extend(inventory::iter::<CategoryDef>);
        self.contexts.extend(inventory::iter::<ContextDef>);
        self.register_all(inventory::iter::<Registration>.into_iter().map(|r| r.def))
    }

    /// Builds the registry. The same definition registered twice is kept once.
    ///
    /// # Errors
    ///
    /// Every name claimed by two different commands, with both source locations.
    pub fn build(mut self) -> Result<Registry, RegistryError> {
        self.contexts
            .sort_by_key(|c| (c.name(), c.source().file, c.source().line));
        self.contexts.dedup_by(|a, b| a == b);
        if !self.contexts.is_empty() {
            self.defs.extend(CONTEXT_OPS);
        }
        self.defs.sort_by(|a, b| {
            a.name()
                .cmp(b.name())
                .then(a.source().line.cmp(&b.source().line))
        });
        self.defs.dedup_by(|a, b| std::ptr::eq(*a, *b));

        let mut problems = Vec::new();
        let mut names: HashMap<&'static str, (usize, NameKind)> =
            HashMap::with_capacity(self.defs.len());
        let mut categories: BTreeMap<&'static str, Vec<usize>> = BTreeMap::new();
        let mut tags: BTreeMap<&'static str, Vec<usize>> = BTreeMap::new();

        for (index, def) in self.defs.iter().enumerate() {
            let claims = std::iter::once((def.name(), NameKind::Canonical))
                .chain(def.aliases().iter().map(|a| (*a, NameKind::Alias)))
                .chain(
                    def.deprecated_aliases()
                        .iter()
                        .map(|a| (*a, NameKind::DeprecatedAlias)),
                );
            for (name, kind) in claims {
                if let Some(&(holder, _)) = names.get(name) {
                    problems.push(Problem::DuplicateName {
                        name,
                        first: self.defs[holder].source(),
                        second: def.source(),
                    });
                } else {
                    names.insert(name, (index, kind));
                }
            }
            categories.entry(def.category()).or_default().push(index);
            for tag in def.tags() {
                let holders = tags.entry(*tag).or_default();
                if holders.last() != Some(&index) {
                    holders.push(index);
                }
            }
        }

        let mut descriptions: HashMap<&'static str, &'static str> = HashMap::new();
        for category in &self.categories {
            match descriptions.get(category.name()) {
                Some(existing) if *existing != category.description() => {
                    problems.push(Problem::ConflictingCategory {
                        name: category.name(),
                    });
                }
                _ => {
                    descriptions.insert(category.name(), category.description());
                }
            }
        }

        check_contexts(&self.contexts, &self.defs, &mut problems);

        if !problems.is_empty() {
            return Err(RegistryError { problems });
        }
        let contexts = ContextTree::new(self.contexts, &self.defs);
        Ok(Registry {
            contexts,
            entries: self.defs.into_iter().map(CommandEntry::new).collect(),
            names,
            categories,
            descriptions,
            tags,
        })
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
    descriptions: HashMap<&'static str, &'static str>,
    tags: BTreeMap<&'static str, Vec<usize>>,
}

/// Finds every context problem: duplicate declarations, undeclared parents, loops, and
/// commands naming undeclared contexts.
fn check_contexts(
    contexts: &[&'static ContextDef],
    defs: &[&'static CommandDef],
    problems: &mut Vec<Problem>,
) {
    let mut declared: HashMap<&'static str, &'static ContextDef> = HashMap::new();
    for context in contexts {
        match declared.get(context.name()) {
            Some(first) => problems.push(Problem::DuplicateContext {
                name: context.name(),
                first: first.source(),
                second: context.source(),
            }),
            None => {
                declared.insert(context.name(), context);
            }
        }
    }
    let mut in_cycle: Vec<&'static str> = Vec::new();
    for context in contexts {
        if let Some(parent) = context.parent()
            && !declared.contains_key(parent)
        {
            problems.push(Problem::UndeclaredParent {
                context: context.name(),
                parent,
                location: context.source(),
            });
        }
        // Walk up; coming back to the start is a loop (reported once).
        let mut chain = vec![context.name()];
        let mut next = context.parent();
        while let Some(name) = next {
            if name == context.name() {
                if !in_cycle.contains(&context.name()) {
                    in_cycle.extend(chain.iter().copied());
                    chain.push(name);
                    problems.push(Problem::ContextCycle { contexts: chain });
                }
                break;
            }
            if chain.contains(&name) {
                break;
            }
            chain.push(name);
            next = declared.get(name).and_then(|c| c.parent());
        }
    }
    for def in defs {
        for context in def.contexts() {
            if !declared.contains_key(context) {
                problems.push(Problem::UndeclaredContext {
                    command: def.name(),
                    context,
                    location: def.source(),
                });
            }
        }
    }
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
        let similar = self.suggest(name, MAX_SUGGESTIONS);
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
        self.descriptions.get(category).copied()
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
