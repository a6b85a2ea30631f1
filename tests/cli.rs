//! The generated command line, run as a user runs it: the shop and todo examples' binaries,
//! their output compared with snapshot files in `snapshots/cli/` (`[..]` stands for a
//! varying part of a line, such as a timing). Rewrite the snapshots after an intended
//! change with `SNAPSHOTS=overwrite cargo test -p afd-tests --test cli`.

use snapbox::cmd::{Command, cargo_bin};
use snapbox::file;

fn shop() -> Command {
    Command::new(cargo_bin!("afd-example-shop")).env_remove("AFD_TOOL_STRATEGY")
}

fn todo() -> Command {
    Command::new(cargo_bin!("afd-example-todo"))
}

#[test]
fn help_lists_the_built_in_subcommands_and_the_apps_own_flags() {
    shop()
        .arg("--help")
        .assert()
        .success()
        .stdout_eq(file!["snapshots/cli/help.stdout"]);
}

#[test]
fn a_commands_help_shows_flags_from_its_input_schema() {
    shop()
        .args(["call", "order-list", "--help"])
        .assert()
        .success()
        .stdout_eq(file!["snapshots/cli/order-list-help.stdout"]);
}

#[test]
fn a_call_with_flags_prints_the_data_as_a_table() {
    shop()
        .args(["call", "product-list", "--limit", "3"])
        .assert()
        .success()
        .stdout_eq(file!["snapshots/cli/product-list.stdout"]);
}

#[test]
fn a_command_is_a_subcommand_of_its_own_too() {
    shop()
        .args(["product-list", "--limit", "3"])
        .assert()
        .success()
        .stdout_eq(file!["snapshots/cli/product-list.stdout"]);
}

#[test]
fn json_input_and_json_output_are_what_mcp_clients_get() {
    shop()
        .args([
            "call",
            "product-list",
            "--input-json",
            r#"{"limit": 1}"#,
            "--json",
        ])
        .assert()
        .success()
        .stdout_eq(file!["snapshots/cli/product-list.json"]);
    shop()
        .args(["call", "product-list", "--input-file", "-", "--json"])
        .stdin(r#"{"limit": 1}"#)
        .assert()
        .success()
        .stdout_eq(file!["snapshots/cli/product-list.json"]);
}

#[test]
fn a_failed_command_prints_code_message_and_suggestion_and_exits_1() {
    shop()
        .args(["call", "product-get", "--id", "999"])
        .assert()
        .code(1)
        .stdout_eq("")
        .stderr_eq(file!["snapshots/cli/not-found.stderr"]);
    shop()
        .args(["call", "product-get", "--id", "999", "--json"])
        .assert()
        .code(1)
        .stdout_eq(file!["snapshots/cli/not-found.json"]);
}

#[test]
fn usage_errors_exit_2() {
    shop()
        .args(["call", "product-list", "--limit", "many"])
        .assert()
        .code(2)
        .stderr_eq(file!["snapshots/cli/bad-limit.stderr"]);
    shop()
        .args(["call", "product-get"])
        .assert()
        .code(2)
        .stderr_eq(file!["snapshots/cli/missing-id.stderr"]);
    shop()
        .args(["call", "order-craete"])
        .assert()
        .code(2)
        .stderr_eq(file!["snapshots/cli/unknown-command.stderr"]);
}

#[test]
fn invalid_input_is_the_validation_error_mcp_clients_get() {
    shop()
        .args(["call", "product-list", "--input-json", r#"{"limit": -4}"#])
        .assert()
        .code(1)
        .stderr_eq(file!["snapshots/cli/invalid-limit.stderr"]);
}

#[test]
fn a_command_that_asks_for_confirmation_refuses_without_a_terminal_unless_yes() {
    shop()
        .args(["call", "order-cancel", "--order-id", "ord-1001"])
        .assert()
        .code(1)
        .stdout_eq("")
        .stderr_eq(file!["snapshots/cli/confirm-refused.stderr"]);
    shop()
        .args(["call", "order-cancel", "--order-id", "ord-1001", "--yes"])
        .assert()
        .success()
        .stdout_eq(file!["snapshots/cli/confirm-yes.stdout"]);
}

#[test]
fn commands_searches_ranked_as_afd_discover() {
    shop()
        .args(["commands", "--search", "cancel order"])
        .assert()
        .success()
        .stdout_eq(file!["snapshots/cli/commands-search.stdout"]);
    shop()
        .args(["commands", "--category", "cart"])
        .assert()
        .success()
        .stdout_eq(file!["snapshots/cli/commands-cart.stdout"]);
}

#[test]
fn commands_takes_several_phrasings_of_one_search() {
    shop()
        .args([
            "commands",
            "--search",
            "stop my order from shipping",
            "--search",
            "cancel order",
            "--search",
            "void order",
        ])
        .assert()
        .success()
        .stdout_eq(file!["snapshots/cli/commands-search-phrasings.stdout"]);
    shop()
        .args(["commands", "--search", "a", "--search", "b"])
        .args(["--search", "c", "--search", "d"])
        .assert()
        .code(1)
        .stderr_eq(file!["snapshots/cli/commands-search-four.stderr"]);
}

/// A request the shop cannot serve: the search says so, names the nearest commands as not a
/// match and says what to do instead, rather than listing them as results.
#[test]
fn commands_says_when_nothing_fits() {
    shop()
        .args([
            "commands",
            "--search",
            "book a flight to Paris",
            "--search",
            "reserve airline tickets",
            "--search",
            "flight booking",
        ])
        .assert()
        .success()
        .stdout_eq(file!["snapshots/cli/commands-search-none.stdout"]);
}

#[test]
fn describe_shows_the_definition_and_its_flags() {
    shop()
        .args(["describe", "order-cancel"])
        .assert()
        .success()
        .stdout_eq(file!["snapshots/cli/describe.stdout"]);
    shop()
        .args(["describe", "order-cancle"])
        .assert()
        .code(1)
        .stderr_eq(file!["snapshots/cli/describe-typo.stderr"]);
}

#[test]
fn batch_and_pipe_read_their_requests_from_a_file() {
    shop()
        .args(["batch", "-"])
        .stdin(
            r#"{"commands": [
                {"id": "a", "command": "product-get", "input": {"id": 1}},
                {"id": "b", "command": "product-get", "input": {"id": 999}}
            ]}"#,
        )
        .assert()
        .success()
        .stdout_eq(file!["snapshots/cli/batch.stdout"]);
    shop()
        .args(["pipe", "-"])
        .stdin(
            r#"{"steps": [
                {"command": "product-get", "input": {"id": 1}},
                {"command": "inventory-get", "input": {"productId": "$prev.id"}}
            ]}"#,
        )
        .assert()
        .success()
        .stdout_eq(file!["snapshots/cli/pipe.stdout"]);
}

