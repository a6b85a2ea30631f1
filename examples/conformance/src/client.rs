//! `conformance-client`: the MCP client side of the official conformance suite, on the
//! client code `afd` and the gateway use (rmcp's client, and afd-oauth for every way of
//! getting a token). The suite runs it once per scenario with the mock server's URL as the
//! last argument, the scenario in `MCP_CONFORMANCE_SCENARIO`, its data in
//! `MCP_CONFORMANCE_CONTEXT` and the protocol revision in `MCP_CONFORMANCE_PROTOCOL_VERSION`
//! (2025-11-25 and earlier: the `initialize` handshake; 2026-07-28: stateless, `_meta` on
//! every request). A browser's part of a sign-in is a request to the authorization URL whose
//! redirect is read instead of followed.
//!
//! ```text
//! conformance client --command target/debug/conformance-client --requirements 2026-07-28
//! ```

// Sampling and roots are deprecated by SEP-2577, and the 2026-07-28 scenarios still ask for them.
#![allow(deprecated)]

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use afd_oauth::token::AssertionKey;
use afd_oauth::{
    Authorized, ClientCredentials, ClientCredentialsConfig, OAuthError, Secret, Session, SignIn,
};
use futures_util::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ClientJsonRpcMessage,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorData, ListRootsResult, ProtocolVersion, Role, Root, SamplingMessage,
    SamplingMessageContentBlock, Tool,
};
use rmcp::service::{ClientLifecycleMode, RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::InMemoryCredentialStore;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse,
};
use rmcp::{ClientHandler, ClientServiceExt as _, RoleClient};
use serde_json::{Map, Value, json};
use sse_stream::Sse;
use tokio::sync::Notify;

type Error = Box<dyn std::error::Error + Send + Sync>;
type Client = RunningService<RoleClient, Answers>;

/// Where the (never served) redirect of a headless sign-in points.
const REDIRECT_URI: &str = "http://127.0.0.1:3000/callback";
/// The client ID metadata document's URL, used where the authorization server takes them.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
/// How often a call refused for want of a scope signs in again for it.
const MAX_STEP_UPS: u32 = 2;
/// Longest wait for a session's standalone stream before the first call.
const STREAM_WAIT: Duration = Duration::from_secs(3);

/// The scenario's data (`MCP_CONFORMANCE_CONTEXT`).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Context {
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
    #[serde(default, alias = "client_id")]
    client_id: Option<String>,
    #[serde(default, alias = "client_secret")]
    client_secret: Option<String>,
    #[serde(default, alias = "private_key_pem")]
    private_key_pem: Option<String>,
    #[serde(default, alias = "signing_algorithm")]
    signing_algorithm: Option<String>,
}

#[derive(Debug, serde::Deserialize)]
struct ToolCall {
    name: String,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
}

/// The client's answers to a server's questions: a form filled with its defaults (or a
/// plain value of each field's type), a fixed sampled message, the working directory as
/// the one root.
#[derive(Debug, Clone, Default)]
struct Answers;

impl ClientHandler for Answers {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::builder()
            .enable_elicitation()
            .enable_sampling()
            .enable_roots()
            .build();
        capabilities.roots = Some(Default::default());
        let mut info = ClientConfig::default();
        info.capabilities = capabilities;
        info.client_info.name = "afd-conformance-client".into();
        info.client_info.version = env!("CARGO_PKG_VERSION").into();
        info
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            requested_schema, ..
        } = request
        else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(fill_form(&schema)))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let asked = params
            .messages
            .first()
            .and_then(|message| message.content.first())
            .and_then(|content| content.as_text())
            .map(|text| text.text.clone())
            .unwrap_or_default();
        Ok(CreateMessageResult::new(
            SamplingMessage::new(
                Role::Assistant,
                SamplingMessageContentBlock::text(format!("An answer to: {asked}")),
            ),
            "conformance-model".into(),
        )
        .with_stop_reason("endTurn"))
    }

    async fn list_roots(
        &self,
        _: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let here = std::env::current_dir().unwrap_or_default();
        Ok(ListRootsResult::new(vec![Root::new(format!(
            "file://{}",
            here.display()
        ))]))
    }
}

/// A form's answer: each property's default, else a plain value of its type.
fn fill_form(schema: &Value) -> Value {
    let mut answer = Map::new();
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        let value =
            property
                .get("default")
                .cloned()
                .unwrap_or_else(|| match property["type"].as_str() {
                    Some("integer") => json!(1),
                    Some("number") => json!(1.0),
                    Some("boolean") => json!(true),
                    Some("array") => json!([]),
                    _ => property["enum"]
                        .get(0)
                        .or_else(|| property["oneOf"].get(0).and_then(|o| o.get("const")))
                        .cloned()
                        .unwrap_or_else(|| json!("test")),
                });
        answer.insert(name.clone(), value);
    }
    Value::Object(answer)
}

