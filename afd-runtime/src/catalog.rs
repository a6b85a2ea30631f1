//! afd-discover and afd-detail: browsing the catalog a [`Dispatcher`] exposes, as the AFD
//! specification's FR-2 and FR-3 describe. Transport-independent: the MCP server, the CLI
//! and in-process hosts all answer with these.

use std::collections::HashMap;
use std::sync::LazyLock;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::command::CommandDef;
use crate::dispatch::Dispatcher;
use crate::error::CommandError;
use crate::registry::{CommandEntry, TagMode};
use crate::result::CommandResult;
use crate::similarity::did_you_mean;
use crate::validate::{InputValidator, deserialize_input};

/// Most names one afd-detail call resolves.
pub const MAX_DETAIL_NAMES: usize = 10;
/// Summaries are cut to this many characters.
pub const SUMMARY_MAX_CHARS: usize = 120;

/// One tag or several.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// A single value.
    One(String),
    /// Several values.
    Many(Vec<String>),
}

impl OneOrMany {
    fn as_slice(&self) -> Vec<&str> {
        match self {
            OneOrMany::One(one) => vec![one.as_str()],
            OneOrMany::Many(many) => many.iter().map(String::as_str).collect(),
        }
    }
}

/// Page size when browsing.
pub const BROWSE_LIMIT: usize = 50;
/// Page size of a search: the best matches, not the long tail.
pub const SEARCH_LIMIT: usize = 10;
/// How many of the best hits a search with no other filter ranks (and counts in
/// `filtered`): the largest page there is.
pub const SEARCH_POOL: usize = 200;
/// A search keeps the matches scoring at least this share of the best one's score.
pub const RELEVANCE_FLOOR: f32 = 0.25;

/// How much afd-discover says of each command (seed 004's three levels).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DetailLevel {
    /// Names only: the cheapest listing.
    Name,
    /// Name, one-line description and category (the default).
    #[default]
    Summary,
    /// The summary plus the input schema: find and load a command in one call.
    Full,
}

/// The input of afd-discover.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiscoverInput {
    /// Only this category.
    #[serde(default)]
    pub category: Option<String>,
    /// Only commands with this tag (or these tags, combined by `tag_mode`).
    #[serde(default)]
    pub tag: Option<OneOrMany>,
    /// How several tags combine (default any).
    #[serde(default)]
    pub tag_mode: TagMode,
    /// What the agent is looking for, in its own words: ranks the commands by relevance
    /// (names, descriptions, categories, tags and parameters; word forms, synonyms and
    /// typos tolerated).
    #[serde(default)]
    pub search: Option<String>,
    /// Include each command's mutation flag.
    #[serde(default)]
    pub include_mutation: bool,
    /// How much to say of each command (default `summary`).
    #[serde(default)]
    pub detail: DetailLevel,
    /// Page size, 1 to 200 (default 50, or 10 for a search).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Commands to skip.
    #[serde(default)]
    pub offset: usize,
    /// The session handle, where the transport keeps no session: its context decides
    /// what is listed.
    #[serde(default)]
    pub session: Option<String>,
}

/// A command as afd-discover lists it: its name, and at the `summary` and `full` levels
/// its one-line description and category (and at `full` its input schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandSummary {
    /// The command's name.
    pub name: String,
    /// The first sentence of its description (at most 120 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its category.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Whether it changes state (when asked for, and at the `full` level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutation: Option<bool>,
    /// Its input schema (at the `full` level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    /// How well it matches the search (when searching), higher is better.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

