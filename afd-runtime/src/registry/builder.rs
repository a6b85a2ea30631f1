//! [`RegistryBuilder`]: collects command, category and context definitions and checks
//! them (name clashes, conflicting category descriptions, context declarations) into a
//! [`Registry`], reporting every problem at once.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use super::context_ops::CONTEXT_OPS;
use super::contexts::{ContextDef, ContextTree};
use super::{CategoryDef, CommandEntry, NameKind, Registration, Registry};
use crate::command::{CommandDef, SourceLocation};

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

    /// Adds every category declared with `category!` in the linked crates (their
    /// descriptions and default scopes), for a registry whose commands are registered
    /// explicitly.
    #[must_use]
    pub fn with_inventory_categories(mut self) -> Self {
        self.categories.extend(inventory::iter::<CategoryDef>);
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

        let mut descriptions: HashMap<&'static str, &'static CategoryDef> = HashMap::new();
        for category in &self.categories {
            match descriptions.get(category.name()) {
                Some(existing)
                    if existing.description() != category.description()
                        || existing.scopes() != category.scopes() =>
                {
                    problems.push(Problem::ConflictingCategory {
                        name: category.name(),
                    });
                }
                _ => {
                    descriptions.insert(category.name(), category);
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
