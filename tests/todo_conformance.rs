//! The reference AFD todo contract, in-process: every case of `test-cases.json` passes, and
//! every command's input and output shapes match `commands.schema.json`.

use afd_examples::todo::{self, TodoStore};
use afd_runtime::prelude::*;
use afd_tests::conformance::{FIXTURES, load_cases, load_contract, run_case};

const TODO_COMMANDS: [&str; 11] = [
    "todo-create",
    "todo-list",
    "todo-get",
    "todo-update",
    "todo-toggle",
    "todo-delete",
    "todo-clear",
    "todo-stats",
    "todo-create-batch",
    "todo-delete-batch",
    "todo-toggle-batch",
];

fn fresh() -> CommandContext {
    todo::context(TodoStore::in_memory().expect("in-memory SQLite"))
}

async fn call(ctx: &CommandContext, command: &str, input: Value) -> Value {
    let result = Registry::global().call(command, input, ctx.clone()).await;
    serde_json::to_value(result).expect("results serialise")
}

#[test]
fn the_linked_binary_registers_every_todo_command() {
    for name in TODO_COMMANDS {
        assert!(
            Registry::global().get(name).is_some(),
            "{name} is not in the global registry"
        );
    }
}

#[test]
fn the_vendored_contract_matches_shared() {
    let shared = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/peer/afd-todo-conformance"
    );
    if !std::path::Path::new(shared).exists() {
        eprintln!("../shared is not beside this checkout; the vendored copy is used as it is");
        return;
    }
    for file in ["test-cases.json", "commands.schema.json"] {
        let ours = std::fs::read(format!("{FIXTURES}/{file}")).unwrap();
        let theirs = std::fs::read(format!("{shared}/{file}")).unwrap();
        assert!(ours == theirs, "{file} differs from shared/");
    }
}

#[tokio::test]
async fn every_conformance_case_passes_in_process() {
    let cases = load_cases();
    assert_eq!(cases.len(), 8);
    for case in &cases {
        let ctx = fresh();
        let outcome = run_case(case, |command, input| {
            let ctx = ctx.clone();
            async move { call(&ctx, &command, input).await }
        })
        .await;
        if let Err(reason) = outcome {
            panic!("case {} ({}) failed: {reason}", case.name, case.description);
        }
    }
}

fn sorted_strings(value: &Value) -> Vec<String> {
    let mut list: Vec<String> = value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    list.sort();
    list
}

#[test]
fn every_input_shape_matches_the_contract() {
    let contract = load_contract();
    for name in TODO_COMMANDS {
        let spec = &contract["commands"][name.replacen('-', ".", 1)]["input"];
        let ours = Registry::global().get(name).unwrap().input_schema();
        let mut spec_fields: Vec<&String> = spec["properties"]
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        let mut our_fields: Vec<&String> = ours["properties"]
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        spec_fields.sort();
        our_fields.sort();
        assert_eq!(our_fields, spec_fields, "{name}: input fields");
        assert_eq!(
            sorted_strings(&ours["required"]),
            sorted_strings(&spec["required"]),
            "{name}: required fields"
        );
    }
}

