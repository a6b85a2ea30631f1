//! How a handler's questions reach a client that is asked by answer rather than by request
//! (MCP 2026-07-28): the capabilities a request declared ([`Declared`]), each question as
//! the wire carries it (`{method, params}` under a key) and the reading of the client's
//! answer. An [`Asker`] decides what happens to a question: a call's round records it and
//! ends the call `input_required` ([`rounds`](super::rounds)); a task parks until the client
//! answers it ([`tasks`](super::tasks)). Every asker is a [`ClientRequests`] through the
//! one implementation here.

use std::collections::HashMap;
use std::sync::Mutex;

use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
#[allow(deprecated)]
use rmcp::model::{CreateMessageRequestParams, ElicitationSchema};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use crate::client::{ClientRequests, Elicitation, Root, SamplingRequest, SamplingResponse};
use crate::error::CommandError;

/// The client capabilities a 2026-07-28 request declared in its `_meta` (or a session's
/// client at `initialize`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(in crate::mcp) struct Declared {
    pub(in crate::mcp) sampling: bool,
    pub(in crate::mcp) elicitation: bool,
    pub(in crate::mcp) roots: bool,
    /// The tasks extension (`extensions["io.modelcontextprotocol/tasks"]`).
    pub(in crate::mcp) tasks: bool,
}

impl Declared {
    /// What `capabilities` (a `clientCapabilities` object) declares.
    pub(in crate::mcp) fn of(capabilities: Option<&Value>) -> Declared {
        let has = |name: &str| {
            capabilities
                .and_then(|capabilities| capabilities.get(name))
                .is_some_and(|value| !value.is_null())
        };
        let tasks = capabilities
            .and_then(|capabilities| capabilities.get("extensions"))
            .and_then(|extensions| extensions.get(rmcp::model::TASKS_EXTENSION_ID))
            .is_some_and(|value| !value.is_null());
        Declared {
            sampling: has("sampling"),
            elicitation: has("elicitation"),
            roots: has("roots"),
            tasks,
        }
    }

    /// Whether the client declared anything a handler may ask it (sampling, elicitation,
    /// roots); the tasks extension alone is not.
    pub(in crate::mcp) fn can_be_asked(self) -> bool {
        self.sampling || self.elicitation || self.roots
    }

    /// Whether the capability `need` (as `needs_client(...)` names it) was declared.
    pub(in crate::mcp) fn has(self, need: &str) -> bool {
        match need {
            "sampling" => self.sampling,
            "elicitation" => self.elicitation,
            "roots" => self.roots,
            _ => false,
        }
    }
}

/// Where a handler's questions go on the stateless wire.
pub(in crate::mcp) trait Asker: Send + Sync + 'static {
    /// What the client declared it can answer.
    fn declared(&self) -> Declared;

    /// The key of a question: the handler's (`given`), or one derived from the question
    /// of kind `kind` (`"elicit"`, `"sample"`, `"roots"`) with `params`.
    fn key(&self, given: Option<&str>, kind: &str, params: &Value) -> String;

    /// The client's answer to the question `method` with `params` under `key`.
    fn answer(
        &self,
        key: String,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<'_, Result<Value, CommandError>>;

    /// The error of an answer under `key` that is not `what` the question needs.
    fn invalid(&self, key: &str, what: &str) -> CommandError;

    /// See [`ClientRequests::continue_as_task`].
    fn continue_as_task(&self) -> BoxFuture<'_, bool> {
        Box::pin(async { false })
    }
}

/// The keys of the questions one asker puts: the handler's own, or one derived from the
/// question (its kind and a digest of it), a repeat of the same question getting `-2`,
/// `-3`.
#[derive(Default)]
pub(in crate::mcp) struct Keys {
    /// How often each derived key was asked.
    derived: Mutex<HashMap<String, u32>>,
}

impl Keys {
    /// The key of a question of `kind` with `params`: `given`, or a derived one.
    pub(in crate::mcp) fn key(&self, given: Option<&str>, kind: &str, params: &Value) -> String {
        if let Some(key) = given {
            return key.to_owned();
        }
        let mut canonical = Vec::new();
        write_canonical(&mut canonical, params);
        let digest = Sha256::digest(&canonical);
        let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
        let base = format!("{kind}-{hex}");
        let mut derived = self.derived.lock().unwrap_or_else(|e| e.into_inner());
        let seen = derived.entry(base.clone()).or_insert(0);
        *seen += 1;
        match *seen {
            1 => base,
            n => format!("{base}-{n}"),
        }
    }
}

