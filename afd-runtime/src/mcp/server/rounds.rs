//! Questions to the client on MCP 2026-07-28's stateless wire (multi-round-trip requests):
//! a handler's `ctx.elicit`, `ctx.sample` and `ctx.roots` cannot be sent to the client as
//! the call runs, so the call is answered `input_required` with every question asked and
//! not yet answered, and a sealed `requestState`; the client calls again with the answers
//! (`inputResponses`) and the state, and the handler runs again from the start, this time
//! finding its answers.
//!
//! [`RoundClient`] is the handler's client for one such round; [`Rounds`] seals and opens
//! the state: the answers the call has used so far, signed (rmcp's HMAC codec), bound to
//! the request (method, target, arguments, caller) and limited in size and lifetime, so a
//! state that was altered, replayed for another request or kept too long is refused and
//! any replica holding the same keys resumes the call.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use futures_util::future::BoxFuture;
use rmcp::model::{
    ErrorCode, ErrorData, InputRequests, InputRequiredResult, RequestStateCodec, SealOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};

use super::asking::{Asker, Declared, Keys, write_canonical};
use crate::error::{CommandError, codes};

/// How long a sealed state may be brought back, unless the builder says otherwise.
pub(in crate::mcp) const DEFAULT_STATE_TTL: Duration = Duration::from_secs(600);

/// The largest `requestState` taken back, in bytes; a larger one is refused unread.
pub(in crate::mcp) const MAX_STATE_BYTES: usize = 64 * 1024;

/// The most rounds one call may take before it is stopped (a handler whose question
/// changes every round would otherwise ask for ever).
const MAX_ROUNDS: u32 = 16;

/// What a round's state carries: the answers the call used so far and how many rounds it
/// took. Signed, not encrypted: it holds nothing the client did not send.
#[derive(Serialize, Deserialize, Default)]
struct State {
    v: u8,
    round: u32,
    answers: BTreeMap<String, Value>,
}

/// The server's sealing of request states: its keys and the state's lifetime.
pub(in crate::mcp) struct Rounds {
    codec: RequestStateCodec,
    ttl: Duration,
}

impl std::fmt::Debug for Rounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rounds").field("ttl", &self.ttl).finish()
    }
}

/// What identifies the request a state belongs to: a state opens only for the same method,
/// target, arguments and caller. Holds the associated data the state is sealed with,
/// never stored and recomputed each round.
pub(in crate::mcp) struct Bound {
    associated: Vec<u8>,
}

impl Bound {
    /// The request `method` of `target` with `arguments`, by the caller `subject`.
    pub(in crate::mcp) fn new(
        method: &str,
        target: &str,
        arguments: &Value,
        subject: Option<&str>,
    ) -> Bound {
        let mut canonical = Vec::new();
        write_canonical(&mut canonical, arguments);
        let digest = Sha256::digest(&canonical);
        let mut associated = b"afd-rounds/1\0".to_vec();
        for part in [method, target, subject.unwrap_or("-")] {
            associated.extend_from_slice(part.as_bytes());
            associated.push(0);
        }
        associated.extend_from_slice(&digest);
        Bound { associated }
    }
}

impl Rounds {
    /// Sealing with `codec`, states living `ttl`.
    pub(in crate::mcp) fn new(codec: RequestStateCodec, ttl: Duration) -> Self {
        Rounds { codec, ttl }
    }

