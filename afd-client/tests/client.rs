//! `afd` against the example servers: the todo and shop examples over stdio (started by
//! `--server`) and the todo example over streamable HTTP (`--url`; HTTPS behind nginx with
//! the certificates `.ci/run` makes in `AFD_TEST_TLS_DIR`), the resources and prompts of
//! the test crate's `afd-decl-fixture`, the conformance example's questions, and `login`
//! to the shop behind a real authorization server (`tests/auth/server.mjs`, whose
//! `node_modules` `.ci/run` installs; `tests/auth/browser.mjs` is the browser). All are
//! built by `cargo test --workspace`; alone: `cargo build -p afd-examples --examples`,
//! `cargo build -p afd-example-conformance` and `cargo build -p afd-tests --bin
//! afd-decl-fixture`.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The path of a program the workspace's tests build, under `target/debug`.
fn built(relative: &str, how: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let path = target.join("debug").join(relative);
    assert!(
        path.exists(),
        "{} is missing: build it first with `{how}`",
        path.display()
    );
    path.display().to_string()
}

fn example(name: &str) -> String {
    built(
        &format!("examples/{name}"),
        "cargo build -p afd-examples --examples",
    )
}

fn afd(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_afd"))
        .args(args)
        .env_remove("AFD_TOOL_STRATEGY")
        // Never a sign-in the person running the tests keeps.
        .env(
            "AFD_CREDENTIALS_DIR",
            std::env::temp_dir().join("afd-tests-no-sign-ins"),
        )
        .output()
        .expect("afd runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn lists_the_meta_tools_of_a_lazy_afd_server() {
    let server = format!("{} serve", example("todo"));
    let output = afd(&["--server", &server, "tools"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    for tool in [
        "afd-discover",
        "afd-detail",
        "afd-call",
        "afd-batch",
        "afd-pipe",
    ] {
        assert!(stdout.contains(tool), "{stdout}");
    }
}

#[test]
fn calls_a_command_the_lazy_strategy_does_not_list_with_flags_from_afd_detail() {
    let server = format!("{} serve", example("todo"));
    let output = afd(&[
        "--server",
        &server,
        "call",
        "todo-create",
        "--title",
        "Milk",
        "--priority",
        "high",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("title: Milk") && stdout.contains("priority: high"),
        "{stdout}"
    );
    // A bad enumeration value is a usage error, before anything is sent.
    let output = afd(&[
        "--server",
        &server,
        "call",
        "todo-create",
        "--title",
        "x",
        "--priority",
        "urgent",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
}

#[test]
fn calls_a_listed_tool_of_the_individual_strategy_and_prints_json() {
    let server = format!("{} --strategy individual", example("shop"));
    let output = afd(&[
        "--server",
        &server,
        "call",
        "product-get",
        "--id",
        "1",
        "--json",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(result["data"]["sku"], "TSH-001", "{result}");
    let output = afd(&["--server", &server, "call", "product-get", "--id", "999"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).contains("error[NOT_FOUND]"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn discover_and_detail_use_the_meta_tools() {
    let server = example("shop");
    let output = afd(&["--server", &server, "discover", "--search", "cancel order"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    // The first command is the line after the table's header.
    let first = stdout
        .lines()
        .skip_while(|line| !line.trim_start().starts_with("name "))
        .nth(1)
        .unwrap_or_default();
    assert!(first.trim_start().starts_with("order-cancel"), "{stdout}");
    let output = afd(&["--server", &server, "detail", "order-cancel", "--json"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains("\"orderId\""),
        "{}",
        text(&output.stdout)
    );
}

/// A request the shop cannot serve: `afd discover` shows `match: none`, no commands, the
/// nearest ones under `notAMatch` and the next step, as the server answers it.
#[test]
fn discover_says_when_nothing_fits() {
    let server = example("shop");
    let output = afd(&[
        "--server",
        &server,
        "discover",
        "--search",
        "book a flight to Paris",
        "--search",
        "reserve airline tickets",
        "--search",
        "flight booking",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(stdout.lines().any(|line| line == "match: none"), "{stdout}");
    assert!(
        stdout.lines().any(|line| line == "commands: (none)"),
        "{stdout}"
    );
    assert!(stdout.contains("notAMatch:"), "{stdout}");
    assert!(
        stdout.contains("nextStep: No command does what was asked"),
        "{stdout}"
    );
}

#[test]
fn batch_reads_the_request_from_a_file() {
    let dir = std::env::temp_dir().join(format!("afd-client-batch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("batch.json");
    std::fs::write(
        &file,
        r#"{"commands": [{"command": "todo-create", "input": {"title": "a"}}, {"command": "todo-stats"}]}"#,
    )
    .unwrap();
    let server = format!("{} serve", example("todo"));
    let output = afd(&[
        "--server",
        &server,
        "batch",
        file.to_str().unwrap(),
        "--json",
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["summary"]["successCount"], 2, "{result}");
}

/// Kills the HTTP server when the test ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn works_over_streamable_http_too() {
    for (example_name, tool, flags, shown) in [
        ("todo", "todo-create", ["--title", "over HTTP"], "over HTTP"),
        ("shop", "product-list", ["--limit", "2"], "name"),
    ] {
        let (_server, url) = over_http(example_name, &[]);
        let mut args = vec!["--url", &url, "call", tool];
        args.extend(flags);
        let output = afd(&args);
        assert!(output.status.success(), "{}", text(&output.stderr));
        assert!(
            text(&output.stdout).contains(shown),
            "{}",
            text(&output.stdout)
        );
        if example_name == "todo" {
            let output = afd(&["--url", &url, "call", "todo-list", "--json"]);
            assert!(output.status.success(), "{}", text(&output.stderr));
            assert!(
                text(&output.stdout).contains("over HTTP"),
                "{}",
                text(&output.stdout)
            );
        }
    }
}

/// The example `name` served over HTTP on a free port with `extra` arguments, and its
/// endpoint, once it accepts connections.
fn over_http(name: &str, extra: &[&str]) -> (Server, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = Server(
        Command::new(example(name))
            .args(["serve", "--http", &format!("127.0.0.1:{port}")])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the HTTP {name} server did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (server, format!("http://127.0.0.1:{port}/mcp"))
}

#[test]
fn sends_a_bearer_token_from_the_flag_or_the_environment_and_never_shows_it() {
    let secret = "s3cret-token-for-the-shop";
    let (_server, url) = over_http("shop", &["--token", secret]);
    let call = ["call", "product-list", "--limit", "1"];

    // Without a token: told what the server asks for and how to give it.
    let output = afd(&[&["--url", &url][..], &call[..]].concat());
    assert!(!output.status.success());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("asks for authorization") && stderr.contains("--token"),
        "{stderr}"
    );

    // A wrong token: told it was refused, without echoing it.
    let output = afd(&[&["--url", &url, "--token", "wrong-one"][..], &call[..]].concat());
    assert!(!output.status.success());
    let stderr = text(&output.stderr);
    assert!(stderr.contains("refused the credential"), "{stderr}");
    assert!(!stderr.contains("wrong-one"), "{stderr}");

    // The right one, from the flag and from AFD_TOKEN.
    let output = afd(&[&["--url", &url, "--token", secret][..], &call[..]].concat());
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains("name"),
        "{}",
        text(&output.stdout)
    );
    let output = Command::new(env!("CARGO_BIN_EXE_afd"))
        .args([&["--url", &url][..], &call[..]].concat())
        .env("AFD_TOKEN", secret)
        .env_remove("AFD_TOOL_STRATEGY")
        .output()
        .expect("afd runs");
    assert!(output.status.success(), "{}", text(&output.stderr));
    for shown in [&output.stdout, &output.stderr] {
        assert!(!text(shown).contains(secret));
    }
}

/// Says a test cannot run: a failure under `CI` (whose `.ci/run` provides what it needs), a
/// note elsewhere.
fn missing(why: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "{why}: this test needs it under CI"
    );
    eprintln!("{why}: the test did not run");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// An HTTPS server as operators run one: the todo example behind nginx, which ends TLS
/// with a certificate for `localhost` signed by the test run's CA (`AFD_TEST_TLS_DIR`,
/// made by `.ci/run`). `afd` trusts it through `SSL_CERT_FILE`, and refuses it, saying why,
/// without.
#[test]
fn works_over_https_and_says_why_a_certificate_is_refused() {
    let Some(tls) = std::env::var_os("AFD_TEST_TLS_DIR").map(PathBuf::from) else {
        return missing("AFD_TEST_TLS_DIR is not set");
    };
    let nginx = std::env::var_os("AFD_TEST_NGINX").unwrap_or_else(|| "nginx".into());
    if Command::new(&nginx).arg("-v").output().is_err() {
        return missing("nginx is not installed");
    }
    let dir = std::env::temp_dir().join(format!("afd-client-https-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (backend, front) = (free_port(), free_port());
    let _server = Server(
        Command::new(example("todo"))
            .args(["serve", "--http", &format!("127.0.0.1:{backend}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let d = dir.display();
    let (cert, key) = (tls.join("server.pem"), tls.join("server.key"));
    let config = format!(
        r#"daemon off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 64; }}
http {{
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    access_log off;
    server {{
        listen 127.0.0.1:{front} ssl;
        ssl_certificate {cert};
        ssl_certificate_key {key};
        location /mcp {{
            proxy_pass http://127.0.0.1:{backend};
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
        }}
    }}
}}
"#,
        cert = cert.display(),
        key = key.display(),
    );
    std::fs::write(dir.join("nginx.conf"), config).unwrap();
    let _nginx = Server(
        Command::new(&nginx)
            .arg("-p")
            .arg(&dir)
            .arg("-e")
            .arg(dir.join("error.log"))
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("nginx starts"),
    );
    wait_for(backend, "the todo server");
    wait_for(front, "nginx");

    let url = format!("https://localhost:{front}/mcp");
    let run = |ca: Option<PathBuf>, args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_afd"));
        command.args(["--url", &url]).args(args);
        command
            .env_remove("SSL_CERT_FILE")
            .env_remove("SSL_CERT_DIR");
        if let Some(ca) = ca {
            command.env("SSL_CERT_FILE", ca);
        }
        command.output().expect("afd runs")
    };
    let output = run(
        Some(tls.join("ca.pem")),
        &["call", "todo-create", "--title", "over HTTPS"],
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains("over HTTPS"),
        "{}",
        text(&output.stdout)
    );

    // The system's roots do not hold the test CA: refused, and the reason is given.
    let output = run(None, &["call", "todo-list"]);
    assert!(!output.status.success());
    let stderr = text(&output.stderr);
    assert!(stderr.contains("cannot connect to https://"), "{stderr}");
    assert!(stderr.to_lowercase().contains("certificate"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn server_command_lines_are_split_as_a_shell_splits_them() {
    // A server whose path has a space in it, quoted on the command line.
    let dir = std::env::temp_dir().join(format!("afd client quoting {}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let linked = dir.join("todo server");
    let _ = std::fs::remove_file(&linked);
    std::os::unix::fs::symlink(example("todo"), &linked).unwrap();
    let server = format!("'{}' serve --strategy 'individual'", linked.display());
    let output = afd(&["--server", &server, "tools"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("todo-create"));

    let output = afd(&["--server", "'unclosed serve", "tools"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stderr).contains("unclosed quote"));
}

#[test]
fn the_shell_runs_one_subcommand_per_line_and_keeps_history() {
    use std::io::Write as _;

    let dir = std::env::temp_dir().join(format!("afd-client-shell-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let history = dir.join("history");
    let server = format!("{} serve", example("todo"));
    let mut shell = Command::new(env!("CARGO_BIN_EXE_afd"))
        .args(["--server", &server, "shell"])
        .env_remove("AFD_TOOL_STRATEGY")
        .env("AFD_HISTORY", &history)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = [
        "tools",
        "call todo-create --title 'Buy oat milk'",
        "",
        "no-such-subcommand",
        "call todo-list --json",
        "exit",
        "call todo-create --title 'after exit'",
    ];
    let input = lines.join("\n") + "\n";
    shell
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = shell.wait_with_output().unwrap();
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("afd-discover"), "{stdout}");
    // One connection: the todo made on one line is listed on another.
    let listed = stdout.split("\"title\": \"Buy oat milk\"").count() - 1;
    assert!(listed >= 1, "{stdout}");
    assert!(!stdout.contains("after exit"), "{stdout}");
    assert!(stderr.contains("no-such-subcommand"), "{stderr}");
    let kept = std::fs::read_to_string(&history).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        kept.contains("call todo-create --title 'Buy oat milk'"),
        "{kept}"
    );
    assert!(kept.contains("call todo-list --json"), "{kept}");
}

/// `resources`, `read`, `prompts` and `prompt` against a server that declares resources,
/// a template and prompts: text as it is, binary contents as one line, a prompt's messages
/// by role, the server's refusal with its suggestion (exit 1), a malformed argument (exit 2).
#[test]
fn resources_and_prompts_are_listed_read_and_rendered() {
    let fixture = built(
        "afd-decl-fixture",
        "cargo build -p afd-tests --bin afd-decl-fixture",
    );
    let run = |args: &[&str]| {
        let mut all = vec!["--server", fixture.as_str()];
        all.extend_from_slice(args);
        afd(&all)
    };
    let listed = run(&["resources"]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let listed = text(&listed.stdout);
    assert!(listed.contains("test://static-text"), "{listed}");
    assert!(listed.contains("test://template/{id}/data"), "{listed}");

    let read = run(&["read", "test://static-text"]);
    assert_eq!(
        text(&read.stdout),
        "This is the content of the static text resource.\n"
    );
    let blob = run(&["read", "test://static-binary"]);
    assert_eq!(
        text(&blob.stdout),
        "[resource test://static-binary, image/png, 70 bytes]\n"
    );
    let templated = run(&["read", "test://template/42/data"]);
    assert!(text(&templated.stdout).contains("Data for ID: 42"));
    let unknown = run(&["read", "test://nothing"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        text(&unknown.stderr).contains("suggestion: Read one of test://static-binary"),
        "{}",
        text(&unknown.stderr)
    );

    let prompts = text(&run(&["prompts"]).stdout);
    assert!(prompts.contains("test_prompt_with_arguments"), "{prompts}");
    assert!(prompts.contains("arg1, arg2"), "{prompts}");
    let rendered = run(&["prompt", "test_prompt_with_arguments", "arg1=a", "arg2=b c"]);
    assert_eq!(
        text(&rendered.stdout),
        "user: Prompt with arguments: arg1='a', arg2='b c'\n"
    );
    let image = text(&run(&["prompt", "test_prompt_with_image"]).stdout);
    assert!(
        image.starts_with("user: [image image/png, 70 bytes]\n"),
        "{image}"
    );
    let missing = run(&["prompt", "test_prompt_with_arguments", "arg1=a"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing.stderr).contains("suggestion: Its arguments: arg1, arg2."));
    let malformed = run(&["prompt", "test_prompt_with_arguments", "arg1"]);
    assert_eq!(malformed.status.code(), Some(2));
    assert!(text(&malformed.stderr).contains("'arg1' is not argument=value"));
    let as_json: serde_json::Value =
        serde_json::from_slice(&run(&["--json", "read", "test://static-text"]).stdout).unwrap();
    assert_eq!(as_json["contents"][0]["mimeType"], "text/plain");
}

/// `afd` with `input` on its standard input.
fn afd_with_input(args: &[&str], input: &str) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_afd"))
        .args(args)
        .env_remove("AFD_TOOL_STRATEGY")
        .env(
            "AFD_CREDENTIALS_DIR",
            std::env::temp_dir().join("afd-tests-no-sign-ins"),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("afd runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn answers_a_servers_questions_on_the_terminal_on_both_wires() {
    let conformance = built("conformance", "cargo build -p afd-example-conformance");
    let port = free_port();
    let _server = Server(
        Command::new(&conformance)
            .args(["--http", &format!("127.0.0.1:{port}")])
            .env("AFD_TOOL_STRATEGY", "individual")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for(port, "the conformance example");
    let url = format!("http://127.0.0.1:{port}/mcp");
    // Over HTTP the server speaks 2026-07-28: the question comes back as an input request of
    // an `input_required` result, answered on the terminal and sent with the call again.
    let output = afd_with_input(
        &[
            "--url",
            &url,
            "call",
            "test_input_required_result_elicitation",
        ],
        "Ada\n",
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("What is your name?"),
        "{}",
        text(&output.stderr)
    );
    assert!(
        text(&output.stdout).contains("Hello, Ada!"),
        "{}",
        text(&output.stdout)
    );
    // A form of two fields; the first answer is asked again when empty.
    let output = afd_with_input(
        &[
            "--url",
            &url,
            "call",
            "test_elicitation",
            "--message",
            "Who are you?",
            "--json",
        ],
        "\nada\nada@example.com\n",
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let shown = text(&output.stderr);
    assert!(
        shown.contains("Who are you?") && shown.contains("an answer is required"),
        "{shown}"
    );
    assert!(
        text(&output.stdout).contains("ada@example.com"),
        "{}",
        text(&output.stdout)
    );
    // The input ends before the form is filled: the question is cancelled, not answered.
    let output = afd_with_input(
        &[
            "--url",
            &url,
            "call",
            "test_elicitation",
            "--message",
            "Who?",
            "--json",
        ],
        "ada\n",
    );
    assert!(
        text(&output.stdout).contains("cancel"),
        "{}",
        text(&output.stdout)
    );
    // Over stdio, the same through the server's own request.
    let output = afd_with_input(
        &[
            "--server",
            &conformance,
            "call",
            "test_input_required_result_elicitation",
        ],
        "Grace\n",
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains("Hello, Grace!"),
        "{}",
        text(&output.stdout)
    );
}

/// The one kept sign-in file in `dir`, read.
fn kept(dir: &Path) -> (PathBuf, serde_json::Value) {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    (files[0].clone(), value)
}

fn access_token(kept: &serde_json::Value) -> String {
    kept["credentials"]["token_response"]["access_token"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn granted(kept: &serde_json::Value) -> Vec<String> {
    serde_json::from_value(kept["credentials"]["granted_scopes"].clone()).unwrap()
}

#[test]
fn login_signs_in_and_the_sign_in_is_used_refreshed_stepped_up_and_forgotten() {
    let auth_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/auth");
    if !auth_dir.join("node_modules/oidc-provider").is_dir() {
        return missing("tests/auth has no node_modules (.ci/run runs `npm ci` there)");
    }
    let dir = tempfile::tempdir().unwrap();
    // Access tokens live two seconds: a later call must refresh.
    let mut server = Command::new("node")
        .arg(auth_dir.join("server.mjs"))
        .args(["--port", "0", "--ttl", "2", "--sign-in", "ada", "--keys"])
        .arg(dir.path().join("keys.json"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().unwrap()),
        &mut ready,
    )
    .unwrap();
    let _auth = Server(server);
    let issuer = serde_json::from_str::<serde_json::Value>(&ready).unwrap()["issuer"]
        .as_str()
        .unwrap()
        .to_owned();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let _shop = Server(
        Command::new(example("shop"))
            .args(["serve", "--http", &format!("127.0.0.1:{port}")])
            .args(["--auth-issuer", &issuer, "--auth-audience", &url])
            .env_remove("AFD_TOOL_STRATEGY")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for(port, "the shop");
    let credentials = dir.path().join("credentials");
    let browser = format!("node '{}'", auth_dir.join("browser.mjs").display());
    let afd_as = |client: &[(&str, &str)], args: &[&str]| -> Output {
        Command::new(env!("CARGO_BIN_EXE_afd"))
            .args(["--url", &url])
            .args(args)
            .env("AFD_CREDENTIALS_DIR", &credentials)
            .env("BROWSER", &browser)
            .env_remove("AFD_TOKEN")
            .env_remove("AFD_TOOL_STRATEGY")
            .env_remove("AFD_CLIENT_ID")
            .env_remove("AFD_CLIENT_SECRET")
            .envs(client.iter().copied())
            .output()
            .unwrap()
    };
    let afd = |args: &[&str]| afd_as(&[], args);

    // Without a sign-in: refused, and told how to sign in.
    let refused = afd(&["tools"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains(&format!("afd --url {url} login")),
        "{}",
        text(&refused.stderr)
    );

    // Sign in for reading only: registered on the fly, PKCE, the shop's resource.
    let login = afd(&["login", "--scope", "shop:read"]);
    let said = text(&login.stderr) + &text(&login.stdout);
    assert!(login.status.success(), "{said}");
    assert!(
        said.contains("Signed in") && said.contains("shop:read"),
        "{said}"
    );
    let (file, first) = kept(&credentials);
    assert_eq!(granted(&first), ["shop:read"]);
    let token = access_token(&first);
    assert!(!said.contains(&token), "the token was shown");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(&credentials), 0o700);
    }

    // The kept sign-in is used.
    let call = afd(&["call", "product-get", "--id", "1"]);
    assert!(call.status.success(), "{}", text(&call.stderr));
    assert!(
        text(&call.stdout).contains("TSH-001"),
        "{}",
        text(&call.stdout)
    );

    // Past the access token's lifetime: refreshed with the refresh token, and kept.
    std::thread::sleep(Duration::from_secs(3));
    let later = afd(&["call", "product-get", "--id", "1"]);
    assert!(later.status.success(), "{}", text(&later.stderr));
    let (_, refreshed) = kept(&credentials);
    assert_ne!(
        access_token(&refreshed),
        token,
        "the token was not refreshed"
    );
    assert_eq!(granted(&refreshed), ["shop:read"]);

    // A write needs shop:write: afd signs in once more for the scopes held and asked.
    let create = afd(&[
        "call",
        "product-create",
        "--input-json",
        r#"{"sku": "LOGIN-1", "name": "Signed in", "priceCents": 100, "category": "accessories"}"#,
    ]);
    let said = text(&create.stderr);
    assert!(create.status.success(), "{said}");
    assert!(said.contains("signing in again"), "{said}");
    assert!(
        text(&create.stdout).contains("LOGIN-1"),
        "{}",
        text(&create.stdout)
    );
    let (_, stepped) = kept(&credentials);
    let mut scopes = granted(&stepped);
    scopes.sort();
    assert_eq!(scopes, ["shop:read", "shop:write"]);

    // Signed out: the file is gone and the server refuses again.
    let logout = afd(&["logout"]);
    assert!(logout.status.success(), "{}", text(&logout.stderr));
    assert!(!file.exists());
    assert!(!afd(&["tools"]).status.success());

    // A confidential client registered beforehand: its id is kept, its secret never, and
    // a refresh (which needs the secret) works from the environment's.
    let confidential = [
        ("AFD_CLIENT_ID", "afd-cli"),
        ("AFD_CLIENT_SECRET", "afd-cli-secret"),
    ];
    let login = afd_as(&confidential, &["login", "--scope", "shop:read"]);
    assert!(login.status.success(), "{}", text(&login.stderr));
    let (file, kept_confidential) = kept(&credentials);
    assert_eq!(kept_confidential["credentials"]["client_id"], "afd-cli");
    assert!(
        !std::fs::read_to_string(&file)
            .unwrap()
            .contains("afd-cli-secret")
    );
    std::thread::sleep(Duration::from_secs(3));
    // Without the secret the refresh is refused (the control), and nothing is lost.
    let unauthenticated = afd_as(&confidential[..1], &["call", "product-get", "--id", "1"]);
    assert!(!unauthenticated.status.success());
    assert!(!text(&unauthenticated.stderr).contains("afd-cli-secret"));
    let later = afd_as(&confidential, &["call", "product-get", "--id", "1"]);
    assert!(later.status.success(), "{}", text(&later.stderr));
    let (_, refreshed) = kept(&credentials);
    assert_ne!(access_token(&refreshed), access_token(&kept_confidential));
}