/// The data of afd-discover.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// This page of matching commands.
    pub commands: Vec<CommandSummary>,
    /// Commands in the catalog.
    pub total: usize,
    /// Commands matching the filters (for a search with no category, tag or context to
    /// filter by: the relevant ones among the best 200, or among the best offset + limit
    /// + 1 when that is more).
    pub filtered: usize,
    /// Commands on this page.
    pub returned: usize,
    /// Whether more pages follow.
    pub has_more: bool,
    /// Every category of the catalog (not just of the matches).
    pub available_categories: Vec<String>,
    /// Every tag of the catalog (not just of the matches).
    pub available_tags: Vec<String>,
    /// When browsing with no filter: each category with its command count and declared
    /// description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub categories: Option<Vec<CategoryInfo>>,
    /// Where contexts are declared: the active one and the others to enter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextStatus>,
    /// The commands most likely to follow the session's last call (seed 004's usage
    /// prediction), when there is a history to go by.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggested_next: Vec<crate::usage::Suggestion>,
}

/// Where the session stands among the declared contexts, in afd-discover's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextStatus {
    /// The active context (none: every command is listed, or only universal ones when the
    /// server keeps a lobby).
    pub active: Option<String>,
    /// The scope in force, when a context is active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<crate::contexts::Scope>,
    /// Every declared context; enter one with afd-context-enter.
    pub available: Vec<String>,
}

/// A category of the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CategoryInfo {
    /// Its name.
    pub name: String,
    /// How many exposed commands it holds.
    pub count: usize,
    /// What it holds, when declared with `category!`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The input schema of afd-discover.
pub fn discover_schema() -> &'static Value {
    static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
        json!({
            "type": "object",
            "properties": {
                "category": {"type": "string"},
                "tag": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
                "tagMode": {"enum": ["any", "all"]},
                "search": {"type": "string"},
                "includeMutation": {"type": "boolean"},
                "detail": {"enum": ["name", "summary", "full"]},
                "limit": {"type": "integer", "minimum": 1, "maximum": 200},
                "offset": {"type": "integer", "minimum": 0},
                "session": {"type": "string"}
            },
            "additionalProperties": false
        })
    });
    &SCHEMA
}

/// The input schema of afd-detail.
pub fn detail_schema() -> &'static Value {
    static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
        json!({
            "type": "object",
            "properties": {
                "command": {"anyOf": [
                    {"type": "string", "minLength": 1},
                    {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "maxItems": MAX_DETAIL_NAMES}
                ]},
                "activate": {"type": "boolean"},
                "session": {"type": "string"}
            },
            "required": ["command"],
            "additionalProperties": false
        })
    });
    &SCHEMA
}

fn validated<T: serde::de::DeserializeOwned>(
    tool: &str,
    validator: &InputValidator,
    input: Value,
) -> Result<T, CommandError> {
    let input = if input.is_null() {
        Value::Object(Default::default())
    } else {
        input
    };
    validator.validate(tool, &input)?;
    deserialize_input(tool, input)
}

static DISCOVER_VALIDATOR: LazyLock<InputValidator> = LazyLock::new(|| {
    InputValidator::new(discover_schema()).expect("the afd-discover schema compiles")
});
static DETAIL_VALIDATOR: LazyLock<InputValidator> =
    LazyLock::new(|| InputValidator::new(detail_schema()).expect("the afd-detail schema compiles"));

/// The first sentence of `description` without its period, or its first 119 characters
/// and an ellipsis, as the AFD specification's `truncateDescription` does.
///
/// ```
/// use afd_runtime::catalog::summary;
/// assert_eq!(summary("Cancel a pending order. Stock is restored."), "Cancel a pending order");
/// assert_eq!(summary("Create a new user account."), "Create a new user account");
/// assert_eq!(summary(&"x".repeat(200)).chars().count(), 120);
/// ```
pub fn summary(description: &str) -> String {
    let first = description.split(". ").next().unwrap_or(description);
    let first = first.split("\n\n").next().unwrap_or(first).trim_end();
    let first = first.strip_suffix('.').unwrap_or(first);
    if first.chars().count() <= SUMMARY_MAX_CHARS {
        return first.to_owned();
    }
    let mut cut: String = description.chars().take(SUMMARY_MAX_CHARS - 1).collect();
    cut.push('…');
    cut
}

