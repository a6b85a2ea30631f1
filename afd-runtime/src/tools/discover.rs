//! afd-discover: a page of one-line summaries of the commands a dispatcher exposes,
//! filtered by category, tags, search words and the session's context, with the catalog's
//! whole taxonomy. Three steps: filter (which commands match, in which order), page (the
//! slice asked for), render (the answer, built from precomputed parts).

use std::sync::LazyLock;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{finish, validated};
use crate::contexts::SessionState;
use crate::dispatch::Dispatcher;
use crate::registry::{CommandEntry, TagMode};
use crate::result::CommandResult;
use crate::search::{CONFIDENT_HITS, MAX_PHRASINGS, Match};
use crate::usage::AccessLevel;
use crate::validate::InputValidator;

/// The least confidence a hit states: below it, a command is all but sure not to do what was
/// asked, and the answer leaves the number out (it costs the agent tokens and says nothing).
const MIN_CONFIDENCE: f64 = 0.1;

/// One value or several: a tag or tags, a search phrasing or phrasings.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// A single value.
    One(String),
    /// Several values.
    Many(Vec<String>),
}

impl OneOrMany {
    pub(crate) fn as_slice(&self) -> Vec<&str> {
        match self {
            OneOrMany::One(one) => vec![one.as_str()],
            OneOrMany::Many(many) => many.iter().map(String::as_str).collect(),
        }
    }
}

/// Page size when browsing.
pub(crate) const BROWSE_LIMIT: usize = 50;
/// Page size of a search: the best matches, not the long tail.
pub(crate) const SEARCH_LIMIT: usize = 10;
/// How many of the best hits a search with no other filter ranks (and counts in
/// `filtered`): the largest page there is.
pub(crate) const SEARCH_POOL: usize = 200;
/// Most commands predicted to follow (`suggestedNext`) and most called (`popular`) an
/// answer names.
pub(crate) const SUGGESTED: usize = 5;
/// See [`SUGGESTED`].
pub(crate) const POPULAR: usize = 5;
/// A search keeps the matches scoring at least this share of the best one's score.
pub(crate) const RELEVANCE_FLOOR: f32 = 0.25;
/// How many of the nearest commands a search that matches nothing names as not a match.
pub(crate) const NOT_A_MATCH: usize = 3;
/// What a search whose best commands do not do what was asked tells the agent to do.
pub(crate) const NONE_NEXT_STEP: &str = "No command does what was asked; those in notAMatch are the nearest and do something else: do not call them for this. Browse the categories (afd-discover {\"category\": ...}) or ask the user.";

/// How much afd-discover says of each command (three levels).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DetailLevel {
    /// Names only: the cheapest listing.
    Name,
    /// Name, one-line description and category (the default). `description` names the
    /// same level.
    #[default]
    #[serde(alias = "description")]
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
    /// typos tolerated). Up to [`MAX_PHRASINGS`] phrasings of one request are ranked each
    /// and their rankings fused into one (`SearchIndex::search_phrasings`).
    #[serde(default)]
    pub search: Option<OneOrMany>,
    /// Include each command's mutation flag and risk.
    #[serde(default)]
    pub include_mutation: bool,
    /// Load the commands on this page for the session: from its next `tools/list` they
    /// are listed as tools with their schemas (where the client follows list changes), and
    /// the answer says what was loaded before and after, and what to do next.
    #[serde(default)]
    pub activate: bool,
    /// List commands already loaded for the session among a search's matches (by default
    /// a search shows only what is not loaded yet).
    #[serde(default)]
    pub include_loaded: bool,
    /// How much to say of each command (default `summary`, also called `description`).
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
    /// What calling it may do (with `mutation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<crate::command::Risk>,
    /// Its input schema (at the `full` level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    /// How well it matches the search (when searching), higher is better.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The probability that it does what the search asked (when searching), 0 to 1,
    /// calibrated on development queries; left out under 0.1 (a command that is all but
    /// sure not to do it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
}

