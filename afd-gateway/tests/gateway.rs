//! The gateway against real upstream servers started by the tests: the project's `todo`
//! and `shop` examples over stdio and HTTP, the hand-written `faulty_upstream` example
//! (faults, progress, cancellation, list changes), and the official `mcp-server-time`
//! from PyPI (installed into `.venv` by `.ci/run`).
//!
//! The examples must be built first: `cargo test --workspace` builds them; alone, run
//! `cargo build -p afd-examples --examples -p afd-gateway` before `cargo test -p afd-gateway`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use afd_gateway::{Config, Gateway, Options};
use rmcp::model::{CallToolRequestParams, ProgressNotificationParam, RequestMetaObject};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn target() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace().join("target"), PathBuf::from)
}

fn example(package_example: &str) -> String {
    let path = target().join("debug/examples").join(package_example);
    assert!(
        path.exists(),
        "{} is missing: build it first with `cargo build -p afd-examples --examples -p afd-gateway --examples`",
        path.display()
    );
    path.display().to_string()
}

/// A scratch directory of this test's own, removed when the test ends.
fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("afd-gateway-test-{name}-"))
        .tempdir()
        .unwrap()
}

#[derive(Clone, Default)]
struct Recorder {
    progress: Arc<AtomicUsize>,
    list_changed: Arc<AtomicUsize>,
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        _params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.fetch_add(1, Ordering::SeqCst);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
    }
}

struct Harness {
    gateway: Arc<Gateway>,
    client: RunningService<RoleClient, Recorder>,
    recorder: Recorder,
}

async fn start(config: Value, warm: bool) -> Harness {
    start_with(config, warm, Options::default()).await
}