/// Arguments for a tool from its input schema: a plain value for each required field.
fn arguments_for(tool: &Tool) -> Option<Map<String, Value>> {
    let schema = Value::Object((*tool.input_schema).clone());
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut arguments = Map::new();
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        if !required.contains(&name.as_str()) {
            continue;
        }
        let value = match property["type"].as_str() {
            Some("number") => json!(1.0),
            Some("integer") => json!(1),
            Some("boolean") => json!(true),
            Some("object") => json!({}),
            Some("array") => json!([]),
            _ => json!("test"),
        };
        arguments.insert(name.clone(), value);
    }
    (!arguments.is_empty()).then_some(arguments)
}

fn call(name: &str, arguments: Option<Map<String, Value>>) -> CallToolRequestParams {
    let params = CallToolRequestParams::new(name.to_owned());
    match arguments {
        Some(arguments) => params.with_arguments(arguments),
        None => params,
    }
}

/// The revision the suite asks for.
fn protocol_version() -> ProtocolVersion {
    std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
        .ok()
        .and_then(|version| serde_json::from_value(Value::String(version)).ok())
        .unwrap_or(ProtocolVersion::V_2025_11_25)
}

/// The handshake for that revision: `initialize` up to 2025-11-25, stateless after, with
/// the other known revisions to fall back on when the server names them.
fn lifecycle() -> ClientLifecycleMode {
    let asked = protocol_version();
    if asked.as_str() < ProtocolVersion::V_2026_07_28.as_str() {
        return ClientLifecycleMode::Initialize;
    }
    let mut preferred = vec![asked];
    for version in ProtocolVersion::KNOWN_VERSIONS.iter().rev() {
        if !preferred.contains(version) {
            preferred.push(version.clone());
        }
    }
    ClientLifecycleMode::Discover {
        preferred_versions: preferred,
    }
}

/// A client of `url` through `http` (plain, or one that sends tokens).
async fn connect<C>(url: &str, http: C) -> Result<Client, Error>
where
    C: StreamableHttpClient + Send + Sync + 'static,
{
    let transport = StreamableHttpClientTransport::with_client(
        http,
        StreamableHttpClientTransportConfig::with_uri(url),
    );
    Ok(Answers.serve_with_lifecycle(transport, lifecycle()).await?)
}

/// The server's `WWW-Authenticate` challenge when it refuses a client without a token;
/// `None` when it lets one in (some servers ask only for some calls).
async fn challenge(url: &str) -> Result<Option<String>, Error> {
    match connect(url, reqwest::Client::new()).await {
        Ok(client) => {
            let _ = client.cancel().await;
            Ok(None)
        }
        Err(error) => {
            let found = error
                .downcast_ref::<rmcp::service::ClientInitializeError>()
                .and_then(|error| error.auth_challenge().map(str::to_owned));
            found.map(Some).ok_or(error)
        }
    }
}

/// A browser that goes to the authorization URL and, instead of following the redirect,
/// hands it back.
async fn browse(url: &str) -> Result<String, Error> {
    let answer = afd_oauth::client().get(url).send().await?;
    let location = answer
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|value| value.to_str().ok())
        .ok_or_else(|| {
            format!(
                "the authorization endpoint answered {} without a redirect",
                answer.status()
            )
        })?;
    Ok(location.to_owned())
}

/// Signs in to `url` headlessly, tokens kept in `store`.
async fn sign_in(
    url: &str,
    context: &Context,
    challenge: Option<String>,
    scopes: Vec<String>,
    store: InMemoryCredentialStore,
) -> Result<Session, Error> {
    let mut sign_in = SignIn::new(url, REDIRECT_URI)
        .client_name("afd-conformance-client")
        .client_metadata_url(CLIENT_METADATA_URL)
        .scopes(scopes);
    if let Some(id) = &context.client_id {
        sign_in = sign_in.preregistered(id, context.client_secret.clone().map(Secret::new));
    }
    if let Some(challenge) = challenge {
        sign_in = sign_in.challenge(challenge);
    }
    let pending = sign_in.start(store).await?;
    let redirect = browse(pending.url()).await?;
    Ok(pending.finish(&redirect).await?)
}

/// Why a signed-in run stopped.
enum Stop {
    /// The server refused a request for want of a token or a scope: its challenge.
    Refused(String),
    Failed(Error),
}

impl From<rmcp::ServiceError> for Stop {
    fn from(error: rmcp::ServiceError) -> Self {
        match error.auth_challenge() {
            Some(challenge) => Stop::Refused(challenge.to_owned()),
            None => Stop::Failed(error.into()),
        }
    }
}

