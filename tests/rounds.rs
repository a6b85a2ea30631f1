//! A handler that asks its client something on MCP 2026-07-28's stateless wire
//! (multi-round-trip requests): the call is answered `input_required` with the questions
//! and a sealed `requestState`, and resumes when the client calls again with the answers.
//! The same flow on every entrance (HTTP's direct path and rmcp's, stdio's front and
//! rmcp's), directly and through afd-call, in the individual and lazy strategies; a state
//! altered or sent for other arguments refused; an answer of the wrong shape refused; a
//! command that needs a capability the client did not declare refused with -32021 (HTTP
//! 400) before it runs; a question inside afd-batch answered plainly instead of pausing it;
//! a call begun on one replica resumed on another that holds the same keys.

use std::sync::atomic::{AtomicUsize, Ordering};

use afd_runtime::client::{Elicitation, SamplingRequest};
use afd_runtime::mcp::{McpServer, Strategy};
use afd_runtime::prelude::*;
use afd_tests::entrance::Entrance;

#[derive(Deserialize, JsonSchema)]
struct Name {
    /// Your name.
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Greeting {
    /// How to greet.
    greeting: String,
}

/// How often `rounds-greet` ran, to show that each round runs the handler again.
static GREETS: AtomicUsize = AtomicUsize::new(0);

/// Asks the name (under a key of its own), then the greeting (under a key derived from
/// the form), then greets.
#[command(category = "rounds")]
async fn rounds_greet(ctx: &CommandContext) -> Result<String, CommandError> {
    GREETS.fetch_add(1, Ordering::Relaxed);
    let Elicitation::Accept(name) = ctx.elicit_as::<Name>("name", "Your name?").await? else {
        return Ok("no name".to_owned());
    };
    let Elicitation::Accept(greeting) = ctx.elicit::<Greeting>("How to greet?").await? else {
        return Ok("no greeting".to_owned());
    };
    Ok(format!("{}, {}!", greeting.greeting, name.name))
}

/// Needs a client that can sample.
#[command(category = "rounds", needs_client("sampling"))]
async fn rounds_sampled(ctx: &CommandContext) -> Result<String, CommandError> {
    let answer = ctx.sample(SamplingRequest::new("Say hi", 10)).await?;
    Ok(answer.text().unwrap_or_default().to_owned())
}

fn server(strategy: Strategy) -> McpServer {
    McpServer::builder(Registry::global())
        .strategy(strategy)
        .build()
        .unwrap()
}

/// A 2026-07-28 `tools/call` of `tool` from a client declaring `capabilities`, with
/// `extra` params (answers, state).
fn call(id: u64, tool: &str, arguments: Value, capabilities: Value, extra: Value) -> Value {
    let mut params = json!({
        "name": tool,
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "afd-tests", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": capabilities
        }
    });
    if let Value::Object(extra) = extra {
        params.as_object_mut().unwrap().extend(extra);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// The tool and arguments that run `command` with `input`: directly, or through afd-call.
fn target(command: &str, input: Value, through_call: bool) -> (String, Value) {
    match through_call {
        true => (
            "afd-call".to_owned(),
            json!({"command": command, "input": input}),
        ),
        false => (command.to_owned(), input),
    }
}

/// The flow every entrance must give the same way.
async fn the_rounds(entrance: &mut Entrance, through_call: bool, label: &str) {
    let asks = json!({"elicitation": {}});
    let (tool, arguments) = target("rounds-greet", json!({}), through_call);

    // Round 1: the name is asked, with a state.
    let (status, first) = entrance
        .send(&call(1, &tool, arguments.clone(), asks.clone(), json!({})))
        .await;
    assert_eq!(status, 200, "{label}: {first}");
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{label}: {first}");
    let request = &result["inputRequests"]["name"];
    assert_eq!(request["method"], "elicitation/create", "{label}: {first}");
    assert_eq!(request["params"]["message"], "Your name?");
    let state = result["requestState"].as_str().expect("a state").to_owned();

    // Round 2: the name answered; the greeting is asked under a key of its form.
    let answers = json!({"name": {"action": "accept", "content": {"name": "Ada"}}});
    let (_, second) = entrance
        .send(&call(
            2,
            &tool,
            arguments.clone(),
            asks.clone(),
            json!({"inputResponses": answers, "requestState": state}),
        ))
        .await;
    let result = &second["result"];
    assert_eq!(result["resultType"], "input_required", "{label}: {second}");
    let requests = result["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{label}: only what is still unanswered");
    let (key, request) = requests.iter().next().unwrap();
    assert!(key.starts_with("elicit-"), "{label}: {key}");
    assert_eq!(request["params"]["message"], "How to greet?");
    let state2 = result["requestState"].as_str().unwrap().to_owned();
    assert_ne!(state2, state, "{label}: a new state each round");

    // Round 3: the state carries the name; only the greeting is sent.
    let answers = json!({key.clone(): {"action": "accept", "content": {"greeting": "Hello"}}});
    let (_, third) = entrance
        .send(&call(
            3,
            &tool,
            arguments.clone(),
            asks.clone(),
            json!({"inputResponses": answers, "requestState": state2}),
        ))
        .await;
    let result = &third["result"];
    assert_eq!(result["resultType"], "complete", "{label}: {third}");
    assert_eq!(result["isError"], false, "{label}: {third}");
    assert!(
        result["structuredContent"]
            .to_string()
            .contains("Hello, Ada!"),
        "{label}: {third}"
    );

    // An altered state is refused, as is one sent for other arguments.
    let answers = json!({"name": {"action": "accept", "content": {"name": "Eve"}}});
    let tampered = format!("{state}-TAMPERED");
    let (_, refused) = entrance
        .send(&call(
            4,
            &tool,
            arguments.clone(),
            asks.clone(),
            json!({"inputResponses": answers, "requestState": tampered}),
        ))
        .await;
    assert_eq!(refused["error"]["code"], -32602, "{label}: {refused}");
    let (other_tool, other_arguments) =
        target("rounds-greet", json!({"unused": true}), through_call);
    let (_, refused) = entrance
        .send(&call(
            5,
            &other_tool,
            other_arguments,
            asks.clone(),
            json!({"inputResponses": answers, "requestState": state}),
        ))
        .await;
    assert!(refused.get("error").is_some(), "{label}: {refused}");

    // An answer that is not an elicitation result is refused.
    let (_, refused) = entrance
        .send(&call(
            6,
            &tool,
            arguments.clone(),
            asks.clone(),
            json!({"inputResponses": {"name": 12345}}),
        ))
        .await;
    assert_eq!(refused["error"]["code"], -32602, "{label}: {refused}");
    assert_eq!(
        refused["error"]["data"]["key"], "name",
        "{label}: {refused}"
    );

    // A client that cannot show forms gets an error it can act on.
    let (_, cannot) = entrance
        .send(&call(7, &tool, arguments, json!({}), json!({})))
        .await;
    assert_eq!(cannot["result"]["isError"], true, "{label}: {cannot}");
    assert_eq!(
        cannot["result"]["structuredContent"]["error"]["code"], "CLIENT_CANNOT_ELICIT",
        "{label}: {cannot}"
    );

    // A command that needs sampling does not run for a client that did not declare it.
    let (tool, arguments) = target("rounds-sampled", json!({}), through_call);
    let (status, missing) = entrance
        .send(&call(8, &tool, arguments, json!({}), json!({})))
        .await;
    assert_eq!(missing["error"]["code"], -32021, "{label}: {missing}");
    assert_eq!(
        missing["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}}),
        "{label}: {missing}"
    );
    if matches!(entrance, Entrance::Http(_) | Entrance::HttpRmcp(_)) {
        assert_eq!(status, 400, "{label}");
    }
}

#[tokio::test]
async fn a_handler_asks_over_http_on_either_path() {
    for strategy in [Strategy::Individual, Strategy::Lazy] {
        for rmcp in [false, true] {
            let (mut entrance, _handle) = Entrance::http(server(strategy), rmcp).await;
            let through_call = strategy == Strategy::Lazy;
            the_rounds(
                &mut entrance,
                through_call,
                &format!("http rmcp={rmcp} {strategy:?}"),
            )
            .await;
        }
    }
}

#[tokio::test]
async fn a_handler_asks_over_a_stream_through_the_front_or_rmcp() {
    for strategy in [Strategy::Individual, Strategy::Lazy] {
        for front in [true, false] {
            let mut entrance = Entrance::stream(server(strategy), front);
            the_rounds(
                &mut entrance,
                strategy == Strategy::Lazy,
                &format!("stream front={front} {strategy:?}"),
            )
            .await;
        }
    }
}

#[tokio::test]
async fn each_round_runs_the_handler_again() {
    let (mut entrance, _handle) = Entrance::http(server(Strategy::Individual), false).await;
    let before = GREETS.load(Ordering::Relaxed);
    let asks = json!({"elicitation": {}});
    let (_, first) = entrance
        .send(&call(1, "rounds-greet", json!({}), asks.clone(), json!({})))
        .await;
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let answers = json!({"name": {"action": "decline"}});
    let (_, second) = entrance
        .send(&call(
            2,
            "rounds-greet",
            json!({}),
            asks,
            json!({"inputResponses": answers, "requestState": state}),
        ))
        .await;
    assert!(
        second["result"]["structuredContent"]
            .to_string()
            .contains("no name"),
        "{second}"
    );
    assert!(GREETS.load(Ordering::Relaxed) >= before + 2);
}

#[tokio::test]
async fn a_question_inside_a_batch_says_why_it_cannot_pause_it() {
    let (mut entrance, _handle) = Entrance::http(server(Strategy::Lazy), false).await;
    let batch = json!({"commands": [{"command": "rounds-greet", "input": {}}]});
    let (_, answered) = entrance
        .send(&call(
            1,
            "afd-batch",
            batch,
            json!({"elicitation": {}}),
            json!({}),
        ))
        .await;
    let result = &answered["result"];
    assert_eq!(result["resultType"], "complete", "{answered}");
    let step = &result["structuredContent"]["results"][0]["result"];
    assert_eq!(step["error"]["code"], "INPUT_REQUIRED", "{answered}");
    assert!(
        step["error"]["message"]
            .as_str()
            .unwrap()
            .contains("afd-batch"),
        "{answered}"
    );
}

#[tokio::test]
async fn a_call_begun_on_one_replica_resumes_on_another_with_the_same_keys() {
    let keys = [("2026-11", vec![7u8; 32])];
    let replica = |keys: &[(&str, Vec<u8>)]| {
        McpServer::builder(Registry::global())
            .strategy(Strategy::Individual)
            .request_state_keys(keys.iter().cloned())
            .build()
            .unwrap()
    };
    let (mut a, _a) = Entrance::http(replica(&keys), false).await;
    let (mut b, _b) = Entrance::http(replica(&keys), false).await;
    let (mut other, _other) = Entrance::http(server(Strategy::Individual), false).await;
    let asks = json!({"elicitation": {}});
    let (_, first) = a
        .send(&call(1, "rounds-greet", json!({}), asks.clone(), json!({})))
        .await;
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let answers = json!({"name": {"action": "accept", "content": {"name": "Ada"}}});
    let resume = call(
        2,
        "rounds-greet",
        json!({}),
        asks,
        json!({"inputResponses": answers, "requestState": state}),
    );
    // Another replica with the same keys goes on where the first left off.
    let (_, second) = b.send(&resume).await;
    assert_eq!(second["result"]["resultType"], "input_required", "{second}");
    assert!(
        second["result"]["inputRequests"].get("name").is_none(),
        "the name was carried in the state: {second}"
    );
    // A server with a key of its own refuses the state.
    let (_, refused) = other.send(&resume).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}