    /// A process's own key, from the OS random source: states resume on this process only.
    ///
    /// # Errors
    ///
    /// When the OS random source cannot be read (no weaker key is made instead).
    pub(in crate::mcp) fn random(ttl: Duration) -> Result<Self, getrandom::Error> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key)?;
        Ok(Rounds::new(
            RequestStateCodec::new_unchecked(key.to_vec()),
            ttl,
        ))
    }

    /// Sealing with the key ring `keys` (key id, secret of at least 32 bytes): the first
    /// signs, every one opens, so keys can be rotated by adding the new one first.
    ///
    /// # Errors
    ///
    /// An empty ring, a repeated or invalid id, or a key shorter than 32 bytes.
    pub(in crate::mcp) fn with_keys(
        keys: &[(String, Vec<u8>)],
        ttl: Duration,
    ) -> Result<Self, String> {
        let (active, _) = keys.first().ok_or("no key given")?;
        let codec = RequestStateCodec::new_with_keyring(
            active.clone(),
            keys.iter().map(|(kid, key)| (kid.clone(), key.clone())),
        )
        .map_err(|error| error.to_string())?;
        Ok(Rounds::new(codec, ttl))
    }

    /// Parses `AFD_REQUEST_STATE_KEYS`' form: `kid:base64,kid:base64`, the first signing.
    pub(in crate::mcp) fn parse_keys(text: &str) -> Result<Vec<(String, Vec<u8>)>, String> {
        use base64::Engine as _;
        text.split(',')
            .map(str::trim)
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (kid, key) = pair
                    .split_once(':')
                    .ok_or("each key is written `id:base64`")?;
                let key = base64::engine::general_purpose::STANDARD
                    .decode(key.trim())
                    .or_else(|_| {
                        base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(key.trim())
                    })
                    .map_err(|_| format!("the key `{}` is not base64", kid.trim()))?;
                Ok((kid.trim().to_owned(), key))
            })
            .collect()
    }

    /// The client of a round of the request `bound`: the capabilities the request declared
    /// and the answers it brought (`responses`) beside those its `state` carries.
    ///
    /// # Errors
    ///
    /// -32602 when the state is too large, altered, expired or sealed for another request,
    /// or the responses are not an object of answers.
    pub(in crate::mcp) fn client(
        &self,
        bound: &Bound,
        declared: Declared,
        responses: Option<&Value>,
        state: Option<&str>,
    ) -> Result<RoundClient, ErrorData> {
        let mut carried = match state {
            None => State::default(),
            Some(state) => self.open(bound, state)?,
        };
        if carried.round >= MAX_ROUNDS {
            return Err(ErrorData::invalid_params(
                format!(
                    "the call asked the client for input {MAX_ROUNDS} times without completing; it was stopped"
                ),
                Some(json!({"reason": "too-many-rounds"})),
            ));
        }
        match responses {
            None | Some(Value::Null) => {}
            Some(Value::Object(answers)) => {
                for (key, answer) in answers {
                    carried.answers.insert(key.clone(), answer.clone());
                }
            }
            Some(_) => {
                return Err(ErrorData::invalid_params(
                    "inputResponses must be an object of answers by key",
                    None,
                ));
            }
        }
        Ok(RoundClient {
            declared,
            within: None,
            round: carried.round,
            answers: carried.answers,
            track: Mutex::default(),
            keys: Keys::default(),
        })
    }

    fn open(&self, bound: &Bound, state: &str) -> Result<State, ErrorData> {
        let refused = |reason: &str| {
            ErrorData::invalid_params(
                "requestState is not one this server issued for this request: it was altered, has expired, or belongs to another call. Call again without it to start over",
                Some(json!({"reason": reason})),
            )
        };
        if state.len() > MAX_STATE_BYTES {
            return Err(refused("too-large"));
        }
        self.codec
            .open_json_with::<State>(state, &bound.associated)
            .map_err(|error| match error {
                rmcp::model::RequestStateError::Expired => refused("expired"),
                _ => refused("invalid"),
            })
    }

    /// What `round` came to once its handler returned: `None` when nothing was left
    /// unanswered (the handler's answer stands), else the `input_required` answer.
    ///
    /// # Errors
    ///
    /// -32602 when an answer does not answer its question.
    pub(in crate::mcp) fn settle(
        &self,
        bound: &Bound,
        round: &RoundClient,
    ) -> Result<Option<InputRequiredResult>, ErrorData> {
        match round.outcome() {
            Outcome::Complete => Ok(None),
            Outcome::Invalid(key) => Err(invalid_answer(&key)),
            Outcome::Asked => self.input_required(bound, round).map(Some),
        }
    }

    /// The answer to a round that asked: every question without an answer, and the state
    /// that carries the answers used so far into the next round.
    fn input_required(
        &self,
        bound: &Bound,
        round: &RoundClient,
    ) -> Result<InputRequiredResult, ErrorData> {
        let track = round.track.lock().unwrap_or_else(|e| e.into_inner());
        let requests: InputRequests = serde_json::from_value(Value::Object(
            track
                .asked
                .iter()
                .map(|(key, request)| (key.clone(), request.clone()))
                .collect::<Map<_, _>>(),
        ))
        .map_err(|error| ErrorData::internal_error(format!("input request: {error}"), None))?;
        let state = State {
            v: 1,
            round: round.round + 1,
            answers: track.used.clone(),
        };
        let options = SealOptions::new()
            .associated_data(&bound.associated)
            .ttl(self.ttl);
        let sealed = self
            .codec
            .seal_json_with(&state, &options)
            .map_err(|error| ErrorData::internal_error(format!("requestState: {error}"), None))?;
        Ok(InputRequiredResult::new(Some(requests), Some(sealed)))
    }
}

