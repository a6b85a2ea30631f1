//! Soak and load over streamable HTTP against the shop: many concurrent sessions mixing
//! afd-discover, afd-detail, afd-call, afd-batch, afd-pipe and context enter/exit, each
//! answer checked against its request; then a flood of `initialize` beyond the server's
//! session bound, and the expiry of idle sessions. The `soak` binary runs it for minutes
//! against a release server process and samples its memory; `tests/soak.rs` runs it for
//! seconds in-process.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use afd_examples::shop::{self, ShopStore};
use afd_runtime::Registry;
use afd_runtime::mcp::{McpServer, Strategy};
use afd_runtime::usage::UsageStats;
use rmcp::model::CallToolResult;
use rmcp::{Peer, RoleClient};
use serde_json::{Value, json};

use crate::client::{self, Connection, Error};

/// The shop's server as the example serves it (lazy strategy, in-memory store and usage
/// statistics), over a registry of the shop's commands and contexts only: this crate links
/// generated catalogs whose names clash with the shop's, so the global registry is not used.
///
/// # Errors
///
/// The store or the server could not be built.
pub fn shop_server() -> Result<McpServer, Error> {
    let registry = Registry::builder()
        .register_all(shop::COMMANDS)
        .with_inventory_contexts()
        .build()?;
    let registry: &'static Registry = Box::leak(Box::new(registry));
    Ok(McpServer::builder(registry)
        .name("shop")
        .version(env!("CARGO_PKG_VERSION"))
        .strategy(Strategy::Lazy)
        .context(shop::context(ShopStore::in_memory()?))
        .dispatch(|d| d.usage(UsageStats::in_memory()))
        .build()?)
}

/// What a soak session sends, one kind per latency figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// `afd-discover` by category.
    Discover,
    /// `afd-detail` of one command.
    Detail,
    /// `afd-call` of `product-update` on the session's own product.
    Call,
    /// `afd-batch` of `product-get` and `product-list`.
    Batch,
    /// `afd-pipe` of `product-get` into `product-update`.
    Pipe,
    /// `afd-context-enter` of `storefront`.
    Enter,
    /// `afd-context-exit`.
    Exit,
}

impl Kind {
    /// The name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Discover => "discover",
            Kind::Detail => "detail",
            Kind::Call => "call",
            Kind::Batch => "batch",
            Kind::Pipe => "pipe",
            Kind::Enter => "context enter",
            Kind::Exit => "context exit",
        }
    }
}

/// One cycle of a session: the context is entered and left within it, so a cycle's end is
/// where a session may be closed and reopened.
const CYCLE: [Kind; 9] = [
    Kind::Discover,
    Kind::Detail,
    Kind::Call,
    Kind::Batch,
    Kind::Enter,
    Kind::Discover,
    Kind::Pipe,
    Kind::Call,
    Kind::Exit,
];

const CATEGORIES: [&str; 5] = ["cart", "product", "order", "report", "user"];
const DETAILS: [&str; 5] = [
    "product-create",
    "cart-add-item",
    "order-list",
    "invoice-get",
    "afd-context-enter",
];

/// How a soak runs.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// Concurrent sessions.
    pub sessions: usize,
    /// How long the sessions send.
    pub duration: Duration,
    /// Each session is closed (HTTP DELETE) and reopened after this many cycles.
    pub cycles_per_session: usize,
}

/// The latency name of opening a session (the rmcp client's initialize and initialized).
pub const SESSION_OPEN: &str = "session open";

/// What a soak saw.
#[derive(Debug, Default)]
pub struct Report {
    /// Latencies per kind of request ([`Kind::as_str`], and [`SESSION_OPEN`]).
    pub latencies: BTreeMap<&'static str, Vec<Duration>>,
    /// Requests answered as expected.
    pub ok: usize,
    /// Requests that failed or whose answer did not match the request.
    pub failures: usize,
    /// The first failures, described.
    pub examples: Vec<String>,
    /// Sessions opened.
    pub sessions_opened: usize,
}