fn has_tags(entry: &CommandEntry, tags: &[&str], mode: TagMode) -> bool {
    let own = entry.tags();
    match mode {
        TagMode::Any => tags.iter().any(|tag| own.contains(tag)),
        TagMode::All => tags.iter().all(|tag| own.contains(tag)),
    }
}

/// What afd-discover browses without scanning the catalog, built once per dispatcher (on
/// first use): the positions, in [`Dispatcher::exposed_entries`] order, of each category's
/// and each tag's commands, every command's one-line summary, and the taxonomy part of the
/// answer, ready to copy.
pub(crate) struct BrowseIndex {
    by_category: HashMap<&'static str, Vec<u32>>,
    by_tag: HashMap<&'static str, Vec<u32>>,
    summaries: Vec<Box<str>>,
    available_categories: Value,
    available_tags: Value,
    categories: Value,
}

impl BrowseIndex {
    pub(crate) fn build(dispatcher: &Dispatcher) -> BrowseIndex {
        let mut by_category: HashMap<&'static str, Vec<u32>> = HashMap::new();
        let mut by_tag: HashMap<&'static str, Vec<u32>> = HashMap::new();
        let mut summaries = Vec::with_capacity(dispatcher.exposed_count());
        for (position, entry) in dispatcher.exposed_entries().enumerate() {
            let position = position as u32;
            by_category
                .entry(entry.category())
                .or_default()
                .push(position);
            for tag in entry.tags() {
                let list = by_tag.entry(tag).or_default();
                // A tag written twice on one command counts once.
                if list.last() != Some(&position) {
                    list.push(position);
                }
            }
            summaries.push(summary(entry.description()).into_boxed_str());
        }
        let categories = dispatcher.available_categories();
        BrowseIndex {
            by_category,
            by_tag,
            summaries,
            available_categories: categories.iter().map(|(name, _)| json!(name)).collect(),
            available_tags: dispatcher
                .available_tags()
                .iter()
                .map(|tag| json!(tag))
                .collect(),
            categories: categories
                .iter()
                .map(|(name, count)| {
                    let mut info = json!({"name": name, "count": count});
                    if let Some(description) = dispatcher.registry().category_description(name) {
                        info["description"] = json!(description);
                    }
                    info
                })
                .collect(),
        }
    }

    /// Positions of the commands in `category` (if given) carrying `tags` (combined by
    /// `mode`), in catalog order; `None` when nothing is filtered.
    fn filter(&self, category: Option<&str>, tags: &[&str], mode: TagMode) -> Option<Vec<u32>> {
        let tagged = match (tags, mode) {
            ([], _) => None,
            ([tag], _) => Some(self.tagged(tag).to_vec()),
            (tags, TagMode::Any) => {
                let mut union: Vec<u32> = tags
                    .iter()
                    .flat_map(|tag| self.tagged(tag))
                    .copied()
                    .collect();
                union.sort_unstable();
                union.dedup();
                Some(union)
            }
            (tags, TagMode::All) => {
                let mut lists: Vec<&[u32]> = tags.iter().map(|tag| self.tagged(tag)).collect();
                lists.sort_by_key(|list| list.len());
                let (first, rest) = lists.split_first().expect("at least two tags");
                Some(
                    first
                        .iter()
                        .copied()
                        .filter(|position| {
                            rest.iter().all(|list| list.binary_search(position).is_ok())
                        })
                        .collect(),
                )
            }
        };
        let Some(category) = category else {
            return tagged;
        };
        let in_category = self
            .by_category
            .get(category)
            .map_or(&[][..], Vec::as_slice);
        Some(match tagged {
            None => in_category.to_vec(),
            Some(mut tagged) => {
                tagged.retain(|position| in_category.binary_search(position).is_ok());
                tagged
            }
        })
    }

    fn tagged(&self, tag: &str) -> &[u32] {
        self.by_tag.get(tag).map_or(&[][..], Vec::as_slice)
    }
}

