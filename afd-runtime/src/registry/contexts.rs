//! Context declarations as data: [`ContextDef`] (what `context!` generates), [`Scope`], and
//! [`ContextTree`], the declared contexts of a registry resolved into chains of ancestors.
//! The rules that enforce them per session live in [`crate::contexts`].

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::command::{CommandDef, SourceLocation};

/// The declaration of a context, as [`context!`](crate::context) generates it; also
/// buildable by hand for explicit registration with
/// [`RegistryBuilder::context`](crate::RegistryBuilder::context).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextDef {
    name: &'static str,
    description: &'static str,
    parent: Option<&'static str>,
    priority: u16,
    triggers: &'static [&'static str],
    read_only: bool,
    source: SourceLocation,
}

inventory::collect!(ContextDef);

impl ContextDef {
    /// A context with a name, a description and a source location.
    pub const fn new(
        name: &'static str,
        description: &'static str,
        source: SourceLocation,
    ) -> Self {
        ContextDef {
            name,
            description,
            parent: None,
            priority: 0,
            triggers: &[],
            read_only: false,
            source,
        }
    }

    /// Nests the context under `parent`: entering it also allows the parent's commands.
    #[must_use]
    pub const fn with_parent(mut self, parent: &'static str) -> Self {
        self.parent = Some(parent);
        self
    }

    /// Sets the priority: higher is suggested first when several contexts match.
    #[must_use]
    pub const fn with_priority(mut self, priority: u16) -> Self {
        self.priority = priority;
        self
    }

    /// Sets the keywords that suggest this context.
    #[must_use]
    pub const fn with_triggers(mut self, triggers: &'static [&'static str]) -> Self {
        self.triggers = triggers;
        self
    }

    /// Makes the context read-only: whoever enters it cannot call a mutation.
    #[must_use]
    pub const fn with_read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// The name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// What the context is for.
    pub const fn description(&self) -> &'static str {
        self.description
    }

    /// The parent context, if nested.
    pub const fn parent(&self) -> Option<&'static str> {
        self.parent
    }

    /// The priority (higher is suggested first).
    pub const fn priority(&self) -> u16 {
        self.priority
    }

    /// The trigger keywords.
    pub const fn triggers(&self) -> &'static [&'static str] {
        self.triggers
    }

    /// Whether the context is read-only.
    pub const fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Where the context is declared.
    pub const fn source(&self) -> SourceLocation {
        self.source
    }
}

/// What a session in a context may do.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// Every command of the context.
    #[default]
    Full,
    /// Only commands that change nothing.
    ReadOnly,
}

impl Scope {
    /// The name used on the wire: `full` or `read-only`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Scope::Full => "full",
            Scope::ReadOnly => "read-only",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The declared contexts of a registry, resolved: each one's chain of ancestors and the
/// commands that name it.
#[derive(Debug, Default)]
pub struct ContextTree {
    defs: Vec<&'static ContextDef>,
    index: HashMap<&'static str, usize>,
    /// For each context: itself, then its parent, grandparent, ...
    chains: Vec<Vec<&'static str>>,
    /// For each context: how many commands name it directly.
    members: Vec<usize>,
}

impl ContextTree {
    /// Resolves declarations already checked by the registry (unique names, declared
    /// parents, no cycles).
    pub(crate) fn new(mut defs: Vec<&'static ContextDef>, commands: &[&CommandDef]) -> Self {
        defs.sort_by_key(|def| def.name);
        let index: HashMap<&'static str, usize> = defs
            .iter()
            .enumerate()
            .map(|(i, def)| (def.name, i))
            .collect();
        let chains = defs
            .iter()
            .map(|def| {
                let mut chain = vec![def.name];
                let mut parent = def.parent;
                while let Some(name) = parent {
                    if chain.contains(&name) || chain.len() > defs.len() {
                        break;
                    }
                    chain.push(name);
                    parent = index.get(name).and_then(|&i| defs[i].parent);
                }
                chain
            })
            .collect();
        let mut members = vec![0; defs.len()];
        for def in commands {
            for context in def.contexts() {
                if let Some(&i) = index.get(context) {
                    members[i] += 1;
                }
            }
        }
        ContextTree {
            defs,
            index,
            chains,
            members,
        }
    }

    /// Whether any context is declared.
    pub fn is_empty(&self) -> bool {
        self.defs.is_empty()
    }

    /// How many contexts are declared.
    pub fn len(&self) -> usize {
        self.defs.len()
    }

    /// Every context, in name order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &'static ContextDef> + '_ {
        self.defs.iter().copied()
    }

    /// The context named `name`.
    pub fn get(&self, name: &str) -> Option<&'static ContextDef> {
        self.index.get(name).map(|&i| self.defs[i])
    }

    /// The context and its ancestors, nearest first; empty for an unknown name.
    pub fn chain(&self, name: &str) -> &[&'static str] {
        self.index
            .get(name)
            .map_or(&[], |&i| self.chains[i].as_slice())
    }

    /// How many commands name `context` directly (not counting its parent's).
    pub fn member_count(&self, context: &str) -> usize {
        self.index.get(context).map_or(0, |&i| self.members[i])
    }

    /// Whether a session in `context` may call `def`: universal commands always, others
    /// when they name the context or one of its ancestors.
    pub fn allows(&self, context: &str, def: &CommandDef) -> bool {
        def.is_universal()
            || self
                .chain(context)
                .iter()
                .any(|name| def.contexts().contains(name))
    }

    /// Whether entering `context` makes the session read-only: it or an ancestor is
    /// declared read-only.
    pub fn is_read_only(&self, context: &str) -> bool {
        self.chain(context)
            .iter()
            .any(|name| self.get(name).is_some_and(ContextDef::is_read_only))
    }

    /// The contexts in which `def` may be called: those it names and their descendants,
    /// highest priority first; for a mutation, only those that are not read-only.
    pub fn contexts_allowing(&self, def: &CommandDef) -> Vec<&'static str> {
        let mut allowing: Vec<&'static ContextDef> = self
            .defs
            .iter()
            .copied()
            .filter(|context| self.allows(context.name, def))
            .filter(|context| !(def.is_mutation() && self.is_read_only(context.name)))
            .collect();
        allowing.sort_by(|a, b| b.priority.cmp(&a.priority).then(a.name.cmp(b.name)));
        allowing.into_iter().map(|context| context.name).collect()
    }
}
