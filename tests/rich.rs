//! Rich results and handlers that talk to their client.
//!
//! In process: content-only results through the dispatcher, a host's own
//! [`ClientRequests`] answering sampling and elicitation, log levels, confirmation by
//! elicitation (declined, cancelled, accepted) and the errors of a caller that can do
//! neither.
//!
//! Through the official MCP Python client (`tests/interop/rich.py` against
//! `tests/bin/client_fixture.rs`, over stdio and streamable HTTP): content blocks of every
//! kind, `logging/setLevel` with messages above and below it and `tracing` events,
//! progress, sampling and elicitation with a client that supports them and one that does
//! not, and confirmation by elicitation. It needs `AFD_INTEROP_PYTHON` (a Python with the
//! `mcp` package, which `.ci/run` installs); without it the test says so, and fails under
//! `CI`. By hand:
//!
//! ```sh
//! AFD_INTEROP_PYTHON=.venv/bin/python cargo test -p afd-tests --test rich
//! ```

use std::sync::{Arc, Mutex};

use afd_runtime::client::{
    ClientRequests, Elicitation, LogLevel, LogMessage, LogSink, SamplingRequest, SamplingResponse,
};
use afd_runtime::prelude::*;
use afd_runtime::{CommandResult, Content, Dispatcher, NoData, codes};
use futures_util::future::BoxFuture;

/// Returns a chart only.
#[command(category = "rich")]
fn picture() -> CommandResult<NoData> {
    CommandResult::content_only([Content::image([1u8, 2, 3], "image/png")])
}

/// Logs at two levels.
#[command(category = "rich")]
async fn chatty(ctx: &CommandContext) -> bool {
    ctx.log(LogLevel::Debug, "details").await;
    ctx.log(LogLevel::Error, json!({"failed": 1})).await;
    ctx.wants_log(LogLevel::Debug)
}

/// Asks the model for a title.
#[command(category = "rich")]
async fn titled(ctx: &CommandContext) -> Result<String, CommandError> {
    let answer = ctx
        .sample(SamplingRequest::new("A title, please", 20).with_system_prompt("Be brief."))
        .await?;
    Ok(answer.text().unwrap_or_default().to_owned())
}

/// What the user picks.
#[derive(Debug, Deserialize, JsonSchema)]
struct Pick {
    /// How many.
    count: u8,
}

/// Asks the user how many.
#[command(category = "rich")]
async fn how_many(ctx: &CommandContext) -> Result<String, CommandError> {
    Ok(match ctx.elicit::<Pick>("How many?").await? {
        Elicitation::Accept(pick) => format!("{} picked", pick.count),
        other => other.action().to_owned(),
    })
}

#[derive(Deserialize, JsonSchema)]
struct Target {
    id: u32,
}

/// Deletes a record.
#[command(
    category = "rich",
    mutation,
    destructive,
    confirm_prompt = "Delete record {id}?"
)]
fn wipe(input: Target) -> String {
    format!("wiped {}", input.id)
}

fn dispatcher() -> Dispatcher {
    Dispatcher::builder(Registry::global()).build().unwrap()
}

/// A host's own client: answers sampling with a fixed text, and forms from a script.
#[derive(Default)]
struct Scripted {
    answers: Mutex<Vec<Elicitation<Value>>>,
    asked: Mutex<Vec<(String, Value)>>,
    sampled: Mutex<Vec<SamplingRequest>>,
}

impl ClientRequests for Scripted {
    fn can_sample(&self) -> bool {
        true
    }

    fn sample(
        &self,
        request: SamplingRequest,
    ) -> BoxFuture<'_, Result<SamplingResponse, CommandError>> {
        self.sampled.lock().unwrap().push(request);
        Box::pin(async {
            Ok(SamplingResponse::new(
                Content::text("Q3 report"),
                "scripted",
            ))
        })
    }

    fn can_elicit(&self) -> bool {
        true
    }

    fn elicit(
        &self,
        message: String,
        schema: Value,
    ) -> BoxFuture<'_, Result<Elicitation<Value>, CommandError>> {
        self.asked.lock().unwrap().push((message, schema));
        let answer = self.answers.lock().unwrap().remove(0);
        Box::pin(async move { Ok(answer) })
    }
}

/// Collects log messages at or above a level.
struct Collect(LogLevel, Mutex<Vec<LogMessage>>);

impl LogSink for Collect {
    fn threshold(&self) -> Option<LogLevel> {
        Some(self.0)
    }

    fn send(&self, message: LogMessage) -> BoxFuture<'_, ()> {
        self.1.lock().unwrap().push(message);
        Box::pin(async {})
    }

    fn send_later(&self, message: LogMessage) {
        self.1.lock().unwrap().push(message);
    }
}