impl Dispatcher {
    /// afd-discover: a page of one-line summaries of the exposed commands, filtered by
    /// category, tags and search words, with the catalog's whole taxonomy.
    pub fn discover(&self, input: Value) -> CommandResult<Value> {
        let started = Instant::now();
        let input: DiscoverInput = match validated("afd-discover", &DISCOVER_VALIDATOR, input) {
            Ok(input) => input,
            Err(error) => return CommandResult::failure(error),
        };
        let session = match self.session_view(input.session.as_deref()) {
            Ok(session) => session,
            Err(error) => return CommandResult::failure(error),
        };
        let session_state = session.clone();
        let contexts = self.registry().contexts();
        let tags = input
            .tag
            .as_ref()
            .map(OneOrMany::as_slice)
            .unwrap_or_default();
        let query = input
            .search
            .as_deref()
            .map(str::trim)
            .filter(|query| !query.is_empty());
        let browse = self.browse();
        let entry_at = |position: u32| self.exposed_entry(position as usize);
        let callable = |entry: &CommandEntry| {
            contexts.is_empty() || self.allows(session.as_deref(), entry.def())
        };
        // Positions in catalog order with their score: with a search, relevance order (and
        // a score per command); without, the catalog's, from the precomputed lists.
        let limit = input.limit.unwrap_or(if query.is_some() {
            SEARCH_LIMIT
        } else {
            BROWSE_LIMIT
        });
        let matching: Vec<(u32, Option<f32>)> = match query {
            Some(query) => {
                // With nothing to filter the hits by, the best SEARCH_POOL (or the page and
                // one more) are all that is needed, and asking for no more lets the index
                // skip scoring what cannot reach them; with filters, every hit is needed.
                let unfiltered = input.category.is_none() && tags.is_empty() && contexts.is_empty();
                let wanted = if unfiltered {
                    input
                        .offset
                        .saturating_add(limit)
                        .saturating_add(1)
                        .max(SEARCH_POOL)
                } else {
                    self.exposed_count()
                };
                let hits = self.search_positions(query, wanted);
                let floor = hits.first().map_or(0.0, |(_, best)| best * RELEVANCE_FLOOR);
                hits.into_iter()
                    .filter(|&(position, score)| {
                        let entry = entry_at(position);
                        score >= floor
                            && input
                                .category
                                .as_deref()
                                .is_none_or(|category| entry.category() == category)
                            && (tags.is_empty() || has_tags(entry, &tags, input.tag_mode))
                            && callable(entry)
                    })
                    .map(|(position, score)| (position, Some(score)))
                    .collect()
            }
            None => match browse.filter(input.category.as_deref(), &tags, input.tag_mode) {
                Some(positions) => positions
                    .into_iter()
                    .filter(|&position| callable(entry_at(position)))
                    .map(|position| (position, None))
                    .collect(),
                None if contexts.is_empty() => Vec::new(),
                None => (0..self.exposed_count() as u32)
                    .filter(|&position| callable(entry_at(position)))
                    .map(|position| (position, None))
                    .collect(),
            },
        };
        // Browsing everything with no context to apply: every position, not materialised.
        let everything =
            query.is_none() && input.category.is_none() && tags.is_empty() && contexts.is_empty();
        let total = self.exposed_count();
        let browsing = input.category.is_none() && tags.is_empty() && query.is_none();
        let filtered = if everything { total } else { matching.len() };
        let page: Vec<(u32, Option<f32>)> = if everything {
            (input.offset.min(total)..total.min(input.offset.saturating_add(limit)))
                .map(|position| (position as u32, None))
                .collect()
        } else {
            matching
                .iter()
                .skip(input.offset)
                .take(limit)
                .copied()
                .collect()
        };
        let full = input.detail == DetailLevel::Full;
        let described = input.detail != DetailLevel::Name;
        let commands: Vec<Value> = page
            .iter()
            .map(|&(position, score)| {
                let entry = entry_at(position);
                let mut command = serde_json::Map::new();
                command.insert("name".into(), json!(entry.name()));
                if described {
                    command.insert(
                        "description".into(),
                        json!(&*browse.summaries[position as usize]),
                    );
                    command.insert("category".into(), json!(entry.category()));
                }
                if input.include_mutation || full {
                    command.insert("mutation".into(), json!(entry.is_mutation()));
                }
                if full {
                    command.insert("inputSchema".into(), entry.input_schema().clone());
                }
                if let Some(score) = score {
                    let score = (f64::from(score) * 100.0).round() / 100.0;
                    command.insert("score".into(), json!(score));
                }
                Value::Object(command)
            })
            .collect();
        let returned = commands.len();
        let has_more = input.offset + returned < filtered;
        let mut reasoning =
            format!("Returned {returned} of {filtered} matching commands ({total} total)");
        if let Some(category) = &input.category {
            reasoning.push_str(&format!(" in category '{category}'"));
        }
        let active = session.as_deref().and_then(|s| s.active());
        if let Some(frame) = active {
            reasoning.push_str(&format!(
                " callable in context '{}' ({})",
                frame.context, frame.scope
            ));
        }
        if let (Some(query), Some(handle)) = (input.search.as_deref(), input.session.as_deref()) {
            let found: Vec<String> = page
                .iter()
                .take(10)
                .map(|&(position, _)| entry_at(position).name().to_owned())
                .collect();
            let max = self.sessions().config().get_max_searches();
            self.sessions()
                .update(handle, |state| state.record_search(query, found, max));
        }
        if has_more {
            reasoning.push_str(&format!(
                ". Use offset: {} to see more.",
                input.offset + limit
            ));
        }
        let suggested_next: Vec<crate::usage::Suggestion> =
            input.session.as_deref().map_or_else(Vec::new, |session| {
                self.usage()
                    .suggested_next(session, 6)
                    .into_iter()
                    .filter(|next| {
                        self.registry().get(&next.command).is_some_and(|entry| {
                            self.is_exposed(entry.name())
                                && (contexts.is_empty()
                                    || self.allows(session_state.as_deref(), entry.def()))
                        })
                    })
                    .take(3)
                    .collect()
            });
        // Built as a `Value` directly, in `DiscoverResult`'s shape and field order, from
        // the precomputed parts (a test checks the two agree).
        let mut data = serde_json::Map::new();
        data.insert("commands".into(), Value::Array(commands));
        data.insert("total".into(), json!(total));
        data.insert("filtered".into(), json!(filtered));
        data.insert("returned".into(), json!(returned));
        data.insert("hasMore".into(), json!(has_more));
        data.insert(
            "availableCategories".into(),
            browse.available_categories.clone(),
        );
        data.insert("availableTags".into(), browse.available_tags.clone());
        if browsing {
            data.insert("categories".into(), browse.categories.clone());
        }
        if !contexts.is_empty() {
            let status = ContextStatus {
                active: active.map(|frame| frame.context.clone()),
                scope: active.map(|frame| frame.scope),
                available: contexts.iter().map(|c| c.name().to_owned()).collect(),
            };
            data.insert("context".into(), json!(status));
        }
        if !suggested_next.is_empty() {
            data.insert("suggestedNext".into(), json!(suggested_next));
        }
        finish(Ok(Value::Object(data)), reasoning, started)
    }