/// `value` as JSON with object keys sorted: the same bytes for the same value, whatever
/// order its members were written in.
pub(in crate::mcp) fn write_canonical(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push(b'{');
            for (index, key) in keys.into_iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, key).expect("a string serialises");
                out.push(b':');
                write_canonical(out, &map[key]);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_canonical(out, item);
            }
            out.push(b']');
        }
        other => serde_json::to_writer(&mut *out, other).expect("a JSON value serialises"),
    }
}

impl<A: Asker> ClientRequests for A {
    fn can_sample(&self) -> bool {
        self.declared().sampling
    }

    fn sample(
        &self,
        request: SamplingRequest,
    ) -> BoxFuture<'_, Result<SamplingResponse, CommandError>> {
        self.sample_keyed(None, request)
    }

    #[allow(deprecated)]
    fn sample_keyed(
        &self,
        key: Option<&str>,
        request: SamplingRequest,
    ) -> BoxFuture<'_, Result<SamplingResponse, CommandError>> {
        let key = key.map(str::to_owned);
        async move {
            // As rmcp writes the request on the 2025-11-25 wire.
            let params = serde_json::to_value(&request)
                .and_then(serde_json::from_value::<CreateMessageRequestParams>)
                .and_then(|params| serde_json::to_value(&params))
                .map_err(|error| {
                    CommandError::internal(format!("invalid sampling request: {error}"))
                })?;
            let key = self.key(key.as_deref(), "sample", &params);
            let mut answer = self
                .answer(key.clone(), "sampling/createMessage", params)
                .await?;
            // A client may answer with a list of blocks; the first one is the answer.
            if let Some(first) = answer
                .get_mut("content")
                .and_then(Value::as_array_mut)
                .and_then(|blocks| (!blocks.is_empty()).then(|| blocks.remove(0)))
            {
                answer["content"] = first;
            }
            serde_json::from_value(answer).map_err(|_| self.invalid(&key, "a sampling result"))
        }
        .boxed()
    }

    fn can_elicit(&self) -> bool {
        self.declared().elicitation
    }

    fn elicit(
        &self,
        message: String,
        schema: Value,
    ) -> BoxFuture<'_, Result<Elicitation<Value>, CommandError>> {
        self.elicit_keyed(None, message, schema)
    }

    fn elicit_keyed(
        &self,
        key: Option<&str>,
        message: String,
        schema: Value,
    ) -> BoxFuture<'_, Result<Elicitation<Value>, CommandError>> {
        let key = key.map(str::to_owned);
        async move {
            // Checked as the client will read it, so a form it could not show fails here,
            // in the handler, as it would on the 2025-11-25 wire.
            if let Err(error) = serde_json::from_value::<ElicitationSchema>(schema.clone()) {
                return Err(CommandError::internal(format!(
                    "the form is not a valid elicitation schema: {error}"
                )));
            }
            let params = json!({"mode": "form", "message": message, "requestedSchema": schema});
            let key = self.key(key.as_deref(), "elicit", &params);
            let answer = self
                .answer(key.clone(), "elicitation/create", params)
                .await?;
            elicitation(answer).ok_or_else(|| self.invalid(&key, "an elicitation result"))
        }
        .boxed()
    }

    fn can_list_roots(&self) -> bool {
        self.declared().roots
    }

    fn list_roots(&self, key: Option<&str>) -> BoxFuture<'_, Result<Vec<Root>, CommandError>> {
        let key = key.map(str::to_owned);
        async move {
            let params = json!({});
            let key = self.key(key.as_deref(), "roots", &params);
            let answer = self.answer(key.clone(), "roots/list", params).await?;
            #[derive(Deserialize)]
            struct Roots {
                roots: Vec<Root>,
            }
            serde_json::from_value::<Roots>(answer)
                .map(|roots| roots.roots)
                .map_err(|_| self.invalid(&key, "a roots/list result"))
        }
        .boxed()
    }

    fn continue_as_task(&self) -> BoxFuture<'_, bool> {
        Asker::continue_as_task(self)
    }
}

/// An `ElicitResult` (`{action, content?}`) as the handler sees it; `None` if it is not one.
fn elicitation(answer: Value) -> Option<Elicitation<Value>> {
    let Value::Object(mut answer) = answer else {
        return None;
    };
    match answer.get("action").and_then(Value::as_str)? {
        "accept" => match answer.remove("content") {
            None | Some(Value::Null) => Some(Elicitation::Accept(json!({}))),
            Some(content @ Value::Object(_)) => Some(Elicitation::Accept(content)),
            Some(_) => None,
        },
        "decline" => Some(Elicitation::Decline),
        "cancel" => Some(Elicitation::Cancel),
        _ => None,
    }
}
