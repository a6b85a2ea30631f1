//! [`StderrLog`]: the log messages a handler sends, on the command line: one line each on
//! stderr (`info: import started`), `info` and above. Sampling and elicitation have no
//! client here: handlers that ask get `CLIENT_CANNOT_SAMPLE` / `CLIENT_CANNOT_ELICIT`
//! (confirmation is asked on the terminal before the call instead).

use std::io::Write as _;

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::client::{LogLevel, LogMessage, LogSink};

/// Log messages of a call as lines on stderr, never on stdout (which carries the result).
#[derive(Debug, Clone, Copy)]
pub struct StderrLog {
    threshold: LogLevel,
}

impl StderrLog {
    /// Messages of `threshold` and above.
    pub fn new(threshold: LogLevel) -> Self {
        StderrLog { threshold }
    }

    /// The line of one message: `level[logger]: text` (JSON data written compactly).
    pub fn line(message: &LogMessage) -> String {
        let text = match &message.data {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        match &message.logger {
            Some(logger) => format!("{}[{logger}]: {text}", message.level),
            None => format!("{}: {text}", message.level),
        }
    }

    fn write(message: &LogMessage) {
        let _ = writeln!(std::io::stderr().lock(), "{}", StderrLog::line(message));
    }
}

impl Default for StderrLog {
    fn default() -> Self {
        StderrLog::new(LogLevel::Info)
    }
}

impl LogSink for StderrLog {
    fn threshold(&self) -> Option<LogLevel> {
        Some(self.threshold)
    }

    fn send(&self, message: LogMessage) -> BoxFuture<'_, ()> {
        StderrLog::write(&message);
        Box::pin(async {})
    }

    fn send_later(&self, message: LogMessage) {
        StderrLog::write(&message);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_message_is_one_line_with_its_level() {
        assert_eq!(
            StderrLog::line(&LogMessage::new(LogLevel::Warning, "low stock")),
            "warning: low stock"
        );
        assert_eq!(
            StderrLog::line(
                &LogMessage::new(LogLevel::Info, json!({"n": 3})).with_logger("import")
            ),
            r#"info[import]: {"n":3}"#
        );
    }
}
