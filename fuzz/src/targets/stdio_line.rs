//! The stdio front's handling of one input line (`afd_runtime::mcp::fuzzing::stdio_line`):
//! every line is answered or passed on, never lost.
//!
//! - a line the front answers itself is one JSON-RPC error line (`jsonrpc`, an integer
//!   `code`, a message), carrying the request's id whenever it is not `null`;
//! - a `tools/call` the front takes is answered with the request's id, exactly as rmcp
//!   would answer it (same JSON);
//! - a line passed on to rmcp is blank, or a message rmcp reads, or one without an id to
//!   answer (rmcp would otherwise answer it with `id: null`, or drop it).

use afd_runtime::mcp::fuzzing::{Handling, stdio_line};
use rmcp::model::ClientJsonRpcMessage;
use serde::de::IgnoredAny;
use serde_json::Value;

/// The message as JSON, after what rmcp skips (a byte order mark, surrounding whitespace).
fn parsed(line: &[u8]) -> Option<Value> {
    let line = line
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(line)
        .trim_ascii();
    serde_json::from_slice(line).ok()
}

/// The top-level id and method: read even when the rest nests deeper than a `Value` may.
#[derive(serde::Deserialize)]
struct Head {
    id: Option<Value>,
    method: Option<IgnoredAny>,
}

fn head(line: &[u8]) -> Option<Head> {
    match parsed(line) {
        Some(message) => Some(Head {
            id: message.get("id").cloned(),
            method: message.get("method").map(|_| IgnoredAny),
        }),
        None => {
            let line = line
                .strip_prefix(b"\xEF\xBB\xBF")
                .unwrap_or(line)
                .trim_ascii();
            serde_json::from_slice::<Head>(line).ok()
        }
    }
}

/// The id a response must carry, when the message is an object with a usable id.
fn request_id(line: &[u8]) -> Option<Value> {
    head(line)?.id.filter(|id| id.is_string() || id.is_number())
}

/// The values written after each `"id":` in `line` (spaces allowed around the colon), read
/// as JSON from there on: the ids the line holds, escapes decoded, whatever follows them.
fn ids_written(line: &[u8]) -> Vec<Value> {
    let key = b"\"id\"";
    (0..line.len())
        .filter(|&at| line[at..].starts_with(key))
        .filter_map(|at| {
            let rest = line[at + key.len()..].trim_ascii_start();
            let rest = rest.strip_prefix(b":")?;
            serde_json::Deserializer::from_slice(rest)
                .into_iter::<Value>()
                .next()?
                .ok()
        })
        .collect()
}

fn one_line(answer: &[u8]) -> Value {
    assert_eq!(answer.last(), Some(&b'\n'), "an answer ends its line");
    assert!(
        !answer[..answer.len() - 1].contains(&b'\n'),
        "an answer is one line"
    );
    serde_json::from_slice(answer).expect("an answer is JSON")
}

/// Checks one input: panics on anything this target forbids.
pub fn run(line: &[u8]) {
    match stdio_line(line) {
        Handling::Call {
            id,
            rmcp_reads_params,
            ours,
            rmcp,
        } => {
            let response = one_line(&ours);
            assert_eq!(response["id"], id);
            assert_eq!(Some(&id), request_id(line).as_ref(), "the call's own id");
            assert!(
                rmcp_reads_params,
                "the front takes a call whose params rmcp cannot read: {}",
                String::from_utf8_lossy(line)
            );
            if let Some(rmcp) = rmcp {
                let mut rmcp: Value = serde_json::from_slice(&rmcp).expect("rmcp's answer is JSON");
                // rmcp writes `resultType` only to peers on 2026-07-28 or later, whose calls
                // the front leaves to it.
                rmcp["result"]
                    .as_object_mut()
                    .expect("a result object")
                    .remove("resultType");
                assert_eq!(response, rmcp, "the front answers as rmcp does");
            }
        }
        Handling::Refused(answer) => {
            let response = one_line(&answer);
            assert_eq!(response["jsonrpc"], "2.0");
            assert!(response["error"]["code"].is_i64(), "an error code");
            assert!(response["error"]["message"].is_string(), "an error message");
            let id = &response["id"];
            assert!(id.is_null() || id.is_string() || id.is_number());
            if !id.is_null() {
                // The request's own id; or, for a line that is not JSON as a whole (cut
                // short, nested too deep) or holds `id` twice, the id read from its start:
                // either way an id the line holds.
                // (An integer beyond 64 bits is read as the nearest float: its text differs.)
                if request_id(line).as_ref() != Some(id) && !id.is_f64() {
                    // Its text, or (a string with escapes) its value after an `"id":`.
                    assert!(
                        String::from_utf8_lossy(line).contains(&id.to_string())
                            || ids_written(line).contains(id),
                        "an id the line does not hold: {id}"
                    );
                }
            }
        }
        Handling::Dropped => {
            // Only a notification goes unanswered: a request always gets an answer.
            let head = head(line).expect("a dropped line is a message");
            assert!(head.method.is_some(), "a dropped message has a method");
            assert!(
                head.id.is_none(),
                "a request is never dropped: {}",
                String::from_utf8_lossy(line)
            );
        }
        Handling::PassedOn => {
            let trimmed = line
                .strip_prefix(b"\xEF\xBB\xBF")
                .unwrap_or(line)
                .trim_ascii();
            if trimmed.is_empty() {
                return;
            }
            // A request: a response (no method) needs no answer.
            if let Some(Head {
                id: Some(id),
                method: Some(_),
            }) = head(line)
                && (id.is_string() || id.is_number())
            {
                let read = serde_json::from_slice::<ClientJsonRpcMessage>(trimmed);
                assert!(
                    read.is_ok(),
                    "a message with id {id} is passed on to rmcp, which cannot read it ({}): {}",
                    read.err().map(|e| e.to_string()).unwrap_or_default(),
                    String::from_utf8_lossy(line)
                );
            }
        }
    }
}
