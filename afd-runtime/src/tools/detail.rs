//! afd-detail: the full definition and input schema of up to ten commands, in the order
//! asked, with what usage statistics say of each (the commands used with it, those that
//! follow it), and the activation of those commands for a session's tool listing.

use std::sync::LazyLock;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{Value, json};

use super::discover::{OneOrMany, SUGGESTED};
use super::{finish, validated};
use crate::dispatch::Dispatcher;
use crate::export::insert_facts;
use crate::result::CommandResult;
use crate::similarity::did_you_mean;
use crate::usage::{AccessLevel, Suggestion};
use crate::validate::InputValidator;

/// Most names one afd-detail call resolves.
pub const MAX_DETAIL_NAMES: usize = 10;
/// Most related commands afd-detail names for a command.
const RELATED: usize = 5;
/// A command is related when it was used in at least this share of the sessions that used
/// the command described...
const RELATED_MIN_RATE: f32 = 0.3;
/// ...and in at least this many of them: one shared session is chance.
const RELATED_MIN_SESSIONS: u64 = 2;

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

static DETAIL_VALIDATOR: LazyLock<InputValidator> =
    LazyLock::new(|| InputValidator::new(detail_schema()).expect("the afd-detail schema compiles"));

/// afd-detail: the full definition and input schema of up to ten commands, in the
/// order asked. Works for every registered command (`callable` says whether this
/// dispatcher lets it be called); unknown names get `found: false` with suggestions.
pub(crate) async fn detail(dispatcher: &Dispatcher, input: Value) -> CommandResult<Value> {
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
    let entries: Vec<Value> = names
        .iter()
        .map(|name| detail_entry(dispatcher, name))
        .collect();
    let described: Vec<&str> = names
        .iter()
        .filter_map(|name| dispatcher.lookup(name))
        .map(|resolved| resolved.entry.name())
        .collect();
    dispatcher
        .usage()
        .record_access(&described, AccessLevel::Full);
    let found = entries
        .iter()
        .filter(|entry| entry["found"] == true)
        .count();
    let mut reasoning = format!("Resolved {found} of {} requested commands", names.len());
    if let Some(activate) = input.activate {
        let session = input.session.as_deref();
        let outcome = if activate {
            dispatcher.activate(session, &names).await.map(|(activated, evicted)| {
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
            dispatcher
                .deactivate(session, Some(&names))
                .await
                .map(|gone| format!("; deactivated {}", gone.len()))
        };
        match outcome {
            Ok(text) => reasoning.push_str(&text),
            Err(error) => return CommandResult::failure(error),
        }
    }
    finish(Ok(Value::Array(entries)), reasoning, started)
}

fn detail_entry(dispatcher: &Dispatcher, name: &str) -> Value {
    let Some(entry) = dispatcher.lookup(name).map(|resolved| resolved.entry) else {
        let similar = dispatcher.suggest(name, 3);
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
        Value::Bool(dispatcher.is_exposed(entry.name())),
    );
    if def.is_destructive() {
        object.insert("destructive".into(), json!(true));
    } else if def.is_mutation() {
        object.insert("destructive".into(), json!(false));
    }
    object.insert("risk".into(), json!(def.risk().as_str()));
    let scopes = dispatcher.required_scopes(def);
    if !scopes.is_empty() {
        object.insert("scopes".into(), json!(scopes));
    }
    insert_facts(&mut object, def);
    let usage = dispatcher.usage();
    let callable = |suggestion: &Suggestion| dispatcher.is_exposed(&suggestion.command);
    let related: Vec<Suggestion> = usage
        .related(entry.name(), RELATED * 2)
        .into_iter()
        .filter(|related| {
            related.probability >= RELATED_MIN_RATE
                && related.count >= RELATED_MIN_SESSIONS
                && callable(related)
        })
        .take(RELATED)
        .collect();
    if !related.is_empty() {
        object.insert("relatedCommands".into(), json!(related));
    }
    let next: Vec<Suggestion> = usage
        .next_after(entry.name(), SUGGESTED * 2)
        .into_iter()
        .filter(callable)
        .take(SUGGESTED)
        .collect();
    if !next.is_empty() {
        object.insert("suggestedNext".into(), json!(next));
    }
    Value::Object(object)
}
