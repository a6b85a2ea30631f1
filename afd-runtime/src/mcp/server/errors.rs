//! A command error as the `data` of a JSON-RPC error, for the requests that answer with
//! JSON-RPC errors rather than tool results (listings, prompts, resources).

use serde_json::{Value, json};

use crate::error::CommandError;

/// A command error as a JSON-RPC error's `data`, for the requests that answer with
/// JSON-RPC errors rather than tool results (listings, prompts, resources): its stable
/// code, suggestion, whether a retry may succeed and its details; the message is the
/// JSON-RPC error's own.
pub(in crate::mcp) fn error_data(error: &CommandError) -> Value {
    let mut data = json!({"code": error.code, "suggestion": error.suggestion});
    if let Some(retryable) = error.retryable {
        data["retryable"] = json!(retryable);
    }
    if let Some(details) = &error.details {
        data["details"] = details.clone();
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::codes;

    #[test]
    fn a_json_rpc_errors_data_carries_code_suggestion_retry_and_details() {
        let error = CommandError::new(codes::SESSION_STORE_UNAVAILABLE, "Redis is down")
            .with_suggestion("Retry in a moment.")
            .with_retryable(true)
            .with_details(json!({"store": "redis"}));
        assert_eq!(
            error_data(&error),
            json!({"code": codes::SESSION_STORE_UNAVAILABLE, "suggestion": "Retry in a moment.",
                   "retryable": true, "details": {"store": "redis"}})
        );
        let bare = error_data(&CommandError::new(codes::NOT_FOUND, "no such prompt"));
        assert_eq!(bare, json!({"code": codes::NOT_FOUND, "suggestion": null}));
    }
}