impl Report {
    fn merge(&mut self, other: Report) {
        for (kind, mut samples) in other.latencies {
            self.latencies.entry(kind).or_default().append(&mut samples);
        }
        self.ok += other.ok;
        self.failures += other.failures;
        self.sessions_opened += other.sessions_opened;
        for example in other.examples {
            if self.examples.len() < 20 {
                self.examples.push(example);
            }
        }
    }

    fn record(&mut self, kind: &'static str, elapsed: Duration) {
        self.latencies.entry(kind).or_default().push(elapsed);
    }

    fn fail(&mut self, what: String) {
        self.failures += 1;
        if self.examples.len() < 20 {
            self.examples.push(what);
        }
    }
}

/// Runs `plan.sessions` sessions until `plan.duration` has passed, then closes them.
///
/// # Errors
///
/// A session task panicked.
pub async fn drive(plan: &Plan) -> Result<Report, Error> {
    let until = Instant::now() + plan.duration;
    let plan = Arc::new(plan.clone());
    let tasks: Vec<_> = (0..plan.sessions)
        .map(|worker| {
            let plan = plan.clone();
            tokio::spawn(async move { session(&plan, worker, until).await })
        })
        .collect();
    let mut report = Report::default();
    for task in tasks {
        report.merge(task.await?);
    }
    Ok(report)
}

/// The session's own product, created once and updated after.
struct Product {
    id: i64,
    sku: String,
}

