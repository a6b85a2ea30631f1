//! The gateway on a network: its HTTP front requires OAuth tokens like any afd server
//! (from a real authorization server, `tests/auth/server.mjs` at the workspace root), and a
//! client's token never reaches an upstream: the upstream, the `todo` example behind a
//! static bearer token of its own, gets only the credential the gateway's configuration
//! names by an environment reference. Needs `npm ci` in `tests/auth` and the examples built
//! (`cargo test --workspace` builds them); fails under `CI` without them.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `tests/auth`, when its `node_modules` are installed (a failure under `CI`, whose
/// `.ci/run` installs them; else the test does not run).
fn auth_dir() -> Option<PathBuf> {
    let auth_dir = workspace().join("tests/auth");
    if auth_dir.join("node_modules/oidc-provider").is_dir() {
        return Some(auth_dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "tests/auth has no node_modules: .ci/run runs `npm ci` there"
    );
    eprintln!("tests/auth has no node_modules: the test did not run");
    None
}

/// Kills a child process when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A JSON-RPC message to `url` with `token`; the status and the answer (JSON or SSE).
async fn post(
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    message: Value,
) -> (u16, Option<String>, Value) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(message.to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = response.text().await.unwrap();
    let answer = std::iter::once(text.trim())
        .chain(text.lines().filter_map(|line| line.strip_prefix("data:")))
        .filter_map(|chunk| serde_json::from_str::<Value>(chunk.trim()).ok())
        .find(|value| value.get("id").is_some())
        .unwrap_or_else(|| Value::String(format!("status {status}, body: {text}")));
    (status, session, answer)
}

/// A token of the `writer` client for the resource `url`, by the client-credentials grant.
async fn token_for(issuer: &str, url: &str) -> String {
    let response = reqwest::Client::new()
        .post(format!("{issuer}/token"))
        .basic_auth("writer", Some("writer-secret"))
        .form(&[
            ("grant_type", "client_credentials"),
            ("resource", url),
            ("scope", "todo:read todo:write"),
        ])
        .send()
        .await
        .unwrap();
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    body["access_token"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_front_requires_tokens_and_upstreams_get_their_own_credentials_only() {
    let Some(auth_dir) = auth_dir() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // The authorization server.
    let mut child = Command::new("node")
        .arg(auth_dir.join("server.mjs"))
        .args(["--port", "0", "--keys"])
        .arg(dir.path().join("keys.json"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut ready,
    )
    .unwrap();
    let _auth = Killed(child);
    let issuer = serde_json::from_str::<Value>(&ready).unwrap()["issuer"]
        .as_str()
        .unwrap()
        .to_owned();
    // The upstream: the todo example, which takes its own static token only.
    let upstream_port = free_port();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace().join("target"), PathBuf::from);
    let todo = target.join("debug/examples/todo");
    assert!(todo.exists(), "build the examples first");
    let _upstream = Killed(
        Command::new(&todo)
            .args(["serve", "--strategy", "individual"])
            .args(["--http", &format!("127.0.0.1:{upstream_port}")])
            .args(["--token", "upstream-secret"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for(upstream_port);
    let config = dir.path().join("gateway.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"todo": {
                   "url": format!("http://127.0.0.1:{upstream_port}/mcp"),
                   "headers": {"Authorization": "Bearer ${TODO_UPSTREAM_TOKEN}"}}},
               "gateway": {"cacheDir": dir.path().join("cache")}})
        .to_string(),
    )
    .unwrap();
    let gateway_with = |credential: &str| {
        let port = free_port();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let child = Command::new(env!("CARGO_BIN_EXE_afd-gateway"))
            .arg(&config)
            .args(["--http", &format!("127.0.0.1:{port}")])
            .args(["--auth-issuer", &issuer, "--auth-audience", &url])
            .env("TODO_UPSTREAM_TOKEN", credential)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for(port);
        (Killed(child), url)
    };
    let (_gateway, url) = gateway_with("upstream-secret");
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}});
    // The front: no token, no entry.
    let (status, _, _) = post(&url, None, None, initialize.clone()).await;
    assert_eq!(status, 401);
    // A client's token, issued for the gateway.
    let token = token_for(&issuer, &url).await;
    let (status, session, _) = post(&url, Some(&token), None, initialize.clone()).await;
    assert_eq!(status, 200);
    let session = session.expect("a session");
    post(
        &url,
        Some(&token),
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    // Every upstream request is checked against the upstream's own token: a request
    // carrying the client's would be refused, and the call would fail.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "afd-call",
        "arguments": {"command": "todo.todo-create", "input": {"title": "through the gateway"}}}});
    let deadline = Instant::now() + Duration::from_secs(60);
    let created = loop {
        let (status, _, answer) = post(&url, Some(&token), Some(&session), call.clone()).await;
        assert_eq!(status, 200, "{answer}");
        let result = answer["result"]["structuredContent"].clone();
        // The upstream may still be starting.
        if result["success"] == true || Instant::now() > deadline {
            break result;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(created["success"], true, "{created}");

    // The control: with the wrong credential configured, the upstream refuses the gateway.
    let (_wrong, wrong_url) = gateway_with("not-the-secret");
    let token = token_for(&issuer, &wrong_url).await;
    let (_, session, _) = post(&wrong_url, Some(&token), None, initialize).await;
    post(
        &wrong_url,
        Some(&token),
        session.as_deref(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    let (status, _, answer) = post(&wrong_url, Some(&token), session.as_deref(), call).await;
    assert_eq!(status, 200);
    let refused = answer["result"]["structuredContent"].clone();
    assert_eq!(refused["success"], false, "{answer}");
    assert_eq!(
        refused["error"]["code"], "UPSTREAM_UNAUTHORIZED",
        "{refused}"
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("authorization required"),
        "{refused}"
    );
}

/// The authorization server with tokens living `ttl` seconds (and `extra` arguments); its
/// issuer, and the child.
fn authorization_server(auth_dir: &Path, dir: &Path, ttl: u32, extra: &[&str]) -> (Killed, String) {
    let mut child = Command::new("node")
        .arg(auth_dir.join("server.mjs"))
        .args(["--port", "0", "--ttl", &ttl.to_string(), "--keys"])
        .arg(dir.join("keys.json"))
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut ready,
    )
    .unwrap();
    let issuer = serde_json::from_str::<Value>(&ready).unwrap()["issuer"]
        .as_str()
        .unwrap()
        .to_owned();
    (Killed(child), issuer)
}

/// The gateway (no authorization on its own front) with `config`; its MCP URL.
fn gateway(config: &Path, env: &[(&str, &str)]) -> (Killed, String) {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_afd-gateway"))
        .arg(config)
        .args(["--http", &format!("127.0.0.1:{port}")])
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(port);
    (Killed(child), format!("http://127.0.0.1:{port}/mcp"))
}

/// A session with the gateway at `url`: its id.
async fn open_session(url: &str) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}});
    let (status, session, answer) = post(url, None, None, initialize).await;
    assert_eq!(status, 200, "{answer}");
    let session = session.expect("a session");
    post(
        url,
        None,
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    session
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_behind_oauth_is_reached_by_client_credentials_through_token_expiry() {
    let Some(auth_dir) = auth_dir() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Tokens live two seconds, and the shop allows no leeway: a token used past its
    // lifetime is refused, so a run longer than several lifetimes needs renewed tokens.
    let (_auth, issuer) = authorization_server(&auth_dir, dir.path(), 2, &[]);
    let (shop_url, _shop) = protected_shop(&issuer).await;

    // The gateway discovers the issuer from the shop's protected resource metadata and
    // asks for tokens as the `reader` client.
    let config = dir.path().join("gateway.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"shop": {
                   "url": shop_url,
                   "auth": {"type": "clientCredentials", "clientId": "reader",
                            "clientSecret": "${SHOP_CLIENT_SECRET}", "scopes": ["shop:read"]}}},
               "gateway": {"cacheDir": dir.path().join("cache")}})
        .to_string(),
    )
    .unwrap();
    let (_gateway, url) = gateway(&config, &[("SHOP_CLIENT_SECRET", "reader-secret")]);
    let session = open_session(&url).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "afd-call",
        "arguments": {"command": "shop.product-get", "input": {"id": 1}}}});
    // The upstream starts on first use.
    until_served(&url, &session, &call).await;
    // Load for four token lifetimes, four callers at once (each with its own request ids
    // in the one session): not one call may fail.
    let until = Instant::now() + Duration::from_secs(8);
    let callers = (0..4u64).map(|caller| {
        let (url, session, mut call) = (url.clone(), session.clone(), call.clone());
        tokio::spawn(async move {
            let mut calls = 0u32;
            while Instant::now() < until {
                call["id"] = json!(1000 * (caller + 1) + u64::from(calls));
                let (status, _, answer) = post(&url, None, Some(&session), call.clone()).await;
                assert_eq!(status, 200, "{answer}");
                let result = &answer["result"]["structuredContent"];
                assert_eq!(result["success"], true, "call {calls} failed: {answer}");
                calls += 1;
            }
            calls
        })
    });
    let mut total = 0;
    for caller in callers.collect::<Vec<_>>() {
        total += caller.await.unwrap();
    }
    assert!(total >= 40, "only {total} calls in 8 seconds");

    // The control: a wrong secret is an authorization failure of that upstream, named as
    // such in the call's answer, not an empty catalog.
    let (_wrong, wrong_url) = gateway(&config, &[("SHOP_CLIENT_SECRET", "not-the-secret")]);
    let wrong_session = open_session(&wrong_url).await;
    let message = unauthorized_call(&wrong_url, &wrong_session, &call).await;
    let refused = &message;
    assert!(message.contains("invalid_client"), "{refused}");
    assert!(!message.contains("not-the-secret"), "{refused}");
}

