/*BANNER*/
//! The benchmark catalog on rmcp, as its documentation shows: one `#[tool]` method per
//! command in a `#[tool_router]` impl, taking `Parameters<...Input>` (Deserialize +
//! JsonSchema) and returning `Json<...>` (structured content and its outputSchema).

use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering},
};

use rmcp::{
    ServerHandler,
    handler::server::{router::tool::ToolRouter, wrapper::{Json, Parameters}},
    tool, tool_handler, tool_router,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

fn default_limit() -> u32 {
    20
}

/*OUTPUTS*/
/*INPUTS*/
/// The server: its tool router, built once and shared by every connection.
#[derive(Clone)]
pub struct Shop {
    tool_router: Arc<ToolRouter<Shop>>,
}

impl Shop {
    /// The router of every tool of the catalog.
    pub fn router() -> Arc<ToolRouter<Shop>> {
        Arc::new(Self::tool_router())
    }

    pub fn new(tool_router: Arc<ToolRouter<Shop>>) -> Self {
        Shop { tool_router }
    }
}

#[tool_router]
impl Shop {
    /*TOOLS*/
}

#[tool_handler(router = self.tool_router, name = "rmcp-shop", version = "0.1.0")]
impl ServerHandler for Shop {}
