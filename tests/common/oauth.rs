//! The OAuth tests' parts: a real authorization server (`oidc-provider` from npm, run by
//! `tests/auth/server.mjs`) and the tokens it issues, tokens it would never issue made with
//! its own keys (`tests/auth/forge.mjs`), a proxy in front of its key set that counts
//! fetches and can play dead, and a bare HTTP MCP caller that sends a bearer token.

use std::convert::Infallible;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

use super::services::missing;

/// The folder of the authorization server and the SDK clients.
pub fn auth_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("auth")
}

/// Whether `npm ci` has run in `tests/auth` (`.ci/run` runs it); says why not otherwise.
pub fn installed() -> bool {
    if auth_dir().join("node_modules/oidc-provider").is_dir() {
        return true;
    }
    missing::<()>("tests/auth has no node_modules (run `npm ci` there)");
    false
}

/// A running authorization server.
pub struct AuthServer {
    child: Child,
    /// Its issuer identifier, `http://127.0.0.1:PORT`.
    pub issuer: String,
    /// Its port.
    pub port: u16,
    /// The private key set it signs with.
    pub keys: PathBuf,
}

impl AuthServer {
    /// Starts one on `port` (0: any) signing with the key set `keys` (made when missing),
    /// tokens living `ttl` seconds.
    pub fn start(port: u16, keys: &Path, ttl: u32) -> AuthServer {
        let mut child = Command::new("node")
            .arg(auth_dir().join("server.mjs"))
            .args(["--port", &port.to_string(), "--ttl", &ttl.to_string()])
            .arg("--keys")
            .arg(keys)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("node starts tests/auth/server.mjs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("its stdout"))
            .read_line(&mut line)
            .expect("the ready line");
        let ready: Value = serde_json::from_str(&line).unwrap_or_else(|error| {
            panic!("the authorization server did not start ({error}): {line}")
        });
        AuthServer {
            child,
            issuer: ready["issuer"].as_str().expect("issuer").to_owned(),
            port: ready["port"].as_u64().expect("port") as u16,
            keys: keys.to_owned(),
        }
    }

    /// Stops it.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// An access token from the client-credentials grant, for `resource`, with `scope`.
    pub async fn token(&self, client: &str, scope: &str, resource: &str) -> String {
        let response = reqwest::Client::new()
            .post(format!("{}/token", self.issuer))
            .basic_auth(client, Some(format!("{client}-secret")))
            .form(&[
                ("grant_type", "client_credentials"),
                ("resource", resource),
                ("scope", scope),
            ])
            .send()
            .await
            .expect("the token endpoint answers");
        let status = response.status();
        let body: Value = response.json().await.expect("a JSON answer");
        assert!(status.is_success(), "{status}: {body}");
        body["access_token"]
            .as_str()
            .expect("an access token")
            .to_owned()
    }

    /// A token signed with this server's RSA (or, `alg: ES256`, EC) key over `claims`, with
    /// `forge.mjs`'s further `flags`.
    pub fn forge(&self, claims: &Value, flags: &[&str]) -> String {
        let output = Command::new("node")
            .arg(auth_dir().join("forge.mjs"))
            .arg("--keys")
            .arg(&self.keys)
            .args(["--claims", &claims.to_string()])
            .args(flags)
            .output()
            .expect("node runs forge.mjs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("a token")
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A proxy in front of the authorization server's key set: counts the fetches, and answers
/// 503 while it plays dead.
pub struct KeysProxy {
    /// Its URL, the key set's address for the resource server.
    pub url: String,
    fetches: Arc<AtomicUsize>,
    down: Arc<AtomicBool>,
}

impl KeysProxy {
    /// A proxy for `jwks_url`.
    pub async fn start(jwks_url: String) -> KeysProxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let addr: SocketAddr = listener.local_addr().expect("its address");
        let fetches = Arc::new(AtomicUsize::new(0));
        let down = Arc::new(AtomicBool::new(false));
        let (count, dead) = (fetches.clone(), down.clone());
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (count, dead, jwks_url) = (count.clone(), dead.clone(), jwks_url.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |_request: Request<_>| {
                        let (count, dead, jwks_url) =
                            (count.clone(), dead.clone(), jwks_url.clone());
                        async move {
                            count.fetch_add(1, Ordering::SeqCst);
                            let (status, body) = if dead.load(Ordering::SeqCst) {
                                (503, Bytes::from_static(b"down"))
                            } else {
                                match reqwest::get(&jwks_url).await {
                                    Ok(answer) => (
                                        answer.status().as_u16(),
                                        answer.bytes().await.unwrap_or_default(),
                                    ),
                                    Err(_) => (502, Bytes::from_static(b"unreachable")),
                                }
                            };
                            let mut response = Response::new(Full::new(body));
                            *response.status_mut() =
                                hyper::StatusCode::from_u16(status).unwrap_or_default();
                            Ok::<_, Infallible>(response)
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        KeysProxy {
            url: format!("http://{addr}/jwks"),
            fetches,
            down,
        }
    }

    /// How many times the key set was asked for.
    pub fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }

    /// Plays dead (503) or not.
    pub fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }
}

/// One HTTP answer: status, headers, and the JSON-RPC message (from JSON or SSE) or the
/// body's text.
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The headers.
    pub headers: reqwest::header::HeaderMap,
    /// The JSON-RPC message answering the request, `Null` if none.
    pub message: Value,
    /// The body as text.
    pub text: String,
}

impl Answer {
    /// A header's value, `""` when absent.
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
    }
}

/// A caller of an MCP endpoint over streamable HTTP with a bearer token, on a 2025-11-25
/// session once [`Caller::open`] succeeds.
pub struct Caller {
    url: String,
    token: Option<String>,
    /// The session, once open.
    pub session: Option<String>,
    next_id: u64,
    http: reqwest::Client,
}

impl Caller {
    /// A caller sending `token` (none: no `Authorization`).
    pub fn new(url: &str, token: Option<&str>) -> Caller {
        Caller {
            url: url.to_owned(),
            token: token.map(str::to_owned),
            session: None,
            next_id: 1,
            http: reqwest::Client::new(),
        }
    }

    /// Opens a session: `initialize`, then `notifications/initialized`; the `initialize`
    /// answer.
    pub async fn open(&mut self) -> Answer {
        let answer = self
            .send(json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "afd-auth-tests", "version": "0"}}
            }))
            .await;
        if answer.status == 200 {
            self.session = answer
                .headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .await;
        }
        answer
    }

    /// A request; its answer.
    pub async fn request(&mut self, method: &str, params: Value) -> Answer {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await
    }

    /// `tools/call`; its answer.
    pub async fn call(&mut self, tool: &str, arguments: Value) -> Answer {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await
    }

    /// `tools/call` that must succeed at the HTTP and JSON-RPC levels; the tool result.
    pub async fn result(&mut self, tool: &str, arguments: Value) -> Value {
        let answer = self.call(tool, arguments).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        answer.message["result"].clone()
    }

    /// Sends one message.
    pub async fn send(&self, message: Value) -> Answer {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .body(message.to_string());
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        let response = request.send().await.expect("the server answers");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap_or_default();
        let id = message.get("id").cloned();
        let message = match id {
            None => Value::Null,
            Some(id) => std::iter::once(text.trim())
                .chain(text.lines().filter_map(|line| line.strip_prefix("data:")))
                .filter_map(|chunk| serde_json::from_str::<Value>(chunk.trim()).ok())
                .find(|value| value.get("id") == Some(&id))
                .unwrap_or(Value::Null),
        };
        Answer {
            status,
            headers,
            message,
            text,
        }
    }
}