#[test]
fn a_read_only_context_refuses_changes() {
    shop()
        .args(["contexts"])
        .assert()
        .success()
        .stdout_eq(file!["snapshots/cli/contexts.stdout"]);
    shop()
        .args([
            "--context",
            "returns",
            "--read-only",
            "call",
            "order-cancel",
            "--order-id",
            "ord-1001",
            "--yes",
        ])
        .assert()
        .code(1)
        .stderr_eq(file!["snapshots/cli/read-only.stderr"]);
    shop()
        .args([
            "--context",
            "storefront",
            "call",
            "order-list",
            "--limit",
            "1",
            "--json",
        ])
        .assert()
        .code(1)
        .stdout_eq(file!["snapshots/cli/context-mismatch.json"]);
}

#[test]
fn completions_name_every_command() {
    for shell in ["bash", "zsh", "fish"] {
        let output = shop()
            .args(["completions", shell])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let script = String::from_utf8(output).unwrap();
        for name in [
            "order-list",
            "order-cancel",
            "commands",
            "describe",
            "limit",
        ] {
            assert!(script.contains(name), "{shell} completions lack {name}");
        }
    }
    todo()
        .args(["completions", "fish"])
        .assert()
        .success()
        .stdout_eq(file!["snapshots/cli/todo-completions.fish"]);
}