async fn start_with(config: Value, warm: bool, options: Options) -> Harness {
    let config = Config::parse(&config.to_string()).expect("a valid configuration");
    let (gateway, events) = Gateway::new(&config, options).expect("the gateway builds");
    tokio::spawn(gateway.clone().run_events(events));
    if warm {
        gateway.warm();
    }
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let connection = gateway.connection();
    tokio::spawn(async move {
        if let Ok(running) = connection.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let recorder = Recorder::default();
    let client = recorder
        .clone()
        .serve(client_io)
        .await
        .expect("the client connects");
    Harness {
        gateway,
        client,
        recorder,
    }
}

impl Harness {
    async fn call(&self, tool: &str, arguments: Value) -> Value {
        let Value::Object(map) = arguments else {
            panic!("object arguments")
        };
        let result = self
            .client
            .peer()
            .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(map))
            .await
            .expect("tools/call");
        let structured = result.structured_content.expect("structuredContent");
        assert_eq!(
            result.is_error.unwrap_or(false),
            structured["success"] == false
        );
        structured
    }

    async fn afd_call(&self, command: &str, input: Value) -> Value {
        self.call("afd-call", json!({"command": command, "input": input}))
            .await
    }

    /// Waits until `server`'s tools are known (it was warmed in the background).
    async fn wait_for_tools(&self, server: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.gateway.upstream(server).unwrap().tools().is_none()
            || self.discover_names(server).await.is_empty()
        {
            assert!(Instant::now() < deadline, "{server} never listed its tools");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn discover_names(&self, server: &str) -> Vec<String> {
        let found = self
            .call("afd-discover", json!({"server": server, "limit": 200}))
            .await;
        found["data"]["commands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_owned())
            .collect()
    }
}

fn todo_stdio() -> Value {
    json!({"command": example("todo"), "args": ["serve", "--strategy", "individual"], "deny": ["afd-*"]})
}

fn faulty(extra: Value) -> Value {
    let mut server = json!({"command": example("faulty_upstream")});
    for (key, value) in extra.as_object().unwrap() {
        server[key] = value.clone();
    }
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stdio_upstreams_behind_the_lazy_surface() {
    let cache = temp_dir("stdio");
    let h = start(
        json!({"mcpServers": {
            "todo": todo_stdio(),
            "shop": {"command": example("shop"), "args": ["--strategy", "individual"], "deny": ["afd-*"]}},
            "gateway": {"cacheDir": cache.path()}}),
        true,
    )
    .await;
    h.wait_for_tools("todo").await;
    h.wait_for_tools("shop").await;

    // Five meta-tools, whatever the upstreams hold.
    let tools = h.client.peer().list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "afd-discover",
            "afd-detail",
            "afd-call",
            "afd-batch",
            "afd-pipe"
        ]
    );
    let discover = tools.iter().find(|t| t.name == "afd-discover").unwrap();
    assert!(discover.input_schema["properties"]["server"].is_object());

    // Servers are the browsable level: categories with counts and descriptions.
    let browse = h.call("afd-discover", json!({})).await;
    let categories = browse["data"]["categories"].as_array().unwrap();
    let todo = categories.iter().find(|c| c["name"] == "todo").unwrap();
    assert!(todo["count"].as_u64().unwrap() >= 5, "{todo}");
    assert!(categories.iter().any(|c| c["name"] == "shop"));
    let todo_tools = h.discover_names("todo").await;
    assert!(
        todo_tools.contains(&"todo.todo-create".to_owned()),
        "{todo_tools:?}"
    );
    assert!(
        todo_tools
            .iter()
            .all(|name| name.starts_with("todo.") && !name.starts_with("todo.afd-"))
    );

    // Ranked search across servers.
    let found = h
        .call("afd-discover", json!({"search": "cancel an order"}))
        .await;
    let first = found["data"]["commands"][0]["name"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(first.starts_with("shop.order"), "{found}");
    // Several phrasings of one request (the request, then a tool's words): one page across
    // servers, each tool once, and the server filter still applies.
    let fused = h
        .call(
            "afd-discover",
            json!({"search": ["I want my money back for order 1042", "refund order", "refund payment"]}),
        )
        .await;
    let fused_names: Vec<&str> = fused["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(
        fused_names.iter().any(|name| name.contains("refund")),
        "{fused}"
    );
    assert!(fused_names.len() > 1, "{fused}");
    // A request no upstream can serve: `match: none` across servers, no command to call,
    // the nearest named as not a match.
    let nothing = h
        .call(
            "afd-discover",
            json!({"search": ["book a flight to Paris", "reserve airline tickets", "flight booking"]}),
        )
        .await;
    assert_eq!(nothing["data"]["match"], "none", "{nothing}");
    assert_eq!(nothing["data"]["commands"], json!([]), "{nothing}");
    assert!(
        !nothing["data"]["notAMatch"].as_array().unwrap().is_empty(),
        "{nothing}"
    );
    let mut unique = fused_names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), fused_names.len(), "{fused}");
    let todo_only = h
        .call(
            "afd-discover",
            json!({"search": ["remove a task", "delete todo"], "server": "todo"}),
        )
        .await;
    let todo_first = todo_only["data"]["commands"][0]["name"].as_str().unwrap();
    assert_eq!(todo_first, "todo.todo-delete", "{todo_only}");
    let refused = h
        .call("afd-discover", json!({"search": ["a", "b", "c", "d"]}))
        .await;
    assert_eq!(refused["error"]["code"], "VALIDATION_ERROR", "{refused}");

    // Detail levels and the upstream schema.
    let detail = h
        .call("afd-detail", json!({"command": "todo.todo-create"}))
        .await;
    assert_eq!(detail["success"], true, "{detail}");
    assert!(detail.to_string().contains("title"));

    // Call, batch and pipe reach the upstream; mutation flags come from annotations.
    let created = h
        .afd_call("todo.todo-create", json!({"title": "through the gateway"}))
        .await;
    assert_eq!(created["success"], true, "{created}");
    let batch = h
        .call(
            "afd-batch",
            json!({"commands": [
                {"command": "todo.todo-create", "input": {"title": "B"}},
                {"command": "todo.todo-list", "input": {}}]}),
        )
        .await;
    assert_eq!(batch["success"], true, "{batch}");
    let pipe = h
        .call(
            "afd-pipe",
            json!({"steps": [
                {"command": "todo.todo-create", "input": {"title": "P"}, "as": "made"},
                {"command": "todo.todo-list", "input": {}}]}),
        )
        .await;
    assert_eq!(pipe["success"], true, "{pipe}");
    // Usage statistics count upstream tools like any command, and predict the next one.
    let usage = h.gateway.server().dispatcher().usage().clone();
    assert_eq!(usage.stats("todo.todo-create").unwrap().calls, 3);
    let next = usage.next_after("todo.todo-create", 3);
    assert!(
        next.iter().any(|s| s.command == "todo.todo-list"),
        "{next:?}"
    );
    h.gateway.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_cache_serves_discovery_before_any_upstream_runs() {
    let cache = temp_dir("cache");
    let config =
        json!({"mcpServers": {"todo": todo_stdio()}, "gateway": {"cacheDir": cache.path()}});
    {
        let h = start(config.clone(), true).await;
        h.wait_for_tools("todo").await;
        h.gateway.shutdown();
    }
    assert!(cache.path().join("todo.json").exists());
    let cached: Value =
        serde_json::from_str(&std::fs::read_to_string(cache.path().join("todo.json")).unwrap())
            .unwrap();
    assert!(
        cached["serverVersion"].is_string(),
        "the cache keeps the upstream's version"
    );

    // A new gateway, not warmed: the tools come from the cache and nothing runs.
    let h = start(config, false).await;
    let todo = h.gateway.upstream("todo").unwrap().clone();
    assert!(
        h.discover_names("todo")
            .await
            .contains(&"todo.todo-list".to_owned())
    );
    assert_eq!(todo.starts(), 0, "discovery must not start the upstream");
    let listed = h.afd_call("todo.todo-list", json!({})).await;
    assert_eq!(listed["success"], true, "{listed}");
    assert_eq!(todo.starts(), 1, "the first call starts it");
    h.gateway.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn http_upstreams_are_served_too() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut child = tokio::process::Command::new(example("todo"))
        .args([
            "serve",
            "--strategy",
            "individual",
            "--http",
            &format!("127.0.0.1:{port}"),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            Instant::now() < deadline,
            "the HTTP todo server did not start"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let cache = temp_dir("http");
    let h = start(
        json!({"mcpServers": {"remote": {"url": format!("http://127.0.0.1:{port}/mcp"), "headers": {"X-Test": "1"}}},
               "gateway": {"cacheDir": cache.path()}}),
        true,
    )
    .await;
    h.wait_for_tools("remote").await;
    let created = h
        .afd_call("remote.todo-create", json!({"title": "over HTTP"}))
        .await;
    assert_eq!(created["success"], true, "{created}");
    let listed = h.afd_call("remote.todo-list", json!({})).await;
    assert!(listed.to_string().contains("over HTTP"), "{listed}");
    h.gateway.shutdown();
    let _ = child.kill().await;
}

/// Kills a child process when the test ends, however it ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The first `afd-call` answer of `tool` through the gateway binary started with `config`
/// (and `SSL_CERT_FILE` = `ca`, if given) that is not a "still starting" one.
async fn call_through_the_binary(
    config: &Path,
    ca: Option<&Path>,
    tool: &str,
    input: Value,
) -> Value {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_afd-gateway"));
    command
        .arg(config)
        .env_remove("SSL_CERT_FILE")
        .env_remove("SSL_CERT_DIR");
    if let Some(ca) = ca {
        command.env("SSL_CERT_FILE", ca);
    }
    let (transport, _stderr) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let client = ().serve(transport).await.expect("the gateway answers initialize");
    let arguments = json!({"command": tool, "input": input});
    let result = client
        .peer()
        .call_tool(
            CallToolRequestParams::new("afd-call")
                .with_arguments(arguments.as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    client.cancel().await.unwrap();
    result.structured_content.unwrap()
}

/// A remote server behind HTTPS, as hosted MCP servers are: the todo example behind nginx
/// ending TLS with a certificate for `localhost` from the test run's CA
/// (`AFD_TEST_TLS_DIR`, made by `.ci/run`). Trusted through `SSL_CERT_FILE`, its tools are
/// served; without it the call fails naming the refused certificate.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_https_upstream_is_served_and_a_refused_certificate_named() {
    let Some(tls) = std::env::var_os("AFD_TEST_TLS_DIR").map(PathBuf::from) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "AFD_TEST_TLS_DIR is needed under CI"
        );
        return eprintln!("AFD_TEST_TLS_DIR is not set: the test did not run");
    };
    let nginx = std::env::var_os("AFD_TEST_NGINX").unwrap_or_else(|| "nginx".into());
    if std::process::Command::new(&nginx)
        .arg("-v")
        .output()
        .is_err()
    {
        assert!(std::env::var_os("CI").is_none(), "nginx is needed under CI");
        return eprintln!("nginx is not installed: the test did not run");
    }
    let free = || {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let (backend, front) = (free(), free());
    let _todo = Killed(
        std::process::Command::new(example("todo"))
            .args(["serve", "--strategy", "individual"])
            .args(["--http", &format!("127.0.0.1:{backend}")])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    // nginx's workers may run as another user: a directory they can enter.
    let dir = tempfile::Builder::new()
        .prefix("afd-gateway-test-https-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .tempdir()
        .unwrap();
    let d = dir.path().display();
    let nginx_config = format!(
        "daemon off; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log warn;
events {{ worker_connections 64; }}
http {{
    client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi; access_log off;
    server {{
        listen 127.0.0.1:{front} ssl;
        ssl_certificate {cert}; ssl_certificate_key {key};
        location /mcp {{
            proxy_pass http://127.0.0.1:{backend}; proxy_http_version 1.1;
            proxy_set_header Connection \"\"; proxy_buffering off;
        }}
    }}
}}
",
        cert = tls.join("server.pem").display(),
        key = tls.join("server.key").display(),
    );
    std::fs::write(dir.path().join("nginx.conf"), nginx_config).unwrap();
    let _nginx = Killed(
        std::process::Command::new(&nginx)
            .arg("-p")
            .arg(dir.path())
            .arg("-e")
            .arg(dir.path().join("error.log"))
            .arg("-c")
            .arg(dir.path().join("nginx.conf"))
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("nginx starts"),
    );
    for port in [backend, front] {
        let deadline = Instant::now() + Duration::from_secs(30);
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(Instant::now() < deadline, "port {port} did not open");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let config = dir.path().join("servers.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"remote": {"url": format!("https://localhost:{front}/mcp")}},
               "gateway": {"cacheDir": dir.path().join("cache")}})
        .to_string(),
    )
    .unwrap();

    let ca = tls.join("ca.pem");
    let created = call_through_the_binary(
        &config,
        Some(&ca),
        "remote.todo-create",
        json!({"title": "over HTTPS"}),
    )
    .await;
    assert_eq!(created["success"], true, "{created}");
    assert_eq!(created["data"]["data"]["title"], "over HTTPS", "{created}");

    let refused =
        call_through_the_binary(&config, None, "remote.todo-create", json!({"title": "x"})).await;
    assert_eq!(refused["success"], false, "{refused}");
    assert!(
        refused.to_string().contains("invalid peer certificate"),
        "the reason is named: {refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn policy_is_enforced_on_call_batch_and_pipe() {
    let cache = temp_dir("policy");
    let h = start(
        json!({"mcpServers": {
            "todo": {"command": example("todo"), "args": ["serve", "--strategy", "individual"],
                     "deny": ["afd-*", "todo-delete"], "readOnly": true},
            "faulty": faulty(json!({"allow": ["echo", "fail"]}))},
            "gateway": {"cacheDir": cache.path()}}),
        true,
    )
    .await;
    h.wait_for_tools("todo").await;
    h.wait_for_tools("faulty").await;
    let todo_tools = h.discover_names("todo").await;
    assert!(todo_tools.contains(&"todo.todo-list".to_owned()));
    assert!(
        !todo_tools.contains(&"todo.todo-create".to_owned()),
        "read-only hides mutations"
    );
    assert!(!todo_tools.contains(&"todo.todo-delete".to_owned()));
    assert_eq!(
        h.discover_names("faulty").await,
        ["faulty.echo", "faulty.fail"]
    );

    let refused = |v: &Value| v["success"] == false && v["error"]["code"] == "COMMAND_NOT_EXPOSED";
    let call = h.afd_call("todo.todo-create", json!({"title": "no"})).await;
    assert!(refused(&call), "{call}");
    let by_name = h.call("todo.todo-create", json!({"title": "no"})).await;
    assert_eq!(by_name["success"], false, "{by_name}");
    let batch = h
        .call(
            "afd-batch",
            json!({"commands": [{"command": "faulty.crash"}, {"command": "todo.todo-list"}]}),
        )
        .await;
    assert!(refused(&batch["results"][0]["result"]), "{batch}");
    assert_eq!(batch["results"][1]["result"]["success"], true, "{batch}");
    let pipe = h
        .call("afd-pipe", json!({"steps": [{"command": "todo.todo-list"}, {"command": "todo.todo-delete", "input": {"id": "x"}}]}))
        .await;
    assert_eq!(pipe["success"], false, "{pipe}");
    assert!(pipe.to_string().contains("COMMAND_NOT_EXPOSED"), "{pipe}");
    // The crash tool never ran: the upstream is still up.
    let echo = h.afd_call("faulty.echo", json!({"message": "alive"})).await;
    assert_eq!(echo["data"], json!({"echo": "alive"}), "{echo}");
    h.gateway.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn results_progress_cancellation_and_list_changes_pass_through() {
    let cache = temp_dir("pass");
    let marker = cache.path().join("marker");
    let h = start(
        json!({"mcpServers": {"faulty": faulty(json!({"env": {"FAULTY_MARKER": marker}}))},
               "gateway": {"cacheDir": cache.path()}}),
        true,
    )
    .await;
    h.wait_for_tools("faulty").await;

    // structuredContent is the data; isError is a failure naming the server.
    let echo = h.afd_call("faulty.echo", json!({"message": "hi"})).await;
    assert_eq!(echo["data"], json!({"echo": "hi"}));
    // Text is data; an image reaches the client as an image block.
    let Value::Object(arguments) = json!({"command": "faulty.chart", "input": {}}) else {
        unreachable!()
    };
    let chart = h
        .client
        .peer()
        .call_tool(CallToolRequestParams::new("afd-call").with_arguments(arguments))
        .await
        .unwrap();
    let blocks = serde_json::to_value(&chart.content).unwrap();
    assert_eq!(
        blocks[0],
        json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}),
        "{blocks}"
    );
    let structured = chart.structured_content.expect("the text as data");
    assert_eq!(structured["data"]["content"][0]["text"], "the chart:");
    let fail = h.afd_call("faulty.fail", json!({})).await;
    assert_eq!(fail["error"]["code"], "UPSTREAM_TOOL_ERROR", "{fail}");
    assert!(fail["error"]["message"].as_str().unwrap().contains("boom"));
    assert_eq!(fail["error"]["details"]["server"], "faulty");

    // Annotations: crash is destructive, echo read-only.
    let detail = h
        .call("afd-detail", json!({"command": "faulty.crash"}))
        .await;
    assert!(
        detail.to_string().contains("\"destructive\":true"),
        "{detail}"
    );

    // Progress from the upstream reaches the client.
    let mut params = CallToolRequestParams::new("afd-call").with_arguments(
        json!({"command": "faulty.sleep", "input": {"ms": 300}})
            .as_object()
            .unwrap()
            .clone(),
    );
    let mut meta = RequestMetaObject::new();
    meta.set_progress_token(rmcp::model::ProgressToken(
        rmcp::model::NumberOrString::Number(7),
    ));
    params.meta = Some(meta);
    let slept = h.client.peer().call_tool(params).await.unwrap();
    assert_eq!(
        slept.structured_content.unwrap()["data"],
        json!({"slept": 300})
    );
    assert!(
        h.recorder.progress.load(Ordering::SeqCst) >= 2,
        "progress was forwarded"
    );

    // Cancellation reaches the upstream: the client gives up on a long call.
    let peer = h.client.peer().clone();
    let long = tokio::spawn(async move {
        peer.call_tool(
            CallToolRequestParams::new("afd-call").with_arguments(
                json!({"command": "faulty.sleep", "input": {"ms": 20000}})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    long.abort(); // dropping the request sends notifications/cancelled
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(&marker).unwrap_or_default();
        if text.contains("cancelled") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the upstream never saw the cancellation: {text}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // notifications/tools/list_changed from the upstream refreshes the index.
    assert!(
        !h.discover_names("faulty")
            .await
            .contains(&"faulty.extra".to_owned())
    );
    let added = h.afd_call("faulty.add_tool", json!({})).await;
    assert_eq!(added["success"], true, "{added}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !h
        .discover_names("faulty")
        .await
        .contains(&"faulty.extra".to_owned())
    {
        assert!(
            Instant::now() < deadline,
            "the new upstream tool never appeared"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let extra = h.afd_call("faulty.extra", json!({})).await;
    assert_eq!(extra["success"], true, "{extra}");
    let cached = std::fs::read_to_string(cache.path().join("faulty.json")).unwrap();
    assert!(cached.contains("\"extra\""), "the cache follows the change");
    h.gateway.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn faults_stay_with_their_server() {
    let cache = temp_dir("faults");
    let marker = cache.path().join("marker");
    let h = start(
        json!({"mcpServers": {
            "todo": todo_stdio(),
            "faulty": faulty(json!({"env": {"FAULTY_MARKER": marker}, "timeoutMs": 1500})),
            "missing": {"command": "/nonexistent/afd-gateway-upstream"},
            "garbage": faulty(json!({"args": ["--garbage"], "startTimeoutMs": 1500}))},
            "gateway": {"cacheDir": cache.path()}}),
        true,
    )
    .await;
    h.wait_for_tools("todo").await;
    h.wait_for_tools("faulty").await;

    // An upstream killed mid-call: a structured error naming it, the others unaffected.
    let pid_line = std::fs::read_to_string(&marker).unwrap();
    let pid = pid_line
        .lines()
        .find_map(|l| l.strip_prefix("started "))
        .unwrap()
        .to_owned();
    let peer = h.client.peer().clone();
    let call = tokio::spawn(async move {
        peer.call_tool(
            CallToolRequestParams::new("afd-call").with_arguments(
                json!({"command": "faulty.sleep", "input": {"ms": 10000}})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let started = Instant::now();
    let result = call.await.unwrap().unwrap().structured_content.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the crash was noticed at once"
    );
    assert_eq!(result["error"]["code"], "UPSTREAM_UNAVAILABLE", "{result}");
    assert_eq!(result["error"]["details"]["server"], "faulty");
    assert!(
        result["error"]["message"]
            .as_str()
            .unwrap()
            .contains("'faulty'")
    );
    let other = h.afd_call("todo.todo-list", json!({})).await;
    assert_eq!(other["success"], true, "{other}");

    // It is restarted (after its backoff) on the next call.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let again = h.afd_call("faulty.echo", json!({"message": "back"})).await;
    assert_eq!(again["data"], json!({"echo": "back"}), "{again}");
    assert_eq!(h.gateway.upstream("faulty").unwrap().starts(), 2);

    // A crash inside a tool: the same.
    let crash = h.afd_call("faulty.crash", json!({})).await;
    assert_eq!(crash["error"]["code"], "UPSTREAM_UNAVAILABLE", "{crash}");

    // A hung call times out with a structured error, and does not block other servers.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let peer = h.client.peer().clone();
    let slow = tokio::spawn(async move {
        peer.call_tool(
            CallToolRequestParams::new("afd-call").with_arguments(
                json!({"command": "faulty.sleep", "input": {"ms": 10000}})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let quick_start = Instant::now();
    let quick = h.afd_call("todo.todo-list", json!({})).await;
    assert_eq!(quick["success"], true);
    assert!(
        quick_start.elapsed() < Duration::from_secs(1),
        "a slow upstream blocked another"
    );
    let timed_out = slow.await.unwrap().unwrap().structured_content.unwrap();
    assert_eq!(timed_out["error"]["code"], "TIMEOUT", "{timed_out}");
    assert_eq!(timed_out["error"]["details"]["server"], "faulty");

    // A server that cannot start, and one that answers garbage: structured errors.
    let missing = h.gateway.upstream("missing").unwrap().clone();
    let error = missing.connect().await.unwrap_err();
    assert_eq!(error.code, "UPSTREAM_UNAVAILABLE");
    assert!(error.message.contains("'missing'"), "{}", error.message);
    let garbage = h.gateway.upstream("garbage").unwrap().clone();
    let deadline = Instant::now() + Duration::from_secs(20);
    while garbage.last_error().is_none() {
        assert!(Instant::now() < deadline, "garbage was never reported");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let error = garbage.connect().await.unwrap_err();
    assert_eq!(error.code, "UPSTREAM_UNAVAILABLE", "{error:?}");
    assert!(error.details.unwrap()["retryAfterMs"].as_u64().is_some());

    // And the gateway still serves.
    let still = h.afd_call("todo.todo-list", json!({})).await;
    assert_eq!(still["success"], true);
    h.gateway.shutdown();
}

/// The official time server's binary (`$AFD_GATEWAY_TIME_SERVER`, else `.venv`); `None`
/// (the test is skipped, with a note) when it is missing outside CI. Under CI a missing
/// server fails the test.
fn time_server() -> Option<PathBuf> {
    let binary = std::env::var_os("AFD_GATEWAY_TIME_SERVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join(".venv/bin/mcp-server-time"));
    if binary.exists() {
        return Some(binary);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} is missing; .ci/run installs it",
        binary.display()
    );
    eprintln!(
        "SKIPPED: {} is missing (`python3 -m venv .venv && .venv/bin/pip install mcp-server-time`); CI runs this test",
        binary.display()
    );
    None
}

/// The official reference time server from PyPI (`mcp-server-time`, installed into `.venv`
/// by `.ci/run`): a server no one here wrote.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_third_party_server_from_pypi() {
    let Some(binary) = time_server() else { return };
    let cache = temp_dir("time");
    let h = start(
        json!({"mcpServers": {"time": {"command": binary, "args": ["--local-timezone", "UTC"]}},
               "gateway": {"cacheDir": cache.path()}}),
        true,
    )
    .await;
    h.wait_for_tools("time").await;
    let names = h.discover_names("time").await;
    assert!(
        names.contains(&"time.get_current_time".to_owned()),
        "{names:?}"
    );
    let found = h
        .call(
            "afd-discover",
            json!({"search": "convert a time between timezones"}),
        )
        .await;
    assert_eq!(
        found["data"]["commands"][0]["name"], "time.convert_time",
        "{found}"
    );
    let now = h
        .afd_call("time.get_current_time", json!({"timezone": "Europe/Paris"}))
        .await;
    assert_eq!(now["success"], true, "{now}");
    assert!(now.to_string().contains("Europe/Paris"), "{now}");
    let bad = h
        .afd_call("time.get_current_time", json!({"timezone": "Mars/Olympus"}))
        .await;
    assert_eq!(bad["success"], false, "{bad}");
    assert_eq!(bad["error"]["details"]["server"], "time", "{bad}");
    h.gateway.shutdown();
}

/// The installed binary, as a client starts it: stdout carries only MCP (logs and the
/// upstreams' stderr go to stderr), and `--report` prints the comparison.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_binary_serves_over_stdio_and_reports() {
    let dir = temp_dir("binary");
    let config = dir.path().join("servers.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"todo": todo_stdio(), "faulty": faulty(json!({}))},
               "gateway": {"cacheDir": dir.path().join("cache")}})
        .to_string(),
    )
    .unwrap();
    let binary = env!("CARGO_BIN_EXE_afd-gateway");
    let mut command = tokio::process::Command::new(binary);
    command.arg(&config);
    let (transport, _stderr) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let client = ().serve(transport).await.expect("the gateway answers initialize");
    let tools = client.peer().list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 5);
    let deadline = Instant::now() + Duration::from_secs(60);
    let echo = loop {
        let result = client
            .peer()
            .call_tool(
                CallToolRequestParams::new("afd-call").with_arguments(
                    json!({"command": "faulty.echo", "input": {"message": "via the binary"}})
                        .as_object()
                        .unwrap()
                        .clone(),
                ),
            )
            .await
            .unwrap();
        let structured = result.structured_content.unwrap();
        if structured["success"] == true || Instant::now() > deadline {
            break structured;
        }
        // The tools are not known until the warm start has listed them.
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(echo["data"], json!({"echo": "via the binary"}), "{echo}");
    client.cancel().await.unwrap();

    let report = std::process::Command::new(binary)
        .arg(&config)
        .arg("--report")
        .stderr(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(report.status.success());
    let text = String::from_utf8(report.stdout).unwrap();
    assert!(text.contains("through afd-gateway (lazy)"), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("through afd-gateway"))
        .unwrap();
    let numbers: Vec<usize> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(numbers[0], 5, "{text}");
    let direct = text
        .lines()
        .find(|l| l.starts_with("all servers directly"))
        .unwrap();
    let direct: Vec<usize> = direct
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(
        direct[0],
        14 + 6,
        "todo's 14 tools (individual) and faulty's 6: {text}"
    );
}

/// Contexts declared in the configuration scope upstream tools as they scope commands.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn configured_contexts_scope_upstream_tools() {
    let cache = temp_dir("contexts");
    let h = start(
        json!({"mcpServers": {"todo": todo_stdio(), "faulty": faulty(json!({}))},
               "contexts": {
                   "todos": {"description": "Reading the todo list.", "servers": ["todo"],
                             "readOnly": true, "triggers": ["todo"]},
                   "echoing": {"description": "Echoing.", "tools": ["faulty.echo"]}},
               "gateway": {"cacheDir": cache.path()}}),
        true,
    )
    .await;
    h.wait_for_tools("todo").await;
    h.wait_for_tools("faulty").await;
    let suggested = h
        .afd_call(
            "afd-context-suggest",
            json!({"intent": "look at my todo list"}),
        )
        .await;
    assert_eq!(
        suggested["data"]["suggestions"][0]["suggestedContext"], "todos",
        "{suggested}"
    );
    let entered = h
        .afd_call("afd-context-enter", json!({"context": "todos"}))
        .await;
    assert_eq!(entered["success"], true, "{entered}");
    let listed = h.afd_call("todo.todo-list", json!({})).await;
    assert_eq!(listed["success"], true, "{listed}");
    let outside = h.afd_call("faulty.echo", json!({"message": "x"})).await;
    assert_eq!(outside["error"]["code"], "CONTEXT_MISMATCH", "{outside}");
    let change = h.afd_call("todo.todo-create", json!({"title": "no"})).await;
    assert_eq!(
        change["error"]["code"], "FORBIDDEN",
        "read-only scope: {change}"
    );
    let found = h.call("afd-discover", json!({"server": "todo"})).await;
    assert_eq!(found["data"]["context"]["active"], "todos", "{found}");
    let exited = h.afd_call("afd-context-exit", json!({})).await;
    assert_eq!(exited["success"], true, "{exited}");
    let echo = h.afd_call("faulty.echo", json!({"message": "back"})).await;
    assert_eq!(echo["success"], true, "{echo}");
    h.gateway.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_server_predicted_next_is_started_in_the_background() {
    use afd_runtime::usage::UsageStats;

    let cache = temp_dir("predict");
    let servers = json!({"todo": todo_stdio(), "notes": todo_stdio()});
    let config = json!({"mcpServers": servers, "gateway": {"cacheDir": cache.path()}});
    {
        let h = start(config.clone(), true).await;
        h.wait_for_tools("todo").await;
        h.wait_for_tools("notes").await;
        // Both lists are cached (each after its own catalog rebuild) before the next start.
        let deadline = Instant::now() + Duration::from_secs(60);
        while !(cache.path().join("todo.json").exists() && cache.path().join("notes.json").exists())
        {
            assert!(
                Instant::now() < deadline,
                "the tool lists were never cached"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        h.gateway.shutdown();
    }
    // Earlier sessions listed todos in one server, then in the other.
    let usage = UsageStats::in_memory();
    for session in ["a", "b", "c"] {
        usage.record_now(session, "todo.todo-list", true);
        usage.record_now(session, "notes.todo-list", true);
    }
    let options = Options {
        usage: Some(usage.clone()),
        ..Options::default()
    };
    let h = start_with(config.clone(), false, options).await;
    let notes = h.gateway.upstream("notes").unwrap().clone();
    assert_eq!(notes.starts(), 0);
    let listed = h.afd_call("todo.todo-list", json!({})).await;
    assert_eq!(listed["success"], true, "{listed}");
    // Not called, but predicted: it starts on its own.
    let deadline = Instant::now() + Duration::from_secs(60);
    while notes.starts() == 0 {
        assert!(
            Instant::now() < deadline,
            "the predicted server never started"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    h.gateway.shutdown();

    // Switched off: nothing is predicted.
    let mut off = config;
    off["gateway"]["predictiveStart"] = json!(false);
    let options = Options {
        usage: Some(usage),
        ..Options::default()
    };
    let h = start_with(off, false, options).await;
    let listed = h.afd_call("todo.todo-list", json!({})).await;
    assert_eq!(listed["success"], true, "{listed}");
    assert_eq!(h.gateway.start_predicted("todo.todo-list"), None);
    assert_eq!(h.gateway.upstream("notes").unwrap().starts(), 0);
    h.gateway.shutdown();
}

/// A script that sleeps `seconds` before it runs its arguments: a server slow to start.
fn slow_start(dir: &Path, seconds: u32) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join(format!("slow-{seconds}.sh"));
    std::fs::write(&path, format!("#!/bin/sh\nsleep {seconds}\nexec \"$@\"\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn shop_stdio() -> Value {
    json!({"command": example("shop"), "args": ["--strategy", "individual"], "deny": ["afd-*"]})
}

/// The names of the categories (servers) an afd-discover without filters lists.
fn categories(browse: &Value) -> Vec<String> {
    browse["data"]["categories"]
        .as_array()
        .unwrap_or_else(|| panic!("categories: {browse}"))
        .iter()
        .filter(|c| c["count"].as_u64().unwrap_or(0) > 0)
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect()
}

fn unavailable_warning(answer: &Value) -> Option<String> {
    answer["warnings"]
        .as_array()?
        .iter()
        .find(|w| w["code"] == afd_gateway::pending::SERVERS_UNAVAILABLE)
        .map(|w| w["message"].as_str().unwrap_or_default().to_owned())
}

/// Right after `initialize`, with an empty cache and both servers slow to start, the
/// first afd-discover waits for them: the shop and the Python time server are both there.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_first_discovery_waits_for_servers_still_starting() {
    let Some(time) = time_server() else { return };
    let dir = temp_dir("cold");
    let slow = slow_start(dir.path(), 2);
    let h = start(
        json!({"mcpServers": {
            "shop": {"command": slow, "args": [example("shop"), "--strategy", "individual"], "deny": ["afd-*"]},
            "time": {"command": slow, "args": [time, "--local-timezone", "UTC"]}},
            "gateway": {"cacheDir": dir.path().join("cache")}}),
        true,
    )
    .await;
    let browse = h.call("afd-discover", json!({})).await;
    assert_eq!(browse["success"], true, "{browse}");
    let servers = categories(&browse);
    assert!(
        servers.contains(&"shop".to_owned()) && servers.contains(&"time".to_owned()),
        "{browse}"
    );
    assert_eq!(unavailable_warning(&browse), None, "{browse}");
    let found = h
        .call(
            "afd-discover",
            json!({"search": "convert a time between timezones"}),
        )
        .await;
    assert_eq!(
        found["data"]["commands"][0]["name"], "time.convert_time",
        "{found}"
    );
    h.gateway.shutdown();

    // Not warmed, a fresh cache: afd-detail and afd-call start the server they need.
    let h = start(
        json!({"mcpServers": {
            "time": {"command": slow, "args": [time, "--local-timezone", "UTC"]}},
            "gateway": {"cacheDir": dir.path().join("cache-2")}}),
        false,
    )
    .await;
    let detail = h
        .call("afd-detail", json!({"command": "time.convert_time"}))
        .await;
    assert_eq!(detail["success"], true, "{detail}");
    h.gateway.shutdown();
    let h = start(
        json!({"mcpServers": {
            "time": {"command": slow, "args": [time, "--local-timezone", "UTC"]}},
            "gateway": {"cacheDir": dir.path().join("cache-3")}}),
        false,
    )
    .await;
    let now = h
        .afd_call("time.get_current_time", json!({"timezone": "Europe/Paris"}))
        .await;
    assert_eq!(now["success"], true, "{now}");
    h.gateway.shutdown();
}

/// A server that cannot start, and one that does not finish starting within its start
/// timeout, are named with their errors by afd-discover (browsing and search) and
/// afd-detail; the servers that work are served.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn servers_that_fail_to_start_are_named_with_their_errors() {
    let dir = temp_dir("failed");
    let slow = slow_start(dir.path(), 10);
    let h = start(
        json!({"mcpServers": {
            "shop": shop_stdio(),
            "missing": {"command": dir.path().join("no-such-server")},
            "hung": {"command": slow, "args": [example("shop")], "startTimeoutMs": 500}},
            "gateway": {"cacheDir": dir.path().join("cache")}}),
        true,
    )
    .await;
    let browse = h.call("afd-discover", json!({})).await;
    assert_eq!(browse["success"], true, "{browse}");
    assert!(categories(&browse).contains(&"shop".to_owned()), "{browse}");
    let unavailable = browse["data"]["unavailableServers"]
        .as_array()
        .unwrap_or_else(|| panic!("unavailableServers: {browse}"));
    let server = |name: &str| {
        unavailable
            .iter()
            .find(|s| s["server"] == name)
            .unwrap_or_else(|| panic!("{name} is named: {browse}"))
            .clone()
    };
    let missing = server("missing");
    assert_eq!(missing["status"], "failing", "{missing}");
    assert!(
        missing["error"].as_str().unwrap().contains("cannot start"),
        "{missing}"
    );
    let hung = server("hung");
    assert!(hung["error"].as_str().unwrap().contains("500 ms"), "{hung}");
    let warning = unavailable_warning(&browse).expect("a warning");
    assert!(
        warning.contains("'missing'")
            && warning.contains("'hung'")
            && warning.contains("ask again"),
        "{warning}"
    );
    let found = h
        .call("afd-discover", json!({"search": "list products"}))
        .await;
    assert!(
        found["data"]["commands"][0]["name"]
            .as_str()
            .unwrap()
            .starts_with("shop."),
        "{found}"
    );
    assert!(unavailable_warning(&found).is_some(), "{found}");
    let detail = h
        .call("afd-detail", json!({"command": "shop.product-list"}))
        .await;
    assert_eq!(detail["success"], true, "{detail}");
    assert!(
        unavailable_warning(&detail).is_some_and(|w| w.contains("'missing'")),
        "{detail}"
    );
    // A call of the failed server's tool says why it cannot run.
    let call = h.afd_call("missing.anything", json!({})).await;
    assert_eq!(call["success"], false, "{call}");
    assert_eq!(call["unavailableServers"][0]["server"], "missing", "{call}");
    assert!(
        unavailable_warning(&call).is_some_and(|w| w.contains("cannot start")),
        "{call}"
    );
    h.gateway.shutdown();
}

/// A cached tool list that is out of date still shows the server (from the cache), and a
/// call of a tool the cache does not know starts the server and runs it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stale_cache_shows_the_server_and_a_call_of_a_new_tool_waits_for_it() {
    let dir = temp_dir("stale");
    let cache = dir.path().join("cache");
    let config = json!({"mcpServers": {"shop": shop_stdio()}, "gateway": {"cacheDir": cache}});
    let parsed = Config::parse(&config.to_string()).unwrap();
    let stale = afd_gateway::cache::ToolList {
        fingerprint: parsed.servers["shop"].fingerprint(),
        server_name: Some("shop".to_owned()),
        server_version: Some("0.0.1".to_owned()),
        instructions: None,
        tools: vec![
            serde_json::from_value(json!({
                "name": "retired-report", "description": "A report the shop no longer has.",
                "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}
            }))
            .unwrap(),
        ],
    };
    afd_gateway::cache::Cache::new(&cache).store("shop", &stale);
    let h = start(config, true).await;
    let shop = h.gateway.upstream("shop").unwrap().clone();
    assert_eq!(h.discover_names("shop").await, ["shop.retired-report"]);
    assert_eq!(shop.starts(), 0, "a cached list is served without a start");
    let listed = h.afd_call("shop.product-list", json!({})).await;
    assert_eq!(listed["success"], true, "{listed}");
    assert_eq!(shop.starts(), 1);
    let names = h.discover_names("shop").await;
    assert!(
        names.contains(&"shop.product-list".to_owned())
            && !names.contains(&"shop.retired-report".to_owned()),
        "{names:?}"
    );
    h.gateway.shutdown();
}