/// What one round of a call asked and used.
#[derive(Default)]
struct Track {
    /// The questions without an answer, by key, as input requests.
    asked: BTreeMap<String, Value>,
    /// The answers the call used, by key: the next round's state.
    used: BTreeMap<String, Value>,
    /// The key of an answer that is not an answer to its question.
    invalid: Option<String>,
}

/// A handler's client for one round of a call on the stateless wire: a question with an
/// answer in the request (or its state) gets it at once; one without is recorded and fails
/// with `INPUT_REQUIRED` at once, so the call ends and is answered `input_required`. Several
/// questions asked together (`join!`) are all recorded in the same round.
pub(in crate::mcp) struct RoundClient {
    declared: Declared,
    /// The built-in tool the call runs in, where a question cannot pause it (afd-batch and
    /// afd-pipe: their finished steps would run again on the next round).
    within: Option<&'static str>,
    round: u32,
    answers: BTreeMap<String, Value>,
    track: Mutex<Track>,
    /// The keys of its questions (the same question asked twice gets `-2`).
    keys: Keys,
}

/// What a round came to, once the handler has returned.
enum Outcome {
    /// Nothing was left unanswered: the handler's answer stands.
    Complete,
    /// Questions are waiting for the client.
    Asked,
    /// The answer under this key is not an answer to its question.
    Invalid(String),
}

impl RoundClient {
    /// The client of a call inside `tool`, which a question cannot pause: a question
    /// without an answer fails at once, saying why, instead of pausing the call.
    pub(in crate::mcp) fn within(mut self, tool: &'static str) -> Self {
        self.within = Some(tool);
        self
    }

    /// What the round came to.
    fn outcome(&self) -> Outcome {
        let track = self.track.lock().unwrap_or_else(|e| e.into_inner());
        match (&track.invalid, track.asked.is_empty()) {
            (Some(key), _) => Outcome::Invalid(key.clone()),
            (None, false) => Outcome::Asked,
            (None, true) => Outcome::Complete,
        }
    }
}

impl Asker for RoundClient {
    fn declared(&self) -> Declared {
        self.declared
    }

    fn key(&self, given: Option<&str>, kind: &str, params: &Value) -> String {
        self.keys.key(given, kind, params)
    }

    /// The answer under `key`, or the question recorded and `INPUT_REQUIRED`.
    fn answer(
        &self,
        key: String,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<'_, Result<Value, CommandError>> {
        Box::pin(std::future::ready(self.answer_now(key, method, params)))
    }

    fn invalid(&self, key: &str, what: &str) -> CommandError {
        let mut track = self.track.lock().unwrap_or_else(|e| e.into_inner());
        track.invalid.get_or_insert_with(|| key.to_owned());
        CommandError::new(
            codes::VALIDATION_ERROR,
            format!("The client's answer under `{key}` is not {what}"),
        )
        .with_retryable(false)
    }
}

