//! `DeclarationError`: why the resources or prompts declared in a binary cannot be served
//! together (two claiming one URI or name, a completion for an argument that does not
//! exist), with the source location of each declaration involved.

use std::fmt;

use crate::command::SourceLocation;

/// Every problem found among the declarations, one line each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclarationError {
    problems: Vec<String>,
}

impl DeclarationError {
    pub(crate) fn check(problems: Vec<String>) -> Result<(), DeclarationError> {
        if problems.is_empty() {
            Ok(())
        } else {
            Err(DeclarationError { problems })
        }
    }

    /// The problems, one sentence each.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for DeclarationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.problems.join("\n"))
    }
}

impl std::error::Error for DeclarationError {}

/// `file:line:column`, for problems.
pub(crate) fn at(location: &SourceLocation) -> String {
    format!("{}:{}:{}", location.file, location.line, location.column)
}