/// The data of afd-discover.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// For a search, whether its best commands do what was asked: `strong` (call the first),
    /// `weak` (read the descriptions first) or `none` (no command does it: `commands` is
    /// empty and `notAMatch` names the nearest).
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    pub match_: Option<String>,
    /// This page of matching commands.
    pub commands: Vec<CommandSummary>,
    /// With `match: none`: the nearest commands, which do not do what was asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_a_match: Vec<CommandSummary>,
    /// With `match: none`: what to do instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_step: Option<String>,
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
    /// The commands most likely to follow the session's last call (up to five),
    /// predicted from usage statistics, when there is a history to go by.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggested_next: Vec<crate::usage::Suggestion>,
    /// When browsing with no filter: the most called commands (up to five), when usage
    /// statistics have any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub popular: Vec<PopularCommand>,
    /// With `activate`: the commands loaded for the session before this call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded_before: Option<Vec<String>>,
    /// With `activate`: the commands loaded for the session after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded_after: Option<Vec<String>>,
    /// With `activate`: what the agent can now call, and how.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_instruction: Option<String>,
}

/// A command among the most called, in afd-discover's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PopularCommand {
    /// Its name.
    pub command: String,
    /// Calls recorded.
    pub calls: u64,
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
                "search": {
                    "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
                    "description": SEARCH_HINT
                },
                "includeMutation": {"type": "boolean"},
                "activate": {"type": "boolean"},
                "includeLoaded": {"type": "boolean"},
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

/// What the listing tells the agent about `search`: that it takes several phrasings, how
/// many, and which. Every word is paid for in each listing (README, "Context cost"); the
/// longer "1-3 phrasings: the request, then the action and object in a tool's words" cost
/// 10 tokens more.
pub(crate) const SEARCH_HINT: &str = "1-3 phrasings: the request, then a tool's words";

/// The schema afd-discover validates against: the advertised one, whose `detail` also
/// accepts `description` (the summary level by the name the design documents use), and
/// whose `search` list holds 1 to [`MAX_PHRASINGS`] phrasings. The advertised schema leaves
/// the synonym and the bounds out (the hint states them), so listing afd-discover costs no
/// more tokens.
static DISCOVER_VALIDATOR: LazyLock<InputValidator> = LazyLock::new(|| {
    let mut schema = discover_schema().clone();
    schema["properties"]["detail"]["enum"] = json!(["name", "summary", "description", "full"]);
    schema["properties"]["search"]["anyOf"][1]["minItems"] = json!(1);
    schema["properties"]["search"]["anyOf"][1]["maxItems"] = json!(MAX_PHRASINGS);
    InputValidator::new(&schema).expect("the afd-discover schema compiles")
});
fn has_tags(entry: &CommandEntry, tags: &[&str], mode: TagMode) -> bool {
    let own = entry.tags();
    match mode {
        TagMode::Any => tags.iter().any(|tag| own.contains(tag)),
        TagMode::All => tags.iter().all(|tag| own.contains(tag)),
    }
}

/// afd-discover: a page of one-line summaries of the exposed commands, filtered by
/// category, tags and search words, with the catalog's whole taxonomy.
pub(crate) async fn discover(dispatcher: &Dispatcher, input: Value) -> CommandResult<Value> {
    let started = Instant::now();
    let input: DiscoverInput = match validated("afd-discover", &DISCOVER_VALIDATOR, input) {
        Ok(input) => input,
        Err(error) => return CommandResult::failure(error),
    };
    let session = match dispatcher.session_view(input.session.as_deref()).await {
        Ok(session) => session,
        Err(error) => return CommandResult::failure(error),
    };
    let request = Request::new(&input);
    // What the session has loaded: a search leaves it out unless asked to include it.
    let loaded: Vec<String> = session
        .as_deref()
        .map(|state| state.activated().to_vec())
        .unwrap_or_default();
    let hidden: &[String] = if request.searching() && !input.include_loaded {
        &loaded
    } else {
        &[]
    };
    let matches = filter(dispatcher, &input, &request, session.as_deref(), hidden);
    let page = page(dispatcher, &input, &request, &matches);
    let names: Vec<&'static str> = page
        .iter()
        .map(|&(position, _)| dispatcher.exposed_entry(position as usize).name())
        .collect();
    if let (true, Some(handle)) = (request.searching(), input.session.as_deref()) {
        let query = request.phrasings.join(" | ");
        let found: Vec<String> = names.iter().take(10).map(|&name| name.to_owned()).collect();
        let sessions = dispatcher.sessions();
        let max = sessions.config().get_max_searches();
        let recorded = sessions
            .update(handle, |state| {
                state.record_search(&query, found.clone(), max)
            })
            .await;
        if let Err(error) = recorded {
            return CommandResult::failure(crate::contexts::store_unavailable(error));
        }
    }
    dispatcher
        .usage()
        .record_access(&names, access_level(input.detail));
    let loading = if input.activate {
        match load(dispatcher, input.session.as_deref(), &names, loaded.clone()).await {
            Ok(loading) => Some(loading),
            Err(error) => return CommandResult::failure(error),
        }
    } else {
        None
    };
    let (mut data, mut reasoning) = render(
        dispatcher,
        &input,
        &request,
        &matches,
        &page,
        session.as_deref(),
    );
    if matches.hidden > 0 {
        reasoning.push_str(&format!(
            "; {} matching commands already loaded for this session left out (includeLoaded: true lists them)",
            matches.hidden
        ));
    }
    if let (Some(loading), Value::Object(map)) = (loading, &mut data) {
        reasoning.push_str(&format!("; loaded {}", loading.activated.len()));
        map.insert("loadedBefore".into(), json!(loading.before));
        map.insert("loadedAfter".into(), json!(loading.after));
        let instruction = if matches.verdict == Some(Match::None) {
            "Nothing was loaded: no command does what was asked (see nextStep).".to_owned()
        } else {
            loading.instruction()
        };
        map.insert("nextInstruction".into(), json!(instruction));
    }
    finish(Ok(data), reasoning, started)
}

