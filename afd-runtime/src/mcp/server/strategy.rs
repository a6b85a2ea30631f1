//! The tool [`Strategy`]: how the catalog is listed as MCP tools, and its names.

use std::fmt;
use std::str::FromStr;

/// How the catalog is listed as MCP tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Strategy {
    /// One tool per exposed command, plus afd-call, afd-batch and afd-pipe.
    Individual,
    /// One tool per category (an `action` picks the command), plus the three built-ins.
    Grouped,
    /// Exactly five tools: afd-discover, afd-detail, afd-call, afd-batch, afd-pipe.
    #[default]
    Lazy,
    /// Lazy, plus the commands marked `eager` as their own tools.
    Hybrid,
}

impl Strategy {
    /// The name used on the command line and in `AFD_TOOL_STRATEGY`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Strategy::Individual => "individual",
            Strategy::Grouped => "grouped",
            Strategy::Lazy => "lazy",
            Strategy::Hybrid => "hybrid",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A strategy name that is not one of `individual`, `grouped`, `lazy`, `hybrid`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool strategy '{0}': expected individual, grouped, lazy or hybrid")]
pub struct UnknownStrategy(pub String);

impl FromStr for Strategy {
    type Err = UnknownStrategy;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "individual" => Ok(Strategy::Individual),
            "grouped" => Ok(Strategy::Grouped),
            "lazy" => Ok(Strategy::Lazy),
            "hybrid" => Ok(Strategy::Hybrid),
            _ => Err(UnknownStrategy(text.to_owned())),
        }
    }
}
