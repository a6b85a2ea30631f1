//! The conformance server as its binary runs it, over stdio: it initializes and lists a
//! tool per fixture command (the HTTP suite itself runs from tests/conformance/run.sh).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[test]
fn the_binary_lists_every_fixture_as_a_tool_over_stdio() {
    let mut server = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the conformance binary starts");
    let mut stdin = server.stdin.take().unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let mut send = |message: Value| writeln!(stdin, "{message}").expect("the server reads");
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "afd-conformance-test", "version": "0"}
        }}),
    );
    let initialized: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(
        initialized["result"]["serverInfo"]["name"], "afd-conformance",
        "{initialized}"
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let listed: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    // Each fixture but the one listed only once `test_trigger_tool_change` adds it, and the
    // tools that run commands by name (afd-call, afd-batch, afd-pipe).
    assert!(names.contains(&"test_simple_text"), "{names:?}");
    assert!(names.contains(&"afd-call"), "{names:?}");
    assert!(!names.contains(&"test_dynamic_tool"), "{names:?}");
    assert_eq!(
        names.len(),
        afd_example_conformance::COMMANDS.len() - 1 + 3,
        "{names:?}"
    );
    drop(stdin);
    assert!(server.wait().unwrap().success(), "exits when stdin closes");
}