/// How much of each listed command an agent sees at `detail`.
fn access_level(detail: DetailLevel) -> AccessLevel {
    match detail {
        DetailLevel::Name => AccessLevel::Name,
        DetailLevel::Summary => AccessLevel::Summary,
        DetailLevel::Full => AccessLevel::Full,
    }
}

/// What `activate` did for the session.
struct Loading {
    before: Vec<String>,
    after: Vec<String>,
    /// The listed commands now loaded (newly or again).
    activated: Vec<String>,
    /// The oldest loaded commands that made room.
    evicted: Vec<String>,
}

impl Loading {
    /// What the agent can now call, and how.
    fn instruction(&self) -> String {
        if self.activated.is_empty() {
            return "Nothing was loaded: no command on this page may be called in this session. Search with other words, or enter a context (afd-context-enter) that holds what you need.".to_owned();
        }
        let mut text = format!(
            "Loaded {}: call each by name as a tool (listed with its schema from the next tools/list, where the client follows tool-list changes) or with afd-call {{command, input}}; afd-detail gives a schema.",
            self.activated.join(", ")
        );
        if !self.evicted.is_empty() {
            text.push_str(&format!(
                " Unloaded to make room (oldest first): {}.",
                self.evicted.join(", ")
            ));
        }
        text
    }
}

/// Loads `names` for the session (bounded as afd-detail's `activate`).
async fn load(
    dispatcher: &Dispatcher,
    session: Option<&str>,
    names: &[&str],
    before: Vec<String>,
) -> Result<Loading, crate::error::CommandError> {
    let (activated, evicted) = dispatcher.activate(session, names).await?;
    let after = match session {
        Some(handle) => dispatcher.session(handle).await?,
        None => None,
    }
    .map(|state| state.activated().to_vec())
    .unwrap_or_default();
    Ok(Loading {
        before,
        after,
        activated,
        evicted,
    })
}

/// What the input asks for, read once.
struct Request<'i> {
    tags: Vec<&'i str>,
    /// The search phrasings, trimmed, blank ones left out; empty when not searching.
    phrasings: Vec<&'i str>,
    limit: usize,
}

impl<'i> Request<'i> {
    fn new(input: &'i DiscoverInput) -> Self {
        let tags = input
            .tag
            .as_ref()
            .map(OneOrMany::as_slice)
            .unwrap_or_default();
        let phrasings: Vec<&str> = input
            .search
            .as_ref()
            .map(OneOrMany::as_slice)
            .unwrap_or_default()
            .into_iter()
            .map(str::trim)
            .filter(|phrasing| !phrasing.is_empty())
            .collect();
        let limit = input.limit.unwrap_or(if phrasings.is_empty() {
            BROWSE_LIMIT
        } else {
            SEARCH_LIMIT
        });
        Request {
            tags,
            phrasings,
            limit,
        }
    }

