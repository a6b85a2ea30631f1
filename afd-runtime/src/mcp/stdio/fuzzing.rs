//! The stdio front's handling of one input line, for the fuzz targets in `fuzz/` (the
//! `fuzzing` feature; not a stable API).
//!
//! [`stdio_line`] runs a line through the front's own functions in the front's order, on a
//! connection whose handshake is done: the parse that takes a `tools/call`, then
//! [`refuse`](super::front::refuse) (the answers the front writes itself, and what it notes of the
//! messages it passes on). A line the front takes as a call is answered with a result that
//! echoes its arguments, written both the front's way and rmcp's way, so that a fuzzer can
//! compare the two.

use std::sync::Mutex;

use rmcp::model::{CallToolRequestParams, NumberOrString, ServerJsonRpcMessage, ServerResult};
use serde_json::Value;

use super::front::{Handshake, InFlight, refuse};
use crate::CommandResult;
use crate::mcp::server::answer::Answer;
use crate::mcp::wire::message::{self, CallRequest};

/// What the front does with one line.
#[derive(Debug)]
pub enum Handling {
    /// It answers the line itself as a `tools/call`.
    Call {
        /// The request's id.
        id: Value,
        /// Whether rmcp reads the call's params too.
        rmcp_reads_params: bool,
        /// The response line the front writes for a result echoing the arguments.
        ours: Vec<u8>,
        /// The response rmcp writes for the same result (`None`: rmcp's ids cannot carry
        /// this id).
        rmcp: Option<Vec<u8>>,
    },
    /// It answers the line with this JSON-RPC error line.
    Refused(Vec<u8>),
    /// It passes the line on to rmcp unchanged.
    PassedOn,
    /// It neither answers the line nor passes it on: a notification whose params the server
    /// cannot read (JSON-RPC forbids answering a notification).
    Dropped,
}

/// How the front handles `line` (newline included, if any) on an initialised connection.
pub fn stdio_line(line: &[u8]) -> Handling {
    if let Some(call) = serde_json::from_slice::<CallRequest<'_>>(line)
        .ok()
        .filter(CallRequest::plain)
    {
        let arguments = call.params.arguments.clone().unwrap_or_default();
        let answer = Answer::Command(CommandResult::success(Value::Object(arguments.clone())));
        let ours = message::response_line(
            &call.id,
            Answer::Command(CommandResult::success(Value::Object(arguments.clone()))),
            false,
        );
        let rmcp = serde_json::from_value::<NumberOrString>(call.id.clone())
            .ok()
            .map(|id| {
                let message = ServerJsonRpcMessage::response(
                    ServerResult::CallToolResult(answer.into_tool_result()),
                    id,
                );
                serde_json::to_vec(&message).expect("rmcp's message serialises")
            });
        let rmcp_reads_params = serde_json::from_slice::<Value>(line)
            .ok()
            .and_then(|mut message| message.get_mut("params").map(Value::take))
            .is_some_and(|params| serde_json::from_value::<CallToolRequestParams>(params).is_ok());
        return Handling::Call {
            id: call.id,
            rmcp_reads_params,
            ours,
            rmcp,
        };
    }
    let handshake = Mutex::new(Handshake::default());
    let in_flight = InFlight::default();
    match refuse(line, &handshake, &in_flight) {
        Some(answer) if answer.is_empty() => Handling::Dropped,
        Some(answer) => Handling::Refused(answer),
        None => Handling::PassedOn,
    }
}