async fn session(plan: &Plan, worker: usize, until: Instant) -> Report {
    let mut report = Report::default();
    let mut product: Option<Product> = None;
    let mut round = 0usize;
    while Instant::now() < until {
        let started = Instant::now();
        let connection = match Connection::http(&plan.url, None).await {
            Ok(connection) => connection,
            Err(error) => {
                report.fail(format!("session {worker}: initialize failed: {error}"));
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        report.record(SESSION_OPEN, started.elapsed());
        report.sessions_opened += 1;
        let peer = connection.peer();
        if product.is_none() {
            match create_product(&peer, worker).await {
                Ok(created) => product = Some(created),
                Err(error) => {
                    report.fail(format!("session {worker}: product-create: {error}"));
                    connection.close().await;
                    continue;
                }
            }
        }
        let own = product.as_ref().expect("created above");
        for _ in 0..plan.cycles_per_session {
            if Instant::now() >= until {
                break;
            }
            let mut in_context = false;
            for (step, kind) in CYCLE.iter().enumerate() {
                round += 1;
                let unique = format!("soak {worker} {round}");
                let (tool, arguments) = request(*kind, worker + round, own, &unique);
                let started = Instant::now();
                let answer = client::call(&peer, tool, &arguments).await;
                let elapsed = started.elapsed();
                match answer.map_err(|e| e.to_string()).and_then(|result| {
                    check(*kind, &result, worker + round, own, &unique, in_context)
                }) {
                    Ok(()) => {
                        report.record(kind.as_str(), elapsed);
                        report.ok += 1;
                    }
                    Err(error) => report.fail(format!(
                        "session {worker}, step {step} ({}): {error}",
                        kind.as_str()
                    )),
                }
                match kind {
                    Kind::Enter => in_context = true,
                    Kind::Exit => in_context = false,
                    _ => {}
                }
            }
        }
        connection.close().await;
    }
    report
}

async fn create_product(peer: &Peer<RoleClient>, worker: usize) -> Result<Product, Error> {
    let sku = format!("SOAK-{worker:05}");
    let input = json!({"sku": sku, "name": format!("soak {worker}"), "category": "soak",
        "priceCents": 100 + worker, "initialStock": 10});
    let result = client::call(
        peer,
        "afd-call",
        &json!({"command": "product-create", "input": input}),
    )
    .await?;
    let data = envelope(&result)?;
    let id = data["data"]["id"]
        .as_i64()
        .ok_or_else(|| format!("no product id in {data}"))?;
    Ok(Product { id, sku })
}

/// The tool and arguments of a `kind` request; `n` picks the category or command.
fn request(kind: Kind, n: usize, own: &Product, unique: &str) -> (&'static str, Value) {
    match kind {
        Kind::Discover => (
            "afd-discover",
            json!({"category": CATEGORIES[n % CATEGORIES.len()], "detail": "summary"}),
        ),
        Kind::Detail => ("afd-detail", json!({"command": DETAILS[n % DETAILS.len()]})),
        Kind::Call => (
            "afd-call",
            json!({"command": "product-update", "input": {"id": own.id, "name": unique}}),
        ),
        Kind::Batch => (
            "afd-batch",
            json!({"commands": [
                {"command": "product-get", "input": {"id": own.id}},
                {"command": "product-list", "input": {"search": own.sku}},
            ]}),
        ),
        Kind::Pipe => (
            "afd-pipe",
            json!({"steps": [
                {"command": "product-get", "input": {"id": own.id}},
                {"command": "product-update", "input": {"id": "$prev.id", "name": unique}},
            ]}),
        ),
        Kind::Enter => (
            "afd-call",
            json!({"command": "afd-context-enter", "input": {"context": "storefront"}}),
        ),
        Kind::Exit => (
            "afd-call",
            json!({"command": "afd-context-exit", "input": {}}),
        ),
    }
}

/// The structured result, which must not be an error.
fn envelope(result: &CallToolResult) -> Result<Value, Error> {
    let data = result
        .structured_content
        .clone()
        .ok_or("the result has no structuredContent")?;
    if result.is_error == Some(true) || data["success"] != json!(true) {
        return Err(format!("the result is an error: {data}").into());
    }
    Ok(data)
}

/// Whether `result` answers the `kind` request built from `n`, `own` and `unique`.
fn check(
    kind: Kind,
    result: &CallToolResult,
    n: usize,
    own: &Product,
    unique: &str,
    in_context: bool,
) -> Result<(), String> {
    let data = envelope(result).map_err(|e| e.to_string())?;
    let expect = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(format!("{what}: {data}"))
        }
    };
    match kind {
        Kind::Discover => {
            let category = CATEGORIES[n % CATEGORIES.len()];
            let commands = data["data"]["commands"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let active = &data["data"]["context"]["active"];
            expect(
                commands.iter().all(|c| c["category"] == category),
                "a command of another category",
            )?;
            expect(
                in_context || !commands.is_empty(),
                "no commands outside a context",
            )?;
            let wanted = if in_context {
                json!("storefront")
            } else {
                Value::Null
            };
            expect(*active == wanted, "the wrong active context")
        }
        Kind::Detail => {
            let name = DETAILS[n % DETAILS.len()];
            expect(
                data["data"][0]["name"] == name && data["data"][0]["found"] == true,
                "the detail of another command",
            )
        }
        Kind::Call => expect(
            data["data"]["id"] == own.id && data["data"]["name"] == unique,
            "another product or name",
        ),
        Kind::Batch => expect(
            data["summary"]["successCount"] == 2
                && data["results"][0]["result"]["data"]["id"] == own.id
                && data["results"][1]["result"]["data"]["items"][0]["sku"] == own.sku.as_str(),
            "the batch answered another request",
        ),
        Kind::Pipe => expect(
            data["data"]["id"] == own.id && data["data"]["name"] == unique,
            "the pipe answered another request",
        ),
        Kind::Enter => expect(
            data["data"]["context"] == "storefront"
                && data["data"]["status"]["active"] == "storefront",
            "entered another context",
        ),
        Kind::Exit => expect(
            data["data"]["exited"] == "storefront" && data["data"]["status"]["active"].is_null(),
            "left another context",
        ),
    }
}

/// A bare streamable HTTP client for the session checks, where the status codes matter.
pub struct Raw {
    http: reqwest::Client,
    url: String,
}

/// An answer to a raw request: status, session header and body.
#[derive(Debug)]
pub struct RawAnswer {
    /// The HTTP status.
    pub status: u16,
    /// The `Mcp-Session-Id` the server gave, if any.
    pub session: Option<String>,
    /// The JSON-RPC message of the body (plain JSON, or the last `data:` of an event
    /// stream), if any.
    pub message: Option<Value>,
    /// `Retry-After`, if given.
    pub retry_after: Option<String>,
}

impl Raw {
    /// A client of `url`.
    pub fn new(url: &str) -> Raw {
        Raw {
            http: reqwest::Client::new(),
            url: url.to_owned(),
        }
    }

    async fn post(&self, session: Option<&str>, body: &Value) -> Result<RawAnswer, Error> {
        let mut request = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        let response = request.send().await?;
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let status = response.status().as_u16();
        let session = header("mcp-session-id");
        let retry_after = header("retry-after");
        let text = tokio::time::timeout(Duration::from_secs(10), response.text())
            .await
            .map_err(|_| "the body did not end")??;
        let message = serde_json::from_str(&text).ok().or_else(|| {
            text.lines()
                .rev()
                .filter_map(|line| line.strip_prefix("data:"))
                .find_map(|data| serde_json::from_str(data.trim()).ok())
        });
        Ok(RawAnswer {
            status,
            session,
            message,
            retry_after,
        })
    }

    /// `initialize` with request id `id`.
    ///
    /// # Errors
    ///
    /// The request could not be sent or read.
    pub async fn initialize(&self, id: u64) -> Result<RawAnswer, Error> {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "afd-soak", "version": "1"}}});
        self.post(None, &body).await
    }

    /// `notifications/initialized` then `tools/list` on `session`: the status of the list.
    ///
    /// # Errors
    ///
    /// A request could not be sent or read.
    pub async fn list(&self, session: &str) -> Result<RawAnswer, Error> {
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let answer = self.post(Some(session), &initialized).await?;
        if answer.status == 404 {
            return Ok(answer);
        }
        self.post(
            Some(session),
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        )
        .await
    }

    /// Ends `session` (HTTP DELETE): the status.
    ///
    /// # Errors
    ///
    /// The request could not be sent.
    pub async fn delete(&self, session: &str) -> Result<u16, Error> {
        let response = self
            .http
            .delete(&self.url)
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
            .await?;
        Ok(response.status().as_u16())
    }
}

