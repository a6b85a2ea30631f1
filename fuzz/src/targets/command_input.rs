//! Input validation and decoding, on the path a call takes (`Registry::call`: limits,
//! lookup, JSON Schema validation against the generated schema, the input deserializer,
//! the handler): any input is the command's result or a structured error, never a panic.
//!
//! The input's first line names the command (one of `afd_fuzz::COMMANDS`, or any other name
//! for the "did you mean" path), the rest is the input JSON. Each command echoes its decoded
//! input, so an accepted input must come back as JSON its own schema accepts, and an input
//! the schema refuses must never reach the handler.

use crate::block_on;
use afd_runtime::{CommandContext, Registry, codes};
use serde_json::Value;

/// Checks one input: panics on anything this target forbids.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (name, input) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(mut input) = serde_json::from_str::<Value>(input) else {
        return;
    };
    if input.is_null() {
        // What the call path does first: no input is an empty object.
        input = Value::Object(Default::default());
    }
    let registry = Registry::global();
    let schema_accepts = registry
        .get(name)
        .map(|entry| entry.validate(&input).is_ok());
    let result = block_on(registry.call(name, input, CommandContext::new()));
    if result.success {
        let entry = registry.get(name).expect("only a known command succeeds");
        assert_eq!(
            schema_accepts,
            Some(true),
            "{name}: the schema refused what was decoded"
        );
        let data = result.data.expect("an echoing command returns its input");
        // value-echo returns the value inside its input, not the input.
        if name != "value-echo"
            && let Err(error) = entry.validate(&data)
        {
            panic!(
                "{name} decoded an input its schema refuses once written back: {data} ({error:?})"
            );
        }
    } else {
        let error = result.error.expect("a failure carries an error");
        assert_ne!(error.code, codes::INTERNAL_ERROR, "{error:?}");
        assert!(!error.message.is_empty());
        if schema_accepts == Some(false) {
            assert_eq!(error.code, codes::VALIDATION_ERROR, "{error:?}");
        }
    }
}
