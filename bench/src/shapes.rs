//! What the generated commands return.

use std::sync::atomic::{AtomicU64, Ordering};

use afd_runtime::CommandError;
use schemars::JsonSchema;
use serde::Serialize;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The default page size of the generated inputs.
pub fn default_limit() -> u32 {
    20
}

/// `NOT_FOUND` for a record.
pub fn not_found(kind: &str, id: &str) -> CommandError {
    CommandError::new("NOT_FOUND", format!("No {kind} {id}"))
}

/// A user.
#[derive(Debug, Serialize, JsonSchema)]
pub struct User {
    /// Its id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Contact address.
    pub email: String,
}

impl User {
    /// A new user with the next id.
    pub fn create(name: String, email: String) -> User {
        let id = format!("u{}", NEXT_ID.fetch_add(1, Ordering::Relaxed));
        User { id, name, email }
    }
}

/// An order.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Order {
    /// Its id.
    pub order_id: String,
    /// Who placed it.
    pub user_id: String,
    /// What it holds.
    pub items: Vec<String>,
    /// `open` or `cancelled`.
    pub status: &'static str,
}

impl Order {
    /// A new open order with the next id.
    pub fn open(user_id: String, items: Vec<String>) -> Order {
        let order_id = format!("o{}", NEXT_ID.fetch_add(1, Ordering::Relaxed));
        Order {
            order_id,
            user_id,
            items,
            status: "open",
        }
    }
}

/// A deletion.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Deleted {
    /// The id deleted.
    pub deleted: String,
}

/// A subscription's state.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Subscription {
    /// Its id.
    pub subscription_id: String,
    /// Its status.
    pub status: &'static str,
}

/// A configuration reset.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Reset {
    /// Always true.
    pub reset: bool,
}

/// What a generated command answers: its name and its input.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Echo {
    /// The command's name.
    pub command: &'static str,
    /// The input it got.
    pub echo: EchoInput,
}

/// The input a generated command got.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EchoInput {
    /// The id asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The query.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The page size.
    pub limit: u32,
}

impl Echo {
    /// The answer of `command` to its input.
    pub fn new(
        command: &'static str,
        id: Option<String>,
        query: Option<String>,
        limit: u32,
    ) -> Echo {
        Echo {
            command,
            echo: EchoInput { id, query, limit },
        }
    }
}
