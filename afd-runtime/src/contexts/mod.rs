//! Runtime contexts: named, optionally nested and read-only scopes that narrow
//! what an agent may call, entered and left per session.
//!
//! Categories and tags are metadata; a context is access control. A command names the
//! contexts it belongs to with `#[command(contexts("document-editing"))]`; a command that
//! names none is universal. Each context is declared once with [`context!`](crate::context):
//!
//! ```standalone_crate
//! use afd_runtime::prelude::*;
//!
//! afd_runtime::context! {
//!     /// Editing the document's text and formatting.
//!     name = "document-editing",
//!     priority = 10,
//!     triggers("edit", "write", "format"),
//! }
//!
//! afd_runtime::context! {
//!     /// Reviewing a document without changing it.
//!     name = "document-review",
//!     parent = "document-editing",
//!     triggers("review", "audit"),
//!     read_only,
//! }
//!
//! /// Make the selected text bold.
//! #[command(contexts("document-editing"), mutation)]
//! fn format_bold() -> &'static str {
//!     "bold"
//! }
//! ```
//!
//! A [`Dispatcher`](crate::Dispatcher) enforces them: a session's active context (the top
//! of its stack, see [`Sessions`]) decides what it may call, and a read-only scope refuses
//! every mutation. The built-in commands afd-context-list, afd-context-enter,
//! afd-context-exit and afd-context-suggest (category `context`) are added to any registry
//! that declares a context.

//!
//! Here live the rules and the state of each session: [`Sessions`] and its stores, the
//! gate a call passes (`gate`), what the context operations do (`commands`), and the
//! ranking behind afd-context-suggest and context hints (`suggest`). The declarations
//! themselves ([`ContextDef`](crate::ContextDef), [`ContextTree`]) are catalog data, held
//! by the [`Registry`](crate::Registry).

pub(crate) mod commands;
pub(crate) mod gate;
#[cfg(feature = "redis")]
pub(crate) mod redis;
pub(crate) mod session;
mod suggest;

pub use crate::registry::{CONTEXT_OPS, ContextTree, ENTER, EXIT, LIST, SUGGEST};
pub use commands::{ContextInfo, SessionStatus};
pub(crate) use gate::{Host, store_unavailable};
pub use session::{
    Frame, MemorySessionStore, SearchRecord, SessionState, SessionStore, SessionStoreError,
    StoreFuture,
};
// Re-exported at the crate root, their one public path.
#[cfg(feature = "redis")]
pub use self::redis::RedisSessionStore;
pub(crate) use crate::registry::Scope;
pub(crate) use session::{NoContextPolicy, SessionConfig, Sessions};
pub use suggest::ContextHint;