/// The tools listed and each called, with `session`'s tokens or none.
async fn list_and_call_as(url: &str, session: Option<Session>) -> Result<(), Stop> {
    let client = match session {
        Some(session) => connect(url, session.client(reqwest::Client::new())).await,
        None => connect(url, reqwest::Client::new()).await,
    };
    let client = client.map_err(|error| {
        match error
            .downcast_ref::<rmcp::service::ClientInitializeError>()
            .and_then(|error| error.auth_challenge())
        {
            Some(challenge) => Stop::Refused(challenge.to_owned()),
            None => Stop::Failed(error),
        }
    })?;
    let outcome = async {
        for tool in client.peer().list_all_tools().await? {
            client
                .call_tool(call(&tool.name, arguments_for(&tool)))
                .await?;
        }
        Ok::<_, Stop>(())
    }
    .await;
    let _ = client.cancel().await;
    outcome
}

/// Signing in on first use: the tools listed and each called, without a token until the
/// server asks for one; a request refused for want of a token or a scope signs in again
/// with the server's challenge (its scopes added to those held), at most
/// [`MAX_STEP_UPS`] times after the first sign-in.
///
/// After a sign-in the run starts over, so tools that answered before the refusal are
/// called again: harmless against the suite's mock servers, whose tools change nothing.
async fn signed_in(url: &str, context: &Context) -> Result<(), Error> {
    let store = InMemoryCredentialStore::new();
    let mut session: Option<Session> = None;
    let mut sign_ins = 0;
    loop {
        let held = match &session {
            Some(session) => session.scopes().await,
            None => Vec::new(),
        };
        let challenge = match list_and_call_as(url, session.take()).await {
            Ok(()) => return Ok(()),
            Err(Stop::Failed(error)) => return Err(error),
            Err(Stop::Refused(challenge)) => challenge,
        };
        if sign_ins > MAX_STEP_UPS {
            return Err(
                format!("the server still refuses after {sign_ins} sign-ins: {challenge}").into(),
            );
        }
        sign_ins += 1;
        let mut wanted = held;
        if let Some(asked) = afd_oauth::Challenge::parse(&challenge) {
            for scope in asked.scopes() {
                if !wanted.contains(&scope) {
                    wanted.push(scope);
                }
            }
        }
        session = Some(sign_in(url, context, Some(challenge), wanted, store.clone()).await?);
    }
}

/// The authorization server moves (SEP-2352): a token refused later is answered by a new
/// sign-in, discovered again from the server's new challenge.
async fn migration(url: &str, context: &Context) -> Result<(), Error> {
    let store = InMemoryCredentialStore::new();
    let http = reqwest::Client::new();
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let mut session = sign_in(
        url,
        context,
        challenge(url).await?,
        Vec::new(),
        store.clone(),
    )
    .await?;
    for _ in 0..3 {
        let token = session.access_token().await?;
        let answer = http
            .post(url)
            .header("mcp-protocol-version", protocol_version().as_str())
            .header("accept", "application/json, text/event-stream")
            .bearer_auth(token.expose())
            .json(&list)
            .send()
            .await?;
        if answer.status() == reqwest::StatusCode::UNAUTHORIZED {
            let challenge = answer
                .headers()
                .get(reqwest::header::WWW_AUTHENTICATE)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned);
            session = sign_in(
                url,
                context,
                challenge,
                Vec::new(),
                InMemoryCredentialStore::new(),
            )
            .await?;
        }
    }
    Ok(())
}

/// The client credentials grant, as the gateway gets its upstreams' tokens: with a secret,
/// or a JWT assertion signed with the scenario's private key.
async fn client_credentials(url: &str, context: &Context) -> Result<(), Error> {
    let Some(id) = &context.client_id else {
        return Err("the scenario gave no client id".into());
    };
    let assertion_key = match &context.private_key_pem {
        Some(pem) => Some(AssertionKey::from_pem(
            pem,
            context.signing_algorithm.as_deref().unwrap_or("RS256"),
        )?),
        None => None,
    };
    let tokens = ClientCredentials::new(
        afd_oauth::client(),
        url,
        ClientCredentialsConfig {
            client_id: id.clone(),
            client_secret: context.client_secret.clone().map(Secret::new),
            assertion_key,
            auth: None,
            scopes: Vec::new(),
            issuer: None,
            token_endpoint: None,
            resource: None,
        },
    );
    let client = connect(
        url,
        Authorized::new(reqwest::Client::new(), Arc::new(tokens)),
    )
    .await?;
    list_and_call(&client).await?;
    let _ = client.cancel().await;
    Ok(())
}

async fn list_and_call(client: &Client) -> Result<(), Error> {
    for tool in client.peer().list_all_tools().await? {
        client
            .call_tool(call(&tool.name, arguments_for(&tool)))
            .await?;
    }
    Ok(())
}