impl RoundClient {
    /// The answer under `key`, or the question recorded and `INPUT_REQUIRED`.
    fn answer_now(&self, key: String, method: &str, params: Value) -> Result<Value, CommandError> {
        let mut track = self.track.lock().unwrap_or_else(|e| e.into_inner());
        match self.answers.get(&key) {
            Some(answer) => {
                track.used.insert(key, answer.clone());
                Ok(answer.clone())
            }
            None if self.within.is_some() => {
                let tool = self.within.unwrap_or_default();
                Err(CommandError::new(
                    codes::INPUT_REQUIRED,
                    format!(
                        "A step asked the client for input (`{key}`), which cannot pause {tool} on MCP 2026-07-28: its finished steps would run again when the client answers"
                    ),
                )
                .with_suggestion("Call the command that asks on its own (directly or through afd-call); it resumes when the client answers.")
                .with_retryable(false))
            }
            None => {
                track
                    .asked
                    .insert(key.clone(), json!({"method": method, "params": params}));
                Err(input_required(&key))
            }
        }
    }
}

/// The error a question without an answer yet returns to the handler.
fn input_required(key: &str) -> CommandError {
    CommandError::new(
        codes::INPUT_REQUIRED,
        format!("The call waits for the client's answer to `{key}`"),
    )
    .with_suggestion("Let the error return: the call resumes when the client answers.")
    .with_retryable(false)
}