/// Calls `call` through the gateway at `url` until it succeeds (the upstream starts on
/// first use, in the background).
async fn until_served(url: &str, session: &str, call: &Value) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, _, answer) = post(url, None, Some(session), call.clone()).await;
        assert_eq!(status, 200, "{answer}");
        if answer["result"]["structuredContent"]["success"] == true {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the shop never answered: {answer}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The message of `call` through the gateway at `url`, once the gateway answers it
/// `UPSTREAM_UNAUTHORIZED` (the upstream starts in the background: until then it may
/// answer otherwise).
async fn unauthorized_call(url: &str, session: &str, call: &Value) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, _, answer) = post(url, None, Some(session), call.clone()).await;
        assert_eq!(status, 200, "{answer}");
        let result = &answer["result"]["structuredContent"];
        assert_eq!(result["success"], false, "{answer}");
        if result["error"]["code"] == "UPSTREAM_UNAUTHORIZED" {
            return result["error"]["message"].as_str().unwrap().to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "never UPSTREAM_UNAUTHORIZED: {answer}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The shop's commands served in-process behind OAuth tokens of `issuer` (no leeway: a
/// token past its lifetime is refused); its URL and the running server.
async fn protected_shop(issuer: &str) -> (String, afd_runtime::mcp::HttpHandle) {
    use afd_examples::shop::{self, ShopStore};
    use afd_runtime::mcp::{HttpOptions, McpServer, OAuth, Strategy};
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let server = McpServer::builder(afd_runtime::Registry::global())
        .name("shop")
        .strategy(Strategy::Individual)
        .context(shop::context(ShopStore::in_memory().unwrap()))
        .dispatch(|d| d.expose_only(shop::COMMAND_NAMES))
        .build()
        .unwrap();
    let oauth = OAuth::new(issuer, &url).leeway(Duration::ZERO);
    let running = server
        .bind_http(HttpOptions::new(format!("127.0.0.1:{port}").parse().unwrap()).oauth(oauth))
        .await
        .unwrap();
    (url, running)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_is_reached_with_a_persons_kept_sign_in_through_token_expiry() {
    use afd_oauth::{FileStore, Loopback, SignIn};

    let Some(auth_dir) = auth_dir() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (_auth, issuer) = authorization_server(&auth_dir, dir.path(), 2, &["--sign-in", "ada"]);
    let (shop_url, _shop) = protected_shop(&issuer).await;
    let credentials = dir.path().join("credentials");

    // A person signs in as `afd login` does (tests/auth/browser.mjs is the browser).
    let loopback = Loopback::bind(0).await.unwrap();
    // The confidential client `afd-cli`, registered beforehand: the gateway needs its
    // secret for every refresh, since the kept sign-in never holds it.
    let pending = SignIn::new(&shop_url, loopback.redirect_uri())
        .preregistered("afd-cli", Some(afd_oauth::Secret::new("afd-cli-secret")))
        .scopes(["shop:read"])
        .start(FileStore::new(&credentials, &shop_url))
        .await
        .unwrap();
    let mut browser = Command::new("node")
        .arg(auth_dir.join("browser.mjs"))
        .arg(pending.url())
        .spawn()
        .unwrap();
    let redirect = loopback.redirect(Duration::from_secs(30)).await.unwrap();
    pending.finish(&redirect).await.unwrap();
    assert!(browser.wait().unwrap().success());

    let config = dir.path().join("gateway.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"shop": {"url": shop_url,
                   "auth": {"type": "signIn", "credentialsDir": credentials,
                            "clientSecret": "${AFD_CLI_SECRET}"}}},
               "gateway": {"cacheDir": dir.path().join("cache")}})
        .to_string(),
    )
    .unwrap();
    let (_gateway, url) = gateway(&config, &[("AFD_CLI_SECRET", "afd-cli-secret")]);
    let session = open_session(&url).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "afd-call",
        "arguments": {"command": "shop.product-get", "input": {"id": 1}}}});
    until_served(&url, &session, &call).await;
    // Three token lifetimes of calls: each expiry is met by the refresh token.
    let until = Instant::now() + Duration::from_secs(6);
    let mut calls = 0u64;
    while Instant::now() < until {
        let mut call = call.clone();
        call["id"] = json!(100 + calls);
        let (status, _, answer) = post(&url, None, Some(&session), call).await;
        assert_eq!(status, 200, "{answer}");
        let result = &answer["result"]["structuredContent"];
        assert_eq!(result["success"], true, "call {calls} failed: {answer}");
        calls += 1;
    }
    assert!(calls >= 10, "only {calls} calls in 6 seconds");

    // Without a kept sign-in: an authorization failure that says how to sign in.
    std::fs::remove_dir_all(&credentials).unwrap();
    let (_other, other_url) = gateway(&config, &[("AFD_CLI_SECRET", "afd-cli-secret")]);
    let other_session = open_session(&other_url).await;
    let message = unauthorized_call(&other_url, &other_session, &call).await;
    let refused = &message;
    assert!(message.contains("login"), "{refused}");
}