/// A plain HTTP client that says when the transport's standalone stream (the GET a session
/// opens for messages unrelated to a request) has been answered, opened or refused.
///
/// rmcp opens that stream beside the first requests. A server that sends a request of its
/// own on it while it is not yet open (the TypeScript SDK's server does, for a question asked
/// outside any request's context) loses the question, and the call waiting on the answer
/// never ends; so the session's first call waits for the stream, at most [`STREAM_WAIT`].
/// The methods with limits on response sizes keep the trait's defaults (no limit: the
/// suite's mock servers are trusted).
#[derive(Clone)]
struct StreamOpened {
    inner: reqwest::Client,
    opened: Arc<Notify>,
}

impl StreamOpened {
    fn note<T>(&self, result: T) -> T {
        self.opened.notify_one();
        result
    }
}

impl StreamableHttpClient for StreamOpened {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let result = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await;
        self.note(result)
    }
}

/// The tools listed, then the calls the scenario names (or each tool once).
async fn tools(url: &str, context: &Context) -> Result<(), Error> {
    let opened = Arc::new(Notify::new());
    let http = StreamOpened {
        inner: reqwest::Client::new(),
        opened: opened.clone(),
    };
    let client = connect(url, http).await?;
    // A session (2025-11-25 and earlier) opens the stream; a server without sessions or
    // streams never answers one, and the wait ends at STREAM_WAIT.
    if matches!(lifecycle(), ClientLifecycleMode::Initialize) {
        let _ = tokio::time::timeout(STREAM_WAIT, opened.notified()).await;
    }
    if context.tool_calls.is_empty() {
        list_and_call(&client).await?;
    } else {
        client.peer().list_all_tools().await?;
        for tool_call in &context.tool_calls {
            client
                .call_tool(call(&tool_call.name, tool_call.arguments.clone()))
                .await?;
        }
    }
    let _ = client.cancel().await;
    Ok(())
}

/// The focal tool's input schema sent back as received (nothing parsed away).
async fn echo_schema(url: &str) -> Result<(), Error> {
    let client = connect(url, reqwest::Client::new()).await?;
    let tools = client.peer().list_all_tools().await?;
    let focal = tools
        .iter()
        .find(|tool| tool.name == "json_schema_2020_12_tool")
        .ok_or("the server lists no json_schema_2020_12_tool")?;
    let mut arguments = Map::new();
    arguments.insert(
        "schema".into(),
        Value::Object((*focal.input_schema).clone()),
    );
    client
        .call_tool(call("json_schema_echo", Some(arguments)))
        .await?;
    let _ = client.cancel().await;
    Ok(())
}

/// Only the listing: a schema's network `$ref` is kept, never fetched.
async fn list_only(url: &str) -> Result<(), Error> {
    let client = connect(url, reqwest::Client::new()).await?;
    client.peer().list_all_tools().await?;
    let _ = client.cancel().await;
    Ok(())
}

async fn run(scenario: &str, url: &str, context: &Context) -> Result<(), Error> {
    match scenario {
        "json-schema-ref-no-deref" | "initialize" => list_only(url).await,
        "json-schema-2020-12-preservation" => echo_schema(url).await,
        "tools_call"
        | "elicitation-sep1034-client-defaults"
        | "sse-retry"
        | "request-metadata"
        | "sep-2322-client-request-state"
        | "http-standard-headers"
        | "http-custom-headers"
        | "http-invalid-tool-headers" => tools(url, context).await,
        "auth/authorization-server-migration" => migration(url, context).await,
        "auth/client-credentials-basic" | "auth/client-credentials-jwt" => {
            client_credentials(url, context).await
        }
        other if other.starts_with("auth/") => signed_in(url, context).await,
        other => Err(format!("unknown scenario '{other}'").into()),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance-client URL (with MCP_CONFORMANCE_SCENARIO set)");
        return ExitCode::from(2);
    };
    let context: Context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(text) => match serde_json::from_str(&text) {
            Ok(context) => context,
            Err(error) => {
                eprintln!("MCP_CONFORMANCE_CONTEXT is not the expected JSON: {error}");
                return ExitCode::from(2);
            }
        },
        Err(_) => Context::default(),
    };
    // The suite waits 30 seconds for a client; a mock that never answers must not outlive it.
    match tokio::time::timeout(Duration::from_secs(25), run(&scenario, &url, &context)).await {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(error)) => {
            match error.downcast_ref::<OAuthError>() {
                Some(oauth) => eprintln!("{scenario}: {} ({})", oauth, oauth.code()),
                None => eprintln!("{scenario}: {error}"),
            }
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!("{scenario}: no end within 25 s");
            ExitCode::FAILURE
        }
    }
}
