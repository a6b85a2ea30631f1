//! The server instructions generated from the catalog: how many commands there are and the
//! largest categories, how the strategy reaches a command, and the contexts.

use super::strategy::Strategy;
use crate::contexts::NoContextPolicy;
use crate::dispatch::Dispatcher;

/// How many categories the generated instructions name, largest first.
const NAMED_CATEGORIES: usize = 8;

/// The generated server instructions, short enough to cost little in every conversation:
/// how many commands there are and the largest categories, how the strategy reaches a
/// command, and the contexts with how to enter one. What every result holds, and the
/// rest, the results themselves say.
pub(in crate::mcp) fn instructions(dispatcher: &Dispatcher, strategy: Strategy) -> String {
    let mut categories: Vec<(&str, usize)> = dispatcher.available_categories().to_vec();
    categories.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut named: Vec<String> = categories
        .iter()
        .take(NAMED_CATEGORIES)
        .map(|(name, count)| format!("{name} ({count})"))
        .collect();
    let more = categories.len().saturating_sub(NAMED_CATEGORIES);
    if more > 0 {
        named.push(format!("{more} more"));
    }
    let how = match strategy {
        Strategy::Lazy | Strategy::Hybrid => {
            "Find one with afd-discover (words, category or tag), its input schema with afd-detail, run it with afd-call."
        }
        Strategy::Individual => "Each is a tool; afd-call also runs one by name.",
        Strategy::Grouped => "Each category is a tool whose `action` picks the command.",
    };
    let contexts = dispatcher.registry().contexts();
    let contexts = if contexts.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = contexts
            .iter()
            .map(|c| {
                let read_only = if c.is_read_only() { " (read-only)" } else { "" };
                format!("{}{read_only}", c.name())
            })
            .collect();
        let outside = match dispatcher.sessions().config().policy() {
            NoContextPolicy::Open => "",
            NoContextPolicy::Lobby => " Outside a context only universal commands run.",
        };
        format!(
            " Contexts scope what may be called: {}. afd-context-suggest finds one for a task, afd-context-enter enters it, afd-context-exit leaves.{outside}",
            names.join(", ")
        )
    };
    format!(
        "{} commands: {}. {how} afd-batch runs several; afd-pipe chains them.{contexts}",
        dispatcher.exposed_count(),
        named.join(", ")
    )
}
