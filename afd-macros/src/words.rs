//! The closed sets of words the macros accept: the keys of `#[command(...)]`,
//! `#[resource(...)]`, `#[prompt(...)]` and `context! { ... }`, the surfaces of
//! `expose(...)` and the execution times. Each set is an enum, so a `match` over it is
//! checked for completeness, and a word outside the set is an error that suggests the
//! closest member.

use crate::case::closest;

/// A closed set of words, one enum variant each.
pub trait Words: Copy + 'static {
    /// What the words are, for messages: "`#[command]` key", "surface".
    const KIND: &'static str;
    /// Every member, in the order messages list them.
    const ALL: &'static [Self];

    /// The member as the user writes it.
    fn word(self) -> &'static str;

    /// The member spelt `word`, if there is one.
    fn from_word(word: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|member| member.word() == word)
    }

    /// The message for a word outside the set: "unknown surface `web`; expected one of
    /// `mcp`, `cli`, `agent`, `palette`", or "...; did you mean `category`?" when one is close.
    fn unknown(word: &str) -> String {
        let words: Vec<&str> = Self::ALL.iter().map(|member| member.word()).collect();
        format!(
            "unknown {} `{word}`; {}",
            Self::KIND,
            expectation(word, &words)
        )
    }
}

/// "did you mean `category`?" when a candidate is close, else "expected one of ...".
fn expectation(word: &str, candidates: &[&str]) -> String {
    if let Some(candidate) = closest(word, candidates) {
        return format!("did you mean `{candidate}`?");
    }
    let expected: Vec<String> = candidates.iter().map(|c| format!("`{c}`")).collect();
    format!("expected one of {}", expected.join(", "))
}

/// Declares an enum of words and its `Words` implementation.
macro_rules! words {
    (
        $(#[$meta:meta])*
        pub enum $name:ident: $kind:literal {
            $($variant:ident = $word:literal,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        pub enum $name {
            $($variant,)*
        }

        impl Words for $name {
            const KIND: &'static str = $kind;
            const ALL: &'static [Self] = &[$(Self::$variant),*];

            fn word(self) -> &'static str {
                match self {
                    $(Self::$variant => $word,)*
                }
            }
        }
    };
}

words! {
    /// The keys of `#[command(...)]`.
    pub enum CommandKey: "`#[command]` key" {
        Name = "name",
        Title = "title",
        Category = "category",
        Tags = "tags",
        Mutation = "mutation",
        Destructive = "destructive",
        Idempotent = "idempotent",
        OpenWorld = "open_world",
        ConfirmPrompt = "confirm_prompt",
        ExecutionTime = "execution_time",
        Errors = "errors",
        Handoff = "handoff",
        HandoffProtocol = "handoff_protocol",
        Version = "version",
        Expose = "expose",
        Aliases = "aliases",
        DeprecatedAliases = "deprecated_aliases",
        Eager = "eager",
        Blocking = "blocking",
        Contexts = "contexts",
        Scopes = "scopes",
        NeedsClient = "needs_client",
        Task = "task",
        TaskStart = "task_start",
        Crate = "crate",
    }
}

words! {
    /// The client capabilities `needs_client(...)` names: what a client must have declared
    /// for the command to run.
    pub enum ClientNeed: "client capability" {
        Sampling = "sampling",
        Elicitation = "elicitation",
        Roots = "roots",
    }
}

words! {
    /// The keys of `context! { ... }`.
    pub enum ContextKey: "`context!` key" {
        Name = "name",
        Parent = "parent",
        Priority = "priority",
        Triggers = "triggers",
        ReadOnly = "read_only",
        Crate = "crate",
    }
}

words! {
    /// The keys of `#[resource(...)]`.
    pub enum ResourceKey: "`#[resource]` key" {
        Uri = "uri",
        UriTemplate = "uri_template",
        Name = "name",
        Title = "title",
        Description = "description",
        MimeType = "mime_type",
        Complete = "complete",
        Crate = "crate",
    }
}

words! {
    /// The keys of `#[prompt(...)]`.
    pub enum PromptKey: "`#[prompt]` key" {
        Name = "name",
        Title = "title",
        Description = "description",
        Complete = "complete",
        Crate = "crate",
    }
}

words! {
    /// The surfaces `expose(...)` turns on or off; each is a setter of the runtime's
    /// `Expose` of the same name.
    pub enum Surface: "surface" {
        Mcp = "mcp",
        Cli = "cli",
        Agent = "agent",
        Palette = "palette",
    }
}

words! {
    /// The classes of `execution_time = "..."`, one per variant of the runtime's
    /// `ExecutionTime`.
    pub enum ExecutionTime: "execution time" {
        Instant = "instant",
        Fast = "fast",
        Slow = "slow",
        LongRunning = "long-running",
    }
}

words! {
    /// The answers of `task = "..."`, one per variant of the runtime's `TaskSupport`.
    pub enum TaskSupport: "task support" {
        Forbidden = "forbidden",
        Optional = "optional",
        Required = "required",
    }
}

words! {
    /// The answers of `task_start = "..."`, one per variant of the runtime's `TaskStart`.
    pub enum TaskStart: "task start" {
        Call = "call",
        Handler = "handler",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip() {
        for key in CommandKey::ALL {
            assert_eq!(CommandKey::from_word(key.word()), Some(*key));
        }
        assert_eq!(
            ExecutionTime::from_word("long-running"),
            Some(ExecutionTime::LongRunning)
        );
        assert!(ExecutionTime::from_word("LongRunning").is_none());
    }

    #[test]
    fn unknown_words_suggest_or_list() {
        assert_eq!(
            ContextKey::unknown("trigger"),
            "unknown `context!` key `trigger`; did you mean `triggers`?"
        );
        assert_eq!(
            ExecutionTime::unknown("quick"),
            "unknown execution time `quick`; expected one of `instant`, `fast`, `slow`, `long-running`"
        );
    }
}
