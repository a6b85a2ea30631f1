//! `afd` against the example servers: the todo and shop examples over stdio (started by
//! `--server`) and the todo example over streamable HTTP (`--url`). The examples are built
//! by `cargo test --workspace`; alone: `cargo build -p afd-examples --examples`.

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn example(name: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let path = target.join("debug/examples").join(name);
    assert!(
        path.exists(),
        "{} is missing: build it first with `cargo build -p afd-examples --examples`",
        path.display()
    );
    path.display().to_string()
}

fn afd(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_afd"))
        .args(args)
        .env_remove("AFD_TOOL_STRATEGY")
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
    let first = stdout.lines().nth(2).unwrap_or_default();
    assert!(first.trim_start().starts_with("order-cancel"), "{stdout}");
    let output = afd(&["--server", &server, "detail", "order-cancel", "--json"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains("\"orderId\""),
        "{}",
        text(&output.stdout)
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
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let _server = Server(
            Command::new(example(example_name))
                .args(["serve", "--http", &format!("127.0.0.1:{port}")])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "the HTTP {example_name} server did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let url = format!("http://127.0.0.1:{port}/mcp");
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
