//! Size limits on what callers send, with defaults a host can change.

use serde_json::{Value, json};

use crate::error::{CommandError, codes};

/// Limits on inputs, batches and pipelines.
///
/// ```
/// use afd_runtime::Limits;
/// let limits = Limits::default().with_max_batch_len(10);
/// assert_eq!(limits.max_batch_len(), 10);
/// assert_eq!(limits.max_input_bytes(), 1 << 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    max_input_bytes: usize,
    max_depth: usize,
    max_batch_len: usize,
    max_parallelism: usize,
    max_pipeline_steps: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_input_bytes: 1 << 20,
            max_depth: 64,
            max_batch_len: 100,
            max_parallelism: 16,
            max_pipeline_steps: 25,
        }
    }
}

impl Limits {
    /// Largest input, in bytes of JSON (default 1 MiB).
    #[must_use]
    pub fn with_max_input_bytes(mut self, bytes: usize) -> Self {
        self.max_input_bytes = bytes;
        self
    }

    /// Deepest nesting of arrays and objects (default 64).
    #[must_use]
    pub fn with_max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// Most commands in one batch (default 100).
    #[must_use]
    pub fn with_max_batch_len(mut self, len: usize) -> Self {
        self.max_batch_len = len;
        self
    }

    /// Most batch commands run at once (default 16); larger requests are capped.
    #[must_use]
    pub fn with_max_parallelism(mut self, parallelism: usize) -> Self {
        self.max_parallelism = parallelism.max(1);
        self
    }

    /// Most steps in one pipeline (default 25).
    #[must_use]
    pub fn with_max_pipeline_steps(mut self, steps: usize) -> Self {
        self.max_pipeline_steps = steps;
        self
    }

    /// Largest input, in bytes.
    pub fn max_input_bytes(&self) -> usize {
        self.max_input_bytes
    }

    /// Deepest nesting.
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// Most commands in a batch.
    pub fn max_batch_len(&self) -> usize {
        self.max_batch_len
    }

    /// Most batch commands at once.
    pub fn max_parallelism(&self) -> usize {
        self.max_parallelism
    }

    /// Most pipeline steps.
    pub fn max_pipeline_steps(&self) -> usize {
        self.max_pipeline_steps
    }

    /// Checks an input's size and depth without serialising it.
    ///
    /// # Errors
    ///
    /// `INPUT_TOO_LARGE` saying which limit was passed.
    pub fn check_input(&self, input: &Value) -> Result<(), CommandError> {
        let mut budget = Budget {
            bytes: 0,
            max_bytes: self.max_input_bytes,
            max_depth: self.max_depth,
        };
        match budget.walk(input, 1) {
            Ok(()) => Ok(()),
            Err(Exceeded::Depth) => Err(CommandError::new(
                codes::INPUT_TOO_LARGE,
                format!("Input is nested deeper than {} levels", self.max_depth),
            )
            .with_suggestion("Flatten the input; no command here needs that much nesting.")
            .with_details(json!({"limit": "depth", "max": self.max_depth}))),
            Err(Exceeded::Bytes) => Err(CommandError::new(
                codes::INPUT_TOO_LARGE,
                format!("Input is larger than {} bytes", self.max_input_bytes),
            )
            .with_suggestion(
                "Send less data per call, for example split it over several calls in afd-batch.",
            )
            .with_details(json!({"limit": "bytes", "max": self.max_input_bytes}))),
        }
    }
}

enum Exceeded {
    Depth,
    Bytes,
}

struct Budget {
    bytes: usize,
    max_bytes: usize,
    max_depth: usize,
}

impl Budget {
    fn add(&mut self, bytes: usize) -> Result<(), Exceeded> {
        self.bytes += bytes;
        if self.bytes > self.max_bytes {
            Err(Exceeded::Bytes)
        } else {
            Ok(())
        }
    }

    /// Adds the JSON size of `value` (an upper-bound estimate: numbers count 24 bytes).
    fn walk(&mut self, value: &Value, depth: usize) -> Result<(), Exceeded> {
        match value {
            Value::Null | Value::Bool(_) => self.add(5),
            Value::Number(_) => self.add(24),
            Value::String(text) => self.add(text.len() + 2),
            Value::Array(items) => {
                if depth > self.max_depth {
                    return Err(Exceeded::Depth);
                }
                self.add(2 + items.len())?;
                items.iter().try_for_each(|item| self.walk(item, depth + 1))
            }
            Value::Object(map) => {
                if depth > self.max_depth {
                    return Err(Exceeded::Depth);
                }
                self.add(2)?;
                map.iter().try_for_each(|(key, item)| {
                    self.add(key.len() + 4)?;
                    self.walk(item, depth + 1)
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_and_size_are_bounded() {
        let limits = Limits::default()
            .with_max_depth(3)
            .with_max_input_bytes(100);
        assert!(limits.check_input(&json!({"a": {"b": [1]}})).is_ok());
        let deep = limits
            .check_input(&json!({"a": {"b": {"c": [1]}}}))
            .unwrap_err();
        assert_eq!(deep.code, codes::INPUT_TOO_LARGE);
        assert!(deep.message.contains("deeper than 3"));
        let big = limits
            .check_input(&json!({"a": "x".repeat(200)}))
            .unwrap_err();
        assert!(big.message.contains("larger than 100 bytes"));
    }
}
