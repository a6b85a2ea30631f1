//! Log messages a handler sends to its caller: the levels (MCP's, from syslog), one
//! message, and [`LogSink`], where a surface receives them.

use std::fmt;
use std::str::FromStr;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How severe a log message is, least severe first (MCP's levels, after syslog).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but worth noticing.
    Notice,
    /// Something may be wrong.
    Warning,
    /// Something failed.
    Error,
    /// A component failed.
    Critical,
    /// Someone must act now.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level's name as MCP writes it (`warning`, not `warn`).
    pub const fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// The level of a `tracing` event (`TRACE` and `DEBUG` are both `debug`).
    pub fn from_tracing(level: &tracing::Level) -> Self {
        match *level {
            tracing::Level::ERROR => LogLevel::Error,
            tracing::Level::WARN => LogLevel::Warning,
            tracing::Level::INFO => LogLevel::Info,
            _ => LogLevel::Debug,
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of the [`LogLevel`]s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown log level `{0}`: expected debug, info, notice, warning, error, critical, alert or emergency"
)]
pub struct UnknownLogLevel(pub String);

impl FromStr for LogLevel {
    type Err = UnknownLogLevel;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        LogLevel::ALL
            .into_iter()
            .find(|level| level.as_str().eq_ignore_ascii_case(name))
            .ok_or_else(|| UnknownLogLevel(name.to_owned()))
    }
}

/// One log message: its level, the logger it came from (if named), and its data (a string
/// or any JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LogMessage {
    /// How severe it is.
    pub level: LogLevel,
    /// Which part of the program sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// What it says: text or structured data.
    pub data: Value,
}

impl LogMessage {
    /// A message of `level` saying `data`.
    pub fn new(level: LogLevel, data: impl Into<Value>) -> Self {
        LogMessage {
            level,
            logger: None,
            data: data.into(),
        }
    }

    /// The same message, from `logger`.
    #[must_use]
    pub fn with_logger(mut self, logger: impl Into<String>) -> Self {
        self.logger = Some(logger.into());
        self
    }
}

/// Where a surface delivers the log messages of a call. Messages below
/// [`threshold`](LogSink::threshold) are not sent; a message that cannot be delivered (the
/// client went away) is dropped, never an error of the call.
pub trait LogSink: Send + Sync + 'static {
    /// The least severe level the caller wants now; `None`: nothing.
    fn threshold(&self) -> Option<LogLevel>;

    /// Whether the caller asked for the program's own `tracing` events too (an MCP client
    /// that sent `logging/setLevel`), not only what handlers log on purpose.
    fn wants_tracing(&self) -> bool {
        false
    }

    /// Delivers one message (at or above the threshold).
    fn send(&self, message: LogMessage) -> BoxFuture<'_, ()>;

    /// Delivers one message from code that cannot wait (a `tracing` event): queued, sent in
    /// order with the awaited ones, and before the call's answer.
    fn send_later(&self, message: LogMessage);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_order_from_debug_to_emergency_and_read_back_by_name() {
        assert!(LogLevel::ALL.windows(2).all(|pair| pair[0] < pair[1]));
        for level in LogLevel::ALL {
            assert_eq!(level.as_str().parse::<LogLevel>(), Ok(level));
            assert_eq!(serde_json::to_value(level).unwrap(), level.as_str());
        }
        assert_eq!("WARNING".parse::<LogLevel>(), Ok(LogLevel::Warning));
        assert!("warn".parse::<LogLevel>().is_err());
        assert_eq!(
            LogLevel::from_tracing(&tracing::Level::TRACE),
            LogLevel::Debug
        );
        assert_eq!(
            LogLevel::from_tracing(&tracing::Level::WARN),
            LogLevel::Warning
        );
    }
}