/// Every violation of the contract's output schema for `command` by `result`.
fn output_errors(contract: &Value, command: &str, result: &Value) -> Vec<String> {
    let mut schema = contract.clone();
    schema["$ref"] = json!(format!(
        "#/commands/{}/output",
        command.replacen('-', ".", 1)
    ));
    let validator = jsonschema::validator_for(&schema).expect("the contract compiles");
    validator
        .iter_errors(result)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn check_output(contract: &Value, command: &str, result: &Value) {
    let errors = output_errors(contract, command, result);
    assert!(errors.is_empty(), "{command}: {errors:?}\n{result}");
}

#[test]
fn the_output_check_rejects_what_breaks_the_contract() {
    let contract = load_contract();
    let todo = json!({"id": "t", "title": "x", "priority": "medium", "completed": false,
                      "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z"});
    assert!(
        output_errors(
            &contract,
            "todo-get",
            &json!({"success": true, "data": todo})
        )
        .is_empty()
    );
    assert!(
        !output_errors(&contract, "todo-get", &json!({"data": todo})).is_empty(),
        "success is required"
    );
    let mut no_id = todo.clone();
    no_id.as_object_mut().unwrap().remove("id");
    assert!(
        !output_errors(
            &contract,
            "todo-get",
            &json!({"success": true, "data": no_id})
        )
        .is_empty()
    );
    let stats = json!({"success": true, "data": {"total": 1}});
    assert!(!output_errors(&contract, "todo-stats", &stats).is_empty());
}

#[tokio::test]
async fn every_output_shape_matches_the_contract() {
    let contract = load_contract();
    let ctx = fresh();
    let first = call(
        &ctx,
        "todo-create",
        json!({"title": "First", "priority": "high"}),
    )
    .await;
    check_output(&contract, "todo-create", &first);
    let id = first["data"]["id"].as_str().unwrap().to_owned();
    let batch = call(
        &ctx,
        "todo-create-batch",
        json!({"todos": [{"title": "A"}, {"title": "B", "priority": "low"}]}),
    )
    .await;
    check_output(&contract, "todo-create-batch", &batch);
    assert_eq!(
        batch["data"]["summary"],
        json!({"total": 2, "successCount": 2, "failureCount": 0})
    );
    let b_id = batch["data"]["succeeded"][1]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    let calls = [
        (
            "todo-list",
            json!({"sortBy": "title", "sortOrder": "asc", "limit": 2}),
        ),
        ("todo-get", json!({"id": id})),
        (
            "todo-update",
            json!({"id": id, "description": "now with detail"}),
        ),
        ("todo-toggle", json!({"id": id})),
        (
            "todo-toggle-batch",
            json!({"ids": [b_id, "missing"], "completed": true}),
        ),
        ("todo-stats", json!({})),
        ("todo-clear", json!({})),
        ("todo-delete-batch", json!({"ids": ["missing"]})),
    ];
    for (command, input) in calls {
        let result = call(&ctx, command, input).await;
        assert_eq!(result["success"], true, "{command}: {result}");
        check_output(&contract, command, &result);
    }
    let remaining = call(&ctx, "todo-list", json!({})).await;
    let remaining_id = remaining["data"]["todos"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let deleted = call(&ctx, "todo-delete", json!({"id": remaining_id})).await;
    check_output(&contract, "todo-delete", &deleted);
}

#[tokio::test]
async fn todo_behaviour_beyond_the_cases() {
    let ctx = fresh();
    let created = call(&ctx, "todo-create", json!({"title": "Task"})).await;
    let id = created["data"]["id"].as_str().unwrap().to_owned();

    let no_changes = call(&ctx, "todo-update", json!({"id": id})).await;
    assert_eq!(no_changes["error"]["code"], "NO_CHANGES");

    let done = call(&ctx, "todo-toggle", json!({"id": id})).await;
    assert_eq!(done["data"]["completed"], true);
    assert!(done["data"]["completedAt"].is_string());
    let undone = call(&ctx, "todo-toggle", json!({"id": id})).await;
    assert_eq!(undone["data"]["completed"], false);
    assert!(undone["data"].get("completedAt").is_none());

    for n in 0..3 {
        call(
            &ctx,
            "todo-create",
            json!({"title": format!("More {n}"), "priority": "low"}),
        )
        .await;
    }
    let page = call(&ctx, "todo-list", json!({"limit": 2, "priority": "low"})).await;
    assert_eq!(page["data"]["total"], 3);
    assert_eq!(page["data"]["todos"].as_array().unwrap().len(), 2);
    assert_eq!(page["data"]["hasMore"], true);
    let searched = call(&ctx, "todo-list", json!({"search": "more 1"})).await;
    assert_eq!(searched["data"]["total"], 1);

    let too_big = call(&ctx, "todo-list", json!({"limit": 500})).await;
    assert_eq!(too_big["error"]["code"], "VALIDATION_ERROR");
    let bad_priority = call(
        &ctx,
        "todo-create",
        json!({"title": "x", "priority": "urgent"}),
    )
    .await;
    assert_eq!(bad_priority["error"]["code"], "VALIDATION_ERROR");

    let missing = call(&ctx, "todo-delete", json!({"id": "nope"})).await;
    assert_eq!(missing["error"]["code"], "NOT_FOUND");
    let partial = call(&ctx, "todo-delete-batch", json!({"ids": [id, "nope"]})).await;
    assert_eq!(partial["data"]["deletedIds"], json!([id]));
    assert_eq!(partial["data"]["failed"][0]["error"]["code"], "NOT_FOUND");
    assert_eq!(
        partial["data"]["summary"],
        json!({"total": 2, "successCount": 1, "failureCount": 1})
    );
}

#[tokio::test]
async fn a_store_file_survives_reopening() {
    let dir = std::env::temp_dir().join(format!("afd-todo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("todo.db");
    let _ = std::fs::remove_file(&path);
    {
        let ctx = todo::context(TodoStore::open(&path).unwrap());
        call(&ctx, "todo-create", json!({"title": "Persisted"})).await;
    }
    let ctx = todo::context(TodoStore::open(&path).unwrap());
    let list = call(&ctx, "todo-list", json!({})).await;
    assert_eq!(list["data"]["todos"][0]["title"], "Persisted");
    std::fs::remove_dir_all(&dir).unwrap();
}
