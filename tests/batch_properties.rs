//! Property: whatever the mix of successes, failures, skips and timeouts, afd-batch returns
//! one result per command, in input order, with counts that add up. Runs on tokio's paused
//! clock, so timeouts are exact and fast.

use std::time::Duration;

use afd_runtime::prelude::*;
use afd_runtime::{BatchRequest, Dispatcher};
use proptest::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Wait {
    ms: u64,
    ok: bool,
}

/// Wait, then succeed or fail.
#[command(category = "prop")]
async fn prop_wait(input: Wait) -> Result<u64, CommandError> {
    tokio::time::sleep(Duration::from_millis(input.ms)).await;
    if input.ok {
        Ok(input.ms)
    } else {
        Err(CommandError::new("PROP_FAIL", "failed"))
    }
}

#[derive(Debug, Clone)]
enum Entry {
    Ok(u64),
    Fail(u64),
    Unknown,
    Invalid,
}

fn entry() -> impl Strategy<Value = Entry> {
    prop_oneof![
        4 => (0u64..300).prop_map(Entry::Ok),
        2 => (0u64..300).prop_map(Entry::Fail),
        1 => Just(Entry::Unknown),
        1 => Just(Entry::Invalid),
    ]
}

fn to_json(index: usize, entry: &Entry, with_id: bool) -> Value {
    let mut value = match entry {
        Entry::Ok(ms) => json!({"command": "prop-wait", "input": {"ms": ms, "ok": true}}),
        Entry::Fail(ms) => json!({"command": "prop-wait", "input": {"ms": ms, "ok": false}}),
        Entry::Unknown => json!({"command": "prop-nope"}),
        Entry::Invalid => json!({"command": "prop-wait", "input": {"ms": "soon"}}),
    };
    if with_id {
        value["id"] = json!(format!("id-{index}"));
    }
    value
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn batch_results_keep_order_and_counts_add_up(
        entries in proptest::collection::vec(entry(), 1..12),
        stop_on_error in any::<bool>(),
        parallelism in 1usize..5,
        timeout in proptest::option::of(50u64..400),
        with_ids in any::<bool>(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap();
        let commands: Vec<Value> = entries.iter().enumerate().map(|(i, e)| to_json(i, e, with_ids)).collect();
        let mut options = json!({"stopOnError": stop_on_error, "parallelism": parallelism});
        if let Some(ms) = timeout {
            options["timeoutMs"] = json!(ms);
        }
        let request = BatchRequest::from_value(json!({"commands": commands, "options": options})).unwrap();
        let dispatcher = Dispatcher::builder(Registry::global()).build().unwrap();
        let result = runtime.block_on(dispatcher.batch(request, CommandContext::new()));

        prop_assert!(result.success);
        prop_assert_eq!(result.results.len(), entries.len());
        let s = result.summary;
        prop_assert_eq!(s.total, entries.len());
        prop_assert_eq!(s.success_count + s.failure_count + s.skipped_count, s.total);
        let mut counted = (0, 0, 0);
        for (index, (entry, got)) in entries.iter().zip(&result.results).enumerate() {
            prop_assert_eq!(got.index, index);
            let id = if with_ids { format!("id-{index}") } else { format!("cmd-{index}") };
            prop_assert_eq!(&got.id, &id);
            let expected_command = if matches!(entry, Entry::Unknown) { "prop-nope" } else { "prop-wait" };
            prop_assert_eq!(got.command.as_str(), expected_command);
            let code = got.result.error.as_ref().map(|e| e.code.to_string());
            match code.as_deref() {
                None => {
                    counted.0 += 1;
                    prop_assert!(matches!(entry, Entry::Ok(ms) if got.result.data == Some(json!(ms))));
                }
                Some("COMMAND_SKIPPED") => {
                    counted.2 += 1;
                    prop_assert!(stop_on_error || timeout.is_some(), "skips need stopOnError or a timeout");
                }
                Some("BATCH_TIMEOUT") => {
                    counted.1 += 1;
                    prop_assert!(timeout.is_some());
                }
                Some(code) => {
                    counted.1 += 1;
                    let expected = match entry {
                        Entry::Fail(_) => "PROP_FAIL",
                        Entry::Unknown => "COMMAND_NOT_FOUND",
                        Entry::Invalid => "VALIDATION_ERROR",
                        Entry::Ok(_) => "no error",
                    };
                    prop_assert_eq!(code, expected);
                }
            }
        }
        prop_assert_eq!(counted, (s.success_count, s.failure_count, s.skipped_count));
        if !stop_on_error && timeout.is_none() {
            prop_assert_eq!(s.skipped_count, 0);
        }
    }
}