    /// Whether the input searches (has a phrasing with something in it).
    fn searching(&self) -> bool {
        !self.phrasings.is_empty()
    }
}

/// The commands that match, as positions in exposed order with their search score.
struct Matches {
    /// Browsing everything with no context to apply: every position, not materialised.
    everything: bool,
    /// The matching positions (empty when `everything`): in relevance order for a
    /// search, in catalog order otherwise.
    positions: Vec<(u32, Option<f32>)>,
    /// How many match.
    filtered: usize,
    /// Matches left out because the session already loaded them.
    hidden: usize,
    /// For a search: whether its best commands do what was asked.
    verdict: Option<Match>,
    /// For a search: each confident hit's position and confidence.
    confidence: Vec<(u32, f32)>,
    /// For a search that matches nothing: the nearest commands, not a match.
    closest: Vec<u32>,
}

/// Filter: the commands matching the category, tags, search words and the session's
/// context, from the search index and the precomputed browse lists.
fn filter(
    dispatcher: &Dispatcher,
    input: &DiscoverInput,
    request: &Request<'_>,
    session: Option<&SessionState>,
    hidden: &[String],
) -> Matches {
    let contexts = dispatcher.registry().contexts();
    let tags = &request.tags;
    let entry_at = |position: u32| dispatcher.exposed_entry(position as usize);
    let callable =
        |entry: &CommandEntry| contexts.is_empty() || dispatcher.allows(session, entry.def());
    let everything =
        !request.searching() && input.category.is_none() && tags.is_empty() && contexts.is_empty();
    if everything {
        return Matches {
            everything,
            positions: Vec::new(),
            filtered: dispatcher.exposed_count(),
            hidden: 0,
            verdict: None,
            confidence: Vec::new(),
            closest: Vec::new(),
        };
    }
    let mut verdict = None;
    let mut confidence = Vec::new();
    let positions: Vec<(u32, Option<f32>)> = match request.searching() {
        true => {
            // With nothing to filter the hits by, the best SEARCH_POOL (or the page and
            // one more) are all that is needed, and asking for no more lets the index
            // skip scoring what cannot reach them; with filters, every hit is needed.
            let unfiltered = input.category.is_none() && tags.is_empty() && contexts.is_empty();
            let wanted = if unfiltered {
                input
                    .offset
                    .saturating_add(request.limit)
                    .saturating_add(1)
                    .max(SEARCH_POOL)
            } else {
                dispatcher.exposed_count()
            };
            let confident = input
                .offset
                .saturating_add(request.limit)
                .min(CONFIDENT_HITS);
            let judged = dispatcher.search_judged_positions(&request.phrasings, wanted, confident);
            verdict = Some(judged.verdict);
            confidence = judged
                .hits
                .iter()
                .zip(&judged.confidence)
                .map(|(hit, &confidence)| (hit.doc as u32, confidence))
                .collect();
            let best = judged.hits.first().map(|hit| hit.doc as u32);
            let hits: Vec<(u32, f32)> = judged
                .hits
                .iter()
                .map(|hit| (hit.doc as u32, hit.score))
                .collect();
            let floor = hits.first().map_or(0.0, |(_, best)| best * RELEVANCE_FLOOR);
            let kept: Vec<(u32, Option<f32>)> = hits
                .into_iter()
                .filter(|&(position, score)| {
                    let entry = entry_at(position);
                    score >= floor
                        && input
                            .category
                            .as_deref()
                            .is_none_or(|category| entry.category() == category)
                        && (tags.is_empty() || has_tags(entry, tags, input.tag_mode))
                        && callable(entry)
                })
                .map(|(position, score)| (position, Some(score)))
                .collect();
            // Strong says the first listed command does the job: not when a filter left
            // the best one out.
            if verdict == Some(Match::Strong) && kept.first().map(|&(p, _)| p) != best {
                verdict = Some(Match::Weak);
            }
            kept
        }
        false => match dispatcher
            .browse()
            .filter(input.category.as_deref(), tags, input.tag_mode)
        {
            Some(positions) => positions
                .into_iter()
                .filter(|&position| callable(entry_at(position)))
                .map(|position| (position, None))
                .collect(),
            None => (0..dispatcher.exposed_count() as u32)
                .filter(|&position| callable(entry_at(position)))
                .map(|position| (position, None))
                .collect(),
        },
    };
    // Commands the session already loaded, left out of a search unless it asks for them.
    let before = positions.len();
    let mut positions = positions;
    if !hidden.is_empty() {
        positions.retain(|&(position, _)| {
            let name = entry_at(position).name();
            !hidden.iter().any(|loaded| loaded == name)
        });
    }
    let hidden = before - positions.len();
    // Nothing does what was asked: no command to call, the nearest named apart.
    let closest = if verdict == Some(Match::None) {
        let closest = positions
            .iter()
            .take(NOT_A_MATCH)
            .map(|&(position, _)| position)
            .collect();
        positions.clear();
        closest
    } else {
        Vec::new()
    };
    Matches {
        everything,
        filtered: positions.len(),
        hidden,
        positions,
        verdict,
        confidence,
        closest,
    }
}

