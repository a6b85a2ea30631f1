//! Input validation: JSON Schema first (every violation, with its JSON pointer), then
//! deserialisation, naming the field that did not fit.
//!
//! - `explain`: [`InputValidator`] and the messages that explain each [`Violation`] to
//!   an agent;
//! - `de` and `entries`: [`deserialize_input`] and the `serde::Deserializer` it uses to
//!   decode a validated input into the handler's type.

mod de;
mod entries;
mod explain;

pub use de::deserialize_input;
pub use explain::{InputValidator, Violation};