    /// afd-detail: the full definition and input schema of up to ten commands, in the
    /// order asked. Works for every registered command (`callable` says whether this
    /// dispatcher lets it be called); unknown names get `found: false` with suggestions.
    pub fn detail(&self, input: Value) -> CommandResult<Value> {
        let started = Instant::now();
        #[derive(Deserialize)]
        struct DetailInput {
            command: OneOrMany,
            #[serde(default)]
            activate: Option<bool>,
            #[serde(default)]
            session: Option<String>,
        }
        let input: DetailInput = match validated("afd-detail", &DETAIL_VALIDATOR, input) {
            Ok(input) => input,
            Err(error) => return CommandResult::failure(error),
        };
        let names = input.command.as_slice();
        let entries: Vec<Value> = names.iter().map(|name| self.detail_entry(name)).collect();
        let found = entries
            .iter()
            .filter(|entry| entry["found"] == true)
            .count();
        let mut reasoning = format!("Resolved {found} of {} requested commands", names.len());
        if let Some(activate) = input.activate {
            let session = input.session.as_deref();
            let outcome = if activate {
                self.activate(session, &names).map(|(activated, evicted)| {
                    let mut text = format!(
                        "; activated {} for this session (listed as tools from the next tools/list where the client follows list changes)",
                        activated.len()
                    );
                    if !evicted.is_empty() {
                        text.push_str(&format!(", deactivating the oldest: {}", evicted.join(", ")));
                    }
                    text
                })
            } else {
                self.deactivate(session, Some(&names))
                    .map(|gone| format!("; deactivated {}", gone.len()))
            };
            match outcome {
                Ok(text) => reasoning.push_str(&text),
                Err(error) => return CommandResult::failure(error),
            }
        }
        finish(Ok(Value::Array(entries)), reasoning, started)
    }