/// Page: the slice of the matches the offset and limit ask for.
fn page(
    dispatcher: &Dispatcher,
    input: &DiscoverInput,
    request: &Request<'_>,
    matches: &Matches,
) -> Vec<(u32, Option<f32>)> {
    if matches.everything {
        let total = dispatcher.exposed_count();
        (input.offset.min(total)..total.min(input.offset.saturating_add(request.limit)))
            .map(|position| (position as u32, None))
            .collect()
    } else {
        matches
            .positions
            .iter()
            .skip(input.offset)
            .take(request.limit)
            .copied()
            .collect()
    }
}

/// Render: the answer, in [`DiscoverResult`]'s shape and field order, built as a `Value`
/// directly from the precomputed parts (a test checks the two agree), and its reasoning.
fn render(
    dispatcher: &Dispatcher,
    input: &DiscoverInput,
    request: &Request<'_>,
    matches: &Matches,
    page: &[(u32, Option<f32>)],
    session: Option<&SessionState>,
) -> (Value, String) {
    let browse = dispatcher.browse();
    let contexts = dispatcher.registry().contexts();
    let total = dispatcher.exposed_count();
    let filtered = matches.filtered;
    let full = input.detail == DetailLevel::Full;
    let described = input.detail != DetailLevel::Name;
    let summary = |position: u32, score: Option<f32>| -> Value {
        let entry = dispatcher.exposed_entry(position as usize);
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
            command.insert("risk".into(), json!(entry.def().risk().as_str()));
        }
        if full {
            command.insert("inputSchema".into(), entry.input_schema().clone());
        }
        if let Some(score) = score {
            let score = (f64::from(score) * 100.0).round() / 100.0;
            command.insert("score".into(), json!(score));
            if let Some(&(_, confidence)) = matches.confidence.iter().find(|&&(p, _)| p == position)
            {
                let confidence = (f64::from(confidence) * 100.0).round() / 100.0;
                if confidence >= MIN_CONFIDENCE {
                    command.insert("confidence".into(), json!(confidence));
                }
            }
        }
        Value::Object(command)
    };
    let commands: Vec<Value> = page
        .iter()
        .map(|&(position, score)| summary(position, score))
        .collect();
    let returned = commands.len();
    let has_more = input.offset + returned < filtered;
    let mut reasoning =
        format!("Returned {returned} of {filtered} matching commands ({total} total)");
    if let Some(category) = &input.category {
        reasoning.push_str(&format!(" in category '{category}'"));
    }
    let active = session.and_then(SessionState::active);
    if let Some(frame) = active {
        reasoning.push_str(&format!(
            " callable in context '{}' ({})",
            frame.context, frame.scope
        ));
    }
    if has_more {
        reasoning.push_str(&format!(
            ". Use offset: {} to see more.",
            input.offset + request.limit
        ));
    }
    let suggested_next: Vec<crate::usage::Suggestion> =
        input.session.as_deref().map_or_else(Vec::new, |handle| {
            dispatcher
                .usage()
                .suggested_next(handle, SUGGESTED + 3)
                .into_iter()
                .filter(|next| {
                    dispatcher
                        .registry()
                        .get(&next.command)
                        .is_some_and(|entry| {
                            dispatcher.is_exposed(entry.name())
                                && (contexts.is_empty() || dispatcher.allows(session, entry.def()))
                        })
                })
                .take(SUGGESTED)
                .collect()
        });
    let browsing = input.category.is_none() && request.tags.is_empty() && !request.searching();
    let mut data = serde_json::Map::new();
    if let Some(verdict) = matches.verdict {
        data.insert("match".into(), json!(verdict.as_str()));
    }
    data.insert("commands".into(), Value::Array(commands));
    if matches.verdict == Some(Match::None) {
        let nearest: Vec<Value> = matches
            .closest
            .iter()
            .map(|&position| summary(position, None))
            .collect();
        let names: Vec<&str> = matches
            .closest
            .iter()
            .map(|&position| dispatcher.exposed_entry(position as usize).name())
            .collect();
        reasoning = if names.is_empty() {
            "No command does what was asked".to_owned()
        } else {
            format!(
                "No command does what was asked; nearest, not a match: {}",
                names.join(", ")
            )
        };
        if !nearest.is_empty() {
            data.insert("notAMatch".into(), Value::Array(nearest));
        }
        data.insert("nextStep".into(), json!(NONE_NEXT_STEP));
    }
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
    let popular = if browsing {
        popular(dispatcher, session)
    } else {
        Vec::new()
    };
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
    if !popular.is_empty() {
        data.insert("popular".into(), json!(popular));
    }
    (Value::Object(data), reasoning)
}

