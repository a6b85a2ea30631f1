//! `--report`: the tools and o200k tokens a client loads with every configured upstream
//! connected directly, against the same servers through the gateway.

use std::fmt::Write as _;
use std::sync::Arc;

use serde::Serialize;
use tiktoken_rs::CoreBPE;

use crate::gateway::Gateway;

/// One upstream's direct cost.
#[derive(Debug, Clone, Serialize)]
pub struct ServerCost {
    /// The server's name.
    pub name: String,
    /// Its tools (0 when it could not be reached).
    pub tools: usize,
    /// o200k tokens of its `tools/list` tools array.
    pub tokens: usize,
    /// Why it could not be reached, if it could not.
    pub error: Option<String>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Each upstream, connected directly.
    pub servers: Vec<ServerCost>,
    /// Tools of all upstreams together.
    pub direct_tools: usize,
    /// Tokens of all upstreams' listings together.
    pub direct_tokens: usize,
    /// The strategy the gateway serves.
    pub strategy: String,
    /// Tools the gateway lists.
    pub gateway_tools: usize,
    /// Tokens of the gateway's listing.
    pub gateway_tokens: usize,
}

fn count(bpe: &CoreBPE, value: &impl Serialize) -> usize {
    let text = serde_json::to_string(value).unwrap_or_default();
    bpe.encode_with_special_tokens(&text).len()
}

/// Starts every upstream, measures its listing, and measures the gateway's.
///
/// # Errors
///
/// The o200k tokenizer could not be loaded.
pub async fn measure(
    gateway: &Arc<Gateway>,
) -> Result<Report, Box<dyn std::error::Error + Send + Sync>> {
    let bpe = tiktoken_rs::o200k_base()?;
    let connects = gateway.upstreams().iter().map(|upstream| {
        let upstream = upstream.clone();
        async move {
            let outcome = upstream.connect().await;
            (upstream, outcome)
        }
    });
    let outcomes = futures_util::future::join_all(connects).await;
    let mut servers = Vec::new();
    for (upstream, outcome) in outcomes {
        let (tools, tokens, error) = match (outcome, upstream.tools()) {
            (Ok(_), Some(list)) => (list.tools.len(), count(&bpe, &list.tools), None),
            (Ok(_), None) => (0, 0, Some("no tool list".to_owned())),
            (Err(error), _) => (0, 0, Some(error.message)),
        };
        servers.push(ServerCost {
            name: upstream.name().to_owned(),
            tools,
            tokens,
            error,
        });
    }
    gateway.rebuild()?;
    let listing = gateway.tools();
    Ok(Report {
        direct_tools: servers.iter().map(|s| s.tools).sum(),
        direct_tokens: servers.iter().map(|s| s.tokens).sum(),
        strategy: gateway.server().strategy().to_string(),
        gateway_tools: listing.len(),
        gateway_tokens: count(&bpe, &listing),
        servers,
    })
}

impl Report {
    /// The report as a table.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "tools/list (the tools array), o200k tokens");
        let _ = writeln!(
            out,
            "{:<28}{:>8}{:>10}",
            "server (connected directly)", "tools", "tokens"
        );
        for server in &self.servers {
            let _ = write!(
                out,
                "{:<28}{:>8}{:>10}",
                server.name, server.tools, server.tokens
            );
            if let Some(error) = &server.error {
                let _ = write!(out, "   unreachable: {error}");
            }
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "{:<28}{:>8}{:>10}",
            "all servers directly", self.direct_tools, self.direct_tokens
        );
        let _ = writeln!(
            out,
            "{:<28}{:>8}{:>10}",
            format!("through afd-gateway ({})", self.strategy),
            self.gateway_tools,
            self.gateway_tokens
        );
        if self.direct_tokens > 0 {
            let saved = 100.0 * (1.0 - self.gateway_tokens as f64 / self.direct_tokens as f64);
            let _ = writeln!(out, "the gateway's listing is {saved:.1}% smaller");
        }
        out
    }
}
