//! The built-in tools: afd-discover, afd-detail, afd-batch, afd-pipe, and the
//! introspection tools afd-help, afd-docs and afd-schema, one file each. They sit above
//! the call path: afd-batch and afd-pipe run commands through the narrow
//! `CallPath` interface, the others read the catalog a dispatcher exposes. The
//! context operations are commands of the catalog and live with the runtime contexts
//! ([`crate::contexts`]).
//!
//! Every surface reaches them through [`MetaTools`](crate::MetaTools), implemented for
//! [`Dispatcher`](crate::Dispatcher).

pub(crate) mod batch;
pub(crate) mod detail;
pub(crate) mod discover;
pub(crate) mod help;
pub(crate) mod meta;
pub(crate) mod pipe;

use std::time::Instant;

use serde_json::Value;

use crate::error::CommandError;
use crate::result::CommandResult;
use crate::validate::{InputValidator, deserialize_input};

pub use detail::MAX_DETAIL_NAMES;
pub use discover::{
    CategoryInfo, CommandSummary, ContextStatus, DetailLevel, DiscoverInput, DiscoverResult,
    OneOrMany,
};

/// Validates a built-in tool's input against its schema and decodes it.
fn validated<T: serde::de::DeserializeOwned>(
    tool: &str,
    validator: &InputValidator,
    input: Value,
) -> Result<T, CommandError> {
    let input = if input.is_null() {
        Value::Object(Default::default())
    } else {
        input
    };
    validator.validate(tool, &input)?;
    deserialize_input(tool, input)
}

fn finish(
    data: Result<Value, serde_json::Error>,
    reasoning: String,
    started: Instant,
) -> CommandResult<Value> {
    let mut result = match data {
        Ok(data) => CommandResult::success(data)
            .with_reasoning(reasoning)
            .with_confidence(1.0),
        Err(error) => CommandResult::failure(CommandError::internal(error.to_string())),
    };
    result.metadata_mut().execution_time_ms = Some(started.elapsed().as_millis() as u64);
    result
}