/// The most called commands the session may call, most first.
fn popular(dispatcher: &Dispatcher, session: Option<&SessionState>) -> Vec<PopularCommand> {
    let usage = dispatcher.usage();
    if !usage.is_enabled() {
        return Vec::new();
    }
    let contexts = dispatcher.registry().contexts();
    // A few more than shown: some may be hidden here or outside the session's context.
    usage
        .most_used(POPULAR * 4)
        .into_iter()
        .filter(|(name, _)| {
            dispatcher.registry().get(name).is_some_and(|entry| {
                dispatcher.is_exposed(entry.name())
                    && (contexts.is_empty() || dispatcher.allows(session, entry.def()))
            })
        })
        .take(POPULAR)
        .map(|(command, stats)| PopularCommand {
            command,
            calls: stats.calls,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::meta::MetaTools;
    use futures_util::FutureExt;

    fn record_handler(
        _input: Value,
        _ctx: crate::command_context::CommandContext,
    ) -> crate::command::HandlerFuture {
        Box::pin(std::future::ready(crate::result::CommandResult::success(
            json!([]),
        )))
    }

    fn record_schema() -> Value {
        json!({"type": "object", "properties": {}})
    }

    #[test]
    fn a_search_matching_more_than_a_pool_pages_as_the_exhaustive_one_does() {
        // 300 commands that all match "records": the unfiltered search ranks only the best
        // SEARCH_POOL, a search filtered by a category holding them all ranks every hit.
        let defs: Vec<&'static crate::command::CommandDef> = (0..300)
            .map(|i| {
                let name: &'static str =
                    Box::leak(format!("records-export-{i:03}").into_boxed_str());
                let description: &'static str =
                    Box::leak(format!("Export records of batch {i} as a file.").into_boxed_str());
                let def = crate::command::CommandDef::new(
                    name,
                    description,
                    record_handler,
                    record_schema,
                    crate::command::SourceLocation {
                        file: file!(),
                        line: line!(),
                        column: 1,
                        module_path: module_path!(),
                    },
                )
                .with_category("records");
                &*Box::leak(Box::new(def))
            })
            .collect();
        let registry: &'static crate::registry::Registry = Box::leak(Box::new(
            crate::registry::Registry::builder()
                .register_all(defs)
                .build()
                .unwrap(),
        ));
        let d = Dispatcher::builder(registry).build().unwrap();
        let pooled = d
            .discover(json!({"search": "export records", "limit": 10, "offset": 20}))
            .now_or_never()
            .expect("in-memory sessions answer at once")
            .data
            .unwrap();
        let exhaustive = d
            .discover(
                json!({"search": "export records", "limit": 10, "offset": 20, "category": "records"}),
            )
            .now_or_never()
            .expect("in-memory sessions answer at once")
            .data
            .unwrap();
        assert_eq!(pooled["commands"], exhaustive["commands"]);
        assert_eq!(exhaustive["filtered"], 300);
        assert_eq!(pooled["filtered"], SEARCH_POOL);
        assert_eq!(pooled["hasMore"], true);
        assert_eq!(pooled["returned"], 10);
    }
}