#[test]
fn progress_is_shown_as_plain_lines_without_a_terminal() {
    let dir = std::env::temp_dir().join(format!("afd-cli-progress-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("todo.db");
    let db = db.to_str().unwrap();
    let _ = std::fs::remove_file(db);
    todo()
        .args(["--db", db, "todo-create", "--title", "Milk"])
        .assert()
        .success();
    todo()
        .args([
            "--db",
            db,
            "call",
            "todo-delete-batch",
            "--ids",
            "todo-missing",
            "--ids",
            "todo-gone",
            "--yes",
        ])
        .assert()
        .success()
        .stderr_eq(file!["snapshots/cli/progress.stderr"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_todo_example_keeps_its_demo_with_no_subcommand() {
    let output = todo().assert().success().get_output().stdout.clone();
    let text = String::from_utf8(output).unwrap();
    assert!(text.starts_with("11 commands registered:"), "{text}");
}

fn fixture() -> Command {
    Command::new(cargo_bin!("afd-cli-fixture"))
}

#[test]
fn aliases_call_the_command_and_deprecated_ones_warn() {
    for how in [&["call", "hello"][..], &["hello"], &["call", "greet"]] {
        fixture()
            .args(how)
            .args(["--name", "Ada"])
            .assert()
            .success()
            .stdout_eq("Hello, Ada\n")
            .stderr_eq("");
    }
    fixture()
        .args(["say-hi", "--name", "Ada"])
        .assert()
        .success()
        .stdout_eq("Hello, Ada\n")
        .stderr_eq(file!["snapshots/cli/deprecated-alias.stderr"]);
}

/// Ctrl-C while a command runs cancels it through its token; the exit code is 130.
#[cfg(unix)]
#[test]
fn ctrl_c_cancels_the_running_command_and_exits_130() {
    use std::io::{BufRead as _, BufReader};
    use std::process::Stdio;

    let mut child = std::process::Command::new(cargo_bin!("afd-cli-fixture"))
        .args(["call", "wait-for-cancel"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    // The progress line says the handler is running (and so the Ctrl-C handler is set).
    while !seen.contains("waiting") {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "ended early: {seen}"
        );
        seen.push_str(&line);
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "stderr: {seen}{rest}");
    assert!(rest.contains("CANCELLED"), "stderr: {seen}{rest}");
}

/// The built-in subcommands run the built-in tools as MCP does: observers see afd-batch,
/// afd-pipe, afd-discover and afd-detail as meta calls, and the commands inside them.
#[tokio::test]
async fn the_built_in_subcommands_reach_observers_as_meta_calls() {
    use std::sync::{Arc, Mutex};

    use afd_examples::todo;
    use afd_runtime::CallKind;
    use afd_runtime::cli::Cli;
    use afd_runtime::middleware::TelemetryLayer;

    let dir = std::env::temp_dir().join(format!("afd-cli-meta-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let batch = dir.join("batch.json");
    std::fs::write(&batch, r#"{"commands": [{"command": "todo-stats"}]}"#).unwrap();
    let pipe = dir.join("pipe.json");
    std::fs::write(&pipe, r#"{"steps": [{"command": "todo-list"}]}"#).unwrap();

    let seen: Arc<Mutex<Vec<(String, CallKind)>>> = Arc::default();
    let runs: [&[&str]; 4] = [
        &["todo", "batch", batch.to_str().unwrap()],
        &["todo", "pipe", pipe.to_str().unwrap()],
        &["todo", "commands", "--search", "delete"],
        &["todo", "--json", "describe", "todo-get"],
    ];
    for args in runs {
        let events = seen.clone();
        let parsed = Cli::new(todo::registry())
            .dispatch(move |builder| {
                let events = events.clone();
                builder.layer(TelemetryLayer::new(move |event| {
                    let mut events = events.lock().unwrap();
                    events.push((event.command.to_owned(), event.kind));
                }))
            })
            .try_parse_from(args)
            .unwrap();
        let ctx = todo::context(todo::TodoStore::in_memory().unwrap());
        assert_eq!(parsed.run(ctx).await, 0, "{args:?}");
    }
    let seen = seen.lock().unwrap().clone();
    let expected = [
        ("todo-stats", CallKind::Command),
        ("afd-batch", CallKind::Meta),
        ("todo-list", CallKind::Command),
        ("afd-pipe", CallKind::Meta),
        ("afd-discover", CallKind::Meta),
        ("afd-detail", CallKind::Meta),
    ]
    .map(|(name, kind)| (name.to_owned(), kind));
    assert_eq!(seen, expected);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_command_kept_off_the_command_line_is_refused_by_name() {
    for how in [&["call", "mcp-only"][..], &["mcp-only"]] {
        fixture()
            .args(how)
            .assert()
            .code(2)
            .stdout_eq("")
            .stderr_eq(file!["snapshots/cli/not-exposed.stderr"]);
    }
}

/// On a terminal (here one made by `script`), a command with a confirmation prompt asks,
/// runs on "y" and does nothing otherwise.
#[cfg(unix)]
#[test]
fn a_command_that_asks_for_confirmation_asks_on_a_terminal() {
    use std::io::Write as _;
    use std::process::Stdio;

    let Ok(status) = std::process::Command::new("script")
        .arg("--version")
        .output()
    else {
        assert!(
            std::env::var_os("CI").is_none(),
            "`script` (util-linux) is needed"
        );
        eprintln!("skipped: `script` (util-linux) is not installed");
        return;
    };
    assert!(status.status.success());
    let fixture = cargo_bin!("afd-cli-fixture").display().to_string();
    for (answer, code, shown) in [("y", 0, "Forgot Bo"), ("n", 1, "was not confirmed")] {
        let (stdin_ready, stdin_asked) = std::sync::mpsc::channel();
        let mut child = std::process::Command::new("script")
            .args([
                "-qec",
                &format!("'{fixture}' forget --name Bo"),
                "/dev/null",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        // `script` copies the terminal (both streams) to its stdout. The answer is typed
        // once the question is asked, as a person would: typed earlier, the terminal's
        // echo of it would land inside the question.
        let mut stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut seen = Vec::new();
            let mut chunk = [0u8; 256];
            let mut asked = Some(stdin_ready);
            loop {
                match std::io::Read::read(&mut stdout, &mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => seen.extend_from_slice(&chunk[..n]),
                }
                if String::from_utf8_lossy(&seen).contains("[y/N]")
                    && let Some(asked) = asked.take()
                {
                    let _ = asked.send(());
                }
            }
            String::from_utf8_lossy(&seen).into_owned()
        });
        stdin_asked
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the question is asked");
        stdin.write_all(format!("{answer}\n").as_bytes()).unwrap();
        let status = child.wait().unwrap();
        let seen = reader.join().unwrap();
        assert_eq!(status.code(), Some(code), "{seen}");
        assert!(seen.contains("Really forget Bo? [y/N]"), "{seen}");
        assert!(seen.contains(shown), "{seen}");
    }
}

/// `serve --session-idle` sets how long an unused session lives (the refusal of an
/// unknown session says it); a value that is no duration is a usage error, and a bad
/// `AFD_SESSION_IDLE` stops the start with its name.
#[test]
fn serve_session_idle_sets_how_long_sessions_live() {
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cli-test","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"afd-discover","arguments":{"session":"afd-s-unknown"}}}"#,
    ];
    let output = shop()
        .args(["serve", "--session-idle", "2h 30m"])
        .env_remove("AFD_SESSION_IDLE")
        .stdin(lines.join("\n") + "\n")
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.contains("SESSION_NOT_FOUND") && stdout.contains("expired after 2h 30m without use"),
        "{stdout}"
    );
    shop()
        .args(["serve", "--session-idle", "soon"])
        .assert()
        .code(2)
        .stderr_eq("error: invalid value 'soon' for '--session-idle <DURATION>': expected number at 0; give a duration such as 45m, 2h or 1h 30m\n\nFor more information, try '--help'.\n");
    shop()
        .args(["serve"])
        .env("AFD_SESSION_IDLE", "0s")
        .stdin("")
        .assert()
        .code(1)
        .stderr_eq("error: AFD_SESSION_IDLE='0s': a session must live longer than 0s\n");
}

/// An app with declared resources and prompts gets `resources`, `read`, `prompts` and
/// `prompt`, run in process: text as it is, binary contents as one line, a prompt's
/// messages by role, `--json` whole, refusals with a suggestion (exit 1), a malformed
/// argument (exit 2). An app without declarations keeps those names free.
#[test]
fn declared_resources_and_prompts_are_subcommands() {
    let fixture = || Command::new(cargo_bin!("afd-decl-fixture"));
    fixture()
        .args(["read", "test://static-text"])
        .assert()
        .success()
        .stdout_eq("This is the content of the static text resource.\n");
    fixture()
        .args(["read", "test://static-binary"])
        .assert()
        .success()
        .stdout_eq("[resource test://static-binary, image/png, 70 bytes]\n");
    fixture()
        .args(["read", "test://template/7/data"])
        .assert()
        .success()
        .stdout_eq("{\"id\":\"7\",\"templateTest\":true,\"data\":\"Data for ID: 7\"}\n");
    fixture()
        .args(["read", "test://nothing"])
        .assert()
        .code(1)
        .stderr_eq("error[NOT_FOUND]: no resource at 'test://nothing'\n  suggestion: Read one of test://static-binary, test://static-text, test://watched-resource, test://template/{id}/data, or list them with resources/list.\n");
    fixture()
        .args(["prompt", "test_prompt_with_arguments", "arg1=a", "arg2=b c"])
        .assert()
        .success()
        .stdout_eq("user: Prompt with arguments: arg1='a', arg2='b c'\n");
    fixture()
        .args(["prompt", "test_prompt_with_arguments", "arg1=a"])
        .assert()
        .code(1)
        .stderr_eq("error[VALIDATION_ERROR]: missing required argument 'arg2' for prompt 'test_prompt_with_arguments'\n  suggestion: Its arguments: arg1, arg2.\n");
    fixture()
        .args(["prompt", "test_prompt_with_arguments", "arg1"])
        .assert()
        .code(2);
    let listed = fixture().args(["resources"]).output().unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("test://template/{id}/data"));
    let prompts = fixture().args(["prompts"]).output().unwrap();
    assert!(String::from_utf8_lossy(&prompts.stdout).contains("arg1, arg2"));
    let as_json = fixture()
        .args(["--json", "prompt", "test_prompt_with_image"])
        .output()
        .unwrap();
    let messages: serde_json::Value = serde_json::from_slice(&as_json.stdout).unwrap();
    assert_eq!(messages["messages"][0]["content"]["type"], "image");
    // The shop declares none: `read` is no subcommand of it.
    shop().args(["read", "x"]).assert().code(2);
}