#[tokio::test]
async fn a_content_only_result_comes_back_whole_from_the_in_process_client() {
    let result = dispatcher()
        .call("picture", json!({}), CommandContext::new())
        .await;
    assert!(result.success && result.data.is_none(), "{result:?}");
    assert_eq!(
        result.content,
        vec![Content::image([1u8, 2, 3], "image/png")]
    );
    assert!(result.is_content_only());
    assert_eq!(
        result.into_result().unwrap_err().code,
        codes::INTERNAL_ERROR,
        "a content-only result has no data to unwrap"
    );
    assert!(
        Registry::global()
            .get("picture")
            .unwrap()
            .output_schema()
            .is_none()
    );
}

#[tokio::test]
async fn log_messages_below_the_callers_level_are_not_sent() {
    let sink = Arc::new(Collect(LogLevel::Info, Mutex::default()));
    let ctx = CommandContext::new().with_log(sink.clone());
    let result = dispatcher().call("chatty", json!({}), ctx).await;
    assert_eq!(result.data, Some(json!(false)));
    let sent = sink.1.lock().unwrap().clone();
    assert_eq!(
        sent,
        vec![LogMessage::new(LogLevel::Error, json!({"failed": 1}))]
    );
    // Nobody listening: logging is a no-op, never an error.
    let quiet = dispatcher()
        .call("chatty", json!({}), CommandContext::new())
        .await;
    assert!(quiet.success);
}

#[tokio::test]
async fn sampling_and_elicitation_reach_the_hosts_client() {
    let client = Arc::new(Scripted::default());
    client.answers.lock().unwrap().extend([
        Elicitation::Accept(json!({"count": 3})),
        Elicitation::Decline,
        Elicitation::Accept(json!({"count": "many"})),
    ]);
    let ctx = CommandContext::new().with_client(client.clone());
    let titled = dispatcher().call("titled", json!({}), ctx.clone()).await;
    assert_eq!(titled.data, Some(json!("Q3 report")));
    assert_eq!(
        client.sampled.lock().unwrap()[0].system_prompt.as_deref(),
        Some("Be brief.")
    );

    let picked = dispatcher().call("how-many", json!({}), ctx.clone()).await;
    assert_eq!(picked.data, Some(json!("3 picked")));
    let (message, schema) = client.asked.lock().unwrap()[0].clone();
    assert_eq!(message, "How many?");
    assert_eq!(
        schema,
        json!({"type": "object", "properties": {"count": {"type": "integer", "description": "How many.", "minimum": 0, "maximum": 255}}, "required": ["count"]})
    );
    let declined = dispatcher().call("how-many", json!({}), ctx.clone()).await;
    assert_eq!(declined.data, Some(json!("decline")));
    let wrong = dispatcher().call("how-many", json!({}), ctx).await;
    assert_eq!(wrong.error.unwrap().code, codes::VALIDATION_ERROR);
}

#[tokio::test]
async fn a_caller_without_a_client_gets_stable_codes() {
    let sampled = dispatcher()
        .call("titled", json!({}), CommandContext::new())
        .await;
    let error = sampled.error.unwrap();
    assert_eq!(error.code, codes::CLIENT_CANNOT_SAMPLE);
    assert!(error.suggestion.is_some());
    let elicited = dispatcher()
        .call("how-many", json!({}), CommandContext::new())
        .await;
    assert_eq!(elicited.error.unwrap().code, codes::CLIENT_CANNOT_ELICIT);
}

#[tokio::test]
async fn confirmation_by_elicitation_runs_only_once_confirmed() {
    let client = Arc::new(Scripted::default());
    client.answers.lock().unwrap().extend([
        Elicitation::Decline,
        Elicitation::Cancel,
        Elicitation::Accept(json!({"confirm": false})),
        Elicitation::Accept(json!({"confirm": true})),
    ]);
    let ctx = CommandContext::new().with_client(client.clone());
    for action in ["decline", "cancel", "accept"] {
        let refused = dispatcher()
            .call("wipe", json!({"id": 7}), ctx.clone())
            .await;
        let error = refused.error.expect("not run");
        assert_eq!(error.code, codes::CONFIRMATION_REQUIRED);
        assert_eq!(error.details.unwrap()["action"], action);
    }
    let confirmed = dispatcher().call("wipe", json!({"id": 7}), ctx).await;
    assert_eq!(confirmed.data, Some(json!("wiped 7")));
    let asked = client.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 4);
    assert_eq!(asked[0].0, "Delete record 7?");
    assert_eq!(asked[0].1["properties"]["confirm"]["type"], "boolean");
    // A caller that cannot be asked runs it as before (the command line asks itself).
    let plain = dispatcher()
        .call("wipe", json!({"id": 8}), CommandContext::new())
        .await;
    assert_eq!(plain.data, Some(json!("wiped 8")));
}

#[test]
fn the_official_python_client_talks_to_a_handler() {
    let Some(python) = afd_tests::python::client() else {
        return;
    };
    afd_tests::python::run_checks(
        &python,
        "rich.py",
        [env!("CARGO_BIN_EXE_afd-client-fixture")],
    );
}