    fn detail_entry(&self, name: &str) -> Value {
        let Some(entry) = self.registry().get(name) else {
            let similar = self.registry().suggest(name, 3);
            return json!({
                "name": name,
                "found": false,
                "error": {
                    "code": "COMMAND_NOT_FOUND",
                    "message": format!("No command named '{name}'"),
                    "suggestion": did_you_mean(similar.first().copied(), "Use afd-discover to list all commands."),
                }
            });
        };
        let def = entry.def();
        // Built field by field: `json!` would re-serialise the cached schema into a new
        // `Value` (slower than cloning it).
        let mut object = serde_json::Map::new();
        object.insert("name".into(), Value::from(entry.name()));
        object.insert("found".into(), Value::Bool(true));
        object.insert("description".into(), Value::from(entry.description()));
        object.insert("category".into(), Value::from(entry.category()));
        object.insert("mutation".into(), Value::Bool(def.is_mutation()));
        object.insert("inputSchema".into(), entry.input_schema().clone());
        object.insert(
            "callable".into(),
            Value::Bool(self.is_exposed(entry.name())),
        );
        if def.is_destructive() {
            object.insert("destructive".into(), json!(true));
        } else if def.is_mutation() {
            object.insert("destructive".into(), json!(false));
        }
        insert_facts(&mut object, def);
        Value::Object(object)
    }
}

/// The optional facts of a definition that afd-detail and the exported catalog files
/// share: tags, execution time, errors, confirmation prompt, hand-off, version, aliases.
pub(crate) fn insert_facts(object: &mut serde_json::Map<String, Value>, def: &CommandDef) {
    if !def.tags().is_empty() {
        object.insert("tags".into(), json!(def.tags()));
    }
    if let Some(time) = def.execution_time() {
        object.insert("executionTime".into(), json!(time));
    }
    if !def.errors().is_empty() {
        object.insert("errors".into(), json!(def.errors()));
    }
    if let Some(prompt) = def.confirm_prompt() {
        object.insert("confirmPrompt".into(), json!(prompt));
    }
    if def.is_handoff() {
        object.insert("handoff".into(), json!(true));
    }
    if let Some(protocol) = def.handoff_protocol() {
        object.insert("handoffProtocol".into(), json!(protocol));
    }
    if let Some(version) = def.version() {
        object.insert("version".into(), json!(version));
    }
    if !def.aliases().is_empty() {
        object.insert("aliases".into(), json!(def.aliases()));
    }
}

fn finish(
    data: Result<Value, serde_json::Error>,
    reasoning: String,
    started: Instant,
) -> CommandResult<Value> {
    let mut result = match data {
        Ok(data) => CommandResult::success(data)
            .with_reasoning(reasoning)
            .with_confidence(1.0),
        Err(error) => CommandResult::failure(CommandError::internal(error.to_string())),
    };
    result.metadata_mut().execution_time_ms = Some(started.elapsed().as_millis() as u64);
    result
}