/// What a flood of `initialize` requests got.
#[derive(Debug)]
pub struct Flood {
    /// Sessions opened.
    pub opened: Vec<String>,
    /// Requests refused with 503 and the session-limit error.
    pub refused: usize,
    /// Anything else (status and body), which is a failure.
    pub unexpected: Vec<String>,
    /// The first refusal's error message.
    pub message: Option<String>,
    /// The first refusal's `Retry-After`.
    pub retry_after: Option<String>,
}

/// Sends `count` `initialize` requests at once and sorts the answers: a session, or a 503
/// whose JSON-RPC error bears the request's id, code -32000 and a message naming the limit.
///
/// # Errors
///
/// A request could not be sent or read.
pub async fn flood(raw: &Arc<Raw>, count: u64) -> Result<Flood, Error> {
    let tasks: Vec<_> = (0..count)
        .map(|n| {
            let raw = raw.clone();
            tokio::spawn(async move { (n + 1000, raw.initialize(n + 1000).await) })
        })
        .collect();
    let mut flood = Flood {
        opened: Vec::new(),
        refused: 0,
        unexpected: Vec::new(),
        message: None,
        retry_after: None,
    };
    for task in tasks {
        let (id, answer) = task.await?;
        let answer = answer?;
        match (answer.status, answer.session) {
            (200, Some(session)) => flood.opened.push(session),
            (503, None) => {
                let message = answer.message.unwrap_or_default();
                let error = &message["error"];
                let text = error["message"].as_str().unwrap_or_default().to_owned();
                if message["id"] == id && error["code"] == -32000 && text.contains("the limit is") {
                    flood.refused += 1;
                    flood.message.get_or_insert(text);
                    if flood.retry_after.is_none() {
                        flood.retry_after = answer.retry_after;
                    }
                } else {
                    flood.unexpected.push(format!("503 {message}"));
                }
            }
            (status, _) => flood
                .unexpected
                .push(format!("{status} {:?}", answer.message)),
        }
    }
    Ok(flood)
}