/// The JSON-RPC error of an answer that does not answer its question.
fn invalid_answer(key: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::INVALID_PARAMS,
        format!("inputResponses[\"{key}\"] is not an answer to the question asked under that key"),
        Some(json!({"key": key})),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{ClientRequests as _, Elicitation};

    fn bound(arguments: &Value) -> Bound {
        Bound::new("tools/call", "t", arguments, None)
    }

    fn form() -> Value {
        json!({"type": "object", "properties": {"name": {"type": "string"}}})
    }

    fn declared() -> Declared {
        Declared {
            sampling: true,
            elicitation: true,
            roots: true,
            tasks: false,
        }
    }

    #[tokio::test]
    async fn a_question_without_an_answer_is_recorded_and_resumes_with_one() {
        let rounds = Rounds::random(DEFAULT_STATE_TTL).unwrap();
        let arguments = json!({"a": 1, "b": [1, {"c": 2}]});
        let client = rounds
            .client(&bound(&arguments), declared(), None, None)
            .unwrap();
        let error = client
            .elicit_keyed(Some("name"), "Name?".into(), form())
            .await
            .unwrap_err();
        assert_eq!(error.code, codes::INPUT_REQUIRED);
        assert!(matches!(client.outcome(), Outcome::Asked));
        let asked = rounds.input_required(&bound(&arguments), &client).unwrap();
        let wire = serde_json::to_value(&asked).unwrap();
        assert_eq!(wire["resultType"], "input_required");
        assert_eq!(
            wire["inputRequests"]["name"]["method"],
            "elicitation/create"
        );
        let state = asked.request_state.unwrap();

        // The same arguments in another key order open the state.
        let reordered = json!({"b": [1, {"c": 2}], "a": 1});
        let responses = json!({"name": {"action": "accept", "content": {"name": "Al"}}});
        let client = rounds
            .client(
                &bound(&reordered),
                declared(),
                Some(&responses),
                Some(&state),
            )
            .unwrap();
        let answer = client
            .elicit_keyed(Some("name"), "Name?".into(), form())
            .await
            .unwrap();
        assert_eq!(answer, Elicitation::Accept(json!({"name": "Al"})));
        assert!(matches!(client.outcome(), Outcome::Complete));
    }

    #[test]
    fn a_state_altered_or_for_other_arguments_is_refused() {
        let rounds = Rounds::random(DEFAULT_STATE_TTL).unwrap();
        let arguments = json!({"a": 1});
        let client = rounds
            .client(&bound(&arguments), declared(), None, None)
            .unwrap();
        let sealed = rounds
            .input_required(&bound(&arguments), &client)
            .unwrap()
            .request_state
            .unwrap();
        let tampered = format!("{sealed}-TAMPERED");
        let refused = rounds
            .client(&bound(&arguments), declared(), None, Some(&tampered))
            .err()
            .unwrap();
        assert_eq!(refused.code, ErrorCode::INVALID_PARAMS);
        let other = json!({"a": 2});
        assert!(
            rounds
                .client(&bound(&other), declared(), None, Some(&sealed))
                .is_err()
        );
        let elsewhere = Rounds::random(DEFAULT_STATE_TTL).unwrap();
        assert!(
            elsewhere
                .client(&bound(&arguments), declared(), None, Some(&sealed))
                .is_err()
        );
        let huge = "x".repeat(MAX_STATE_BYTES + 1);
        assert_eq!(
            rounds
                .client(&bound(&arguments), declared(), None, Some(&huge))
                .err()
                .unwrap()
                .data
                .unwrap()["reason"],
            "too-large"
        );
    }

    #[test]
    fn a_state_opens_only_for_the_caller_it_was_sealed_for() {
        let rounds = Rounds::random(DEFAULT_STATE_TTL).unwrap();
        let arguments = json!({});
        let alice = Bound::new("tools/call", "t", &arguments, Some("alice"));
        let bob = Bound::new("tools/call", "t", &arguments, Some("bob"));
        let client = rounds.client(&alice, declared(), None, None).unwrap();
        let sealed = rounds
            .input_required(&alice, &client)
            .unwrap()
            .request_state
            .unwrap();
        assert!(
            rounds
                .client(&alice, declared(), None, Some(&sealed))
                .is_ok()
        );
        assert!(
            rounds
                .client(&bob, declared(), None, Some(&sealed))
                .is_err()
        );
        let prompt = Bound::new("prompts/get", "t", &arguments, Some("alice"));
        assert!(
            rounds
                .client(&prompt, declared(), None, Some(&sealed))
                .is_err()
        );
    }

    #[test]
    fn keys_rotate_the_new_one_signing_and_the_old_one_still_opening() {
        use base64::Engine as _;
        let encode = |byte: u8| base64::engine::general_purpose::STANDARD.encode([byte; 32]);
        let old = Rounds::parse_keys(&format!("old:{}", encode(1))).unwrap();
        let both = Rounds::parse_keys(&format!("new:{}, old:{}", encode(2), encode(1))).unwrap();
        assert_eq!(both[0].0, "new");
        let before = Rounds::with_keys(&old, DEFAULT_STATE_TTL).unwrap();
        let after = Rounds::with_keys(&both, DEFAULT_STATE_TTL).unwrap();
        let arguments = json!({});
        let bound = bound(&arguments);
        let client = before.client(&bound, declared(), None, None).unwrap();
        let sealed = before
            .input_required(&bound, &client)
            .unwrap()
            .request_state
            .unwrap();
        assert!(
            after
                .client(&bound, declared(), None, Some(&sealed))
                .is_ok()
        );
        assert!(Rounds::with_keys(&[("short".into(), vec![0; 8])], DEFAULT_STATE_TTL).is_err());
        assert!(Rounds::parse_keys("no-colon").is_err());
    }

    #[tokio::test]
    async fn an_answer_of_the_wrong_shape_is_invalid() {
        let rounds = Rounds::random(DEFAULT_STATE_TTL).unwrap();
        let arguments = json!({});
        let responses = json!({"k": 12345});
        let client = rounds
            .client(&bound(&arguments), declared(), Some(&responses), None)
            .unwrap();
        assert!(
            client
                .elicit_keyed(Some("k"), "?".into(), form())
                .await
                .is_err()
        );
        assert!(matches!(client.outcome(), Outcome::Invalid(key) if key == "k"));
    }

    #[tokio::test]
    async fn derived_keys_name_the_question_and_count_repeats() {
        let rounds = Rounds::random(DEFAULT_STATE_TTL).unwrap();
        let arguments = json!({});
        let client = rounds
            .client(&bound(&arguments), declared(), None, None)
            .unwrap();
        let _ = client.list_roots(None).await;
        let _ = client.list_roots(None).await;
        let track = client.track.lock().unwrap();
        let keys: Vec<&String> = track.asked.keys().collect();
        assert_eq!(keys.len(), 2);
        assert!(keys[0].starts_with("roots-") && keys[1].ends_with("-2"));
    }
}
