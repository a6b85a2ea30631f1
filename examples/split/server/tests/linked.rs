//! The split server serves the commands of both crates, on the command line and over MCP's
//! listing, as one catalog.

use std::process::Command;

fn split(args: &[&str]) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_split"))
        .args(args)
        .env_remove("AFD_TOOL_STRATEGY")
        .output()
        .expect("the split server runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), text)
}

#[test]
fn both_crates_commands_are_in_one_catalog() {
    let (ok, text) = split(&["--json", "commands"]);
    assert!(ok, "{text}");
    let listed: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut names: Vec<&str> = listed["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|command| command["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["person-add", "person-list", "ticket-list", "ticket-open"]
    );
}

#[test]
fn commands_of_either_crate_run_with_their_own_state() {
    let (ok, text) = split(&["ticket-open", "--title", "Printer on fire"]);
    assert!(ok, "{text}");
    assert!(text.contains("Printer on fire"), "{text}");
    let (ok, text) = split(&["--json", "person-add", "--name", "Ada"]);
    assert!(ok, "{text}");
    assert!(text.contains("\"data\": 1"), "{text}");
}
