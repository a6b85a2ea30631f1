//! afd-pipe: a pipeline of commands whose outputs feed later inputs.
//!
//! This module holds the wire types (the request, its steps and options, the result and
//! each step's result) and the check a request passes before any step runs. The
//! reference and condition language lives in [`expr`], the executor in [`run`](mod@run).

mod expr;
mod run;

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{CommandError, codes};
use expr::{Condition, parse_condition};

pub(crate) use run::run;

/// An afd-pipe request.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PipeRequest {
    /// The steps, run in order.
    pub steps: Vec<PipeStep>,
    /// The pipeline's input, referenced as `$input`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// How to run it.
    #[serde(default)]
    pub options: PipeOptions,
}

/// One step of a pipeline.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PipeStep {
    /// The command name.
    pub command: String,
    /// Its input; string values starting with `$` are references.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// A name later steps can reference as `$steps.<alias>`.
    #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// Run the step only if this condition holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Value>,
}

/// How a pipeline runs.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PipeOptions {
    /// Run the remaining steps after one fails.
    #[serde(default)]
    pub continue_on_failure: bool,
    /// Cancel the pipeline after this many milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// What happened to a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    /// It ran and succeeded.
    Success,
    /// It ran (or tried to) and failed.
    Failure,
    /// It did not run.
    Skipped,
}

/// The result of one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepResult {
    /// The step's position in the request.
    pub index: usize,
    /// The step's alias.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// The command name.
    pub command: String,
    /// What happened.
    pub status: StepStatus,
    /// Its data, on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Why it failed or was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<CommandError>,
    /// How long it ran.
    pub execution_time_ms: u64,
}

/// The confidence a step reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepConfidence {
    /// The step's position.
    pub step: usize,
    /// The step's alias.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// The command name.
    pub command: String,
    /// Its confidence (1 when it gave none; 0 when it failed).
    pub confidence: f64,
}

/// The reasoning a step reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepReasoning {
    /// The step's position.
    pub step_index: usize,
    /// The command name.
    pub command: String,
    /// Its reasoning.
    pub reasoning: String,
}

/// A warning a step reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepWarning {
    /// The step's position.
    pub step_index: usize,
    /// The step's alias.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_alias: Option<String>,
    /// Warning code.
    pub code: String,
    /// Warning text.
    pub message: String,
}

/// Pipeline metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PipeMetadata {
    /// The lowest confidence of the steps that ran.
    pub confidence: f64,
    /// Each step's confidence.
    pub confidence_breakdown: Vec<StepConfidence>,
    /// Each step's reasoning.
    pub reasoning: Vec<StepReasoning>,
    /// Each step's warnings.
    pub warnings: Vec<StepWarning>,
    /// Wall-clock time of the pipeline.
    pub execution_time_ms: u64,
    /// Steps that succeeded.
    pub completed_steps: usize,
    /// Steps requested.
    pub total_steps: usize,
}

/// The result of afd-pipe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PipeResult {
    /// Whether no step failed.
    pub success: bool,
    /// The data of the last step that succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// One result per requested step, in request order.
    pub steps: Vec<StepResult>,
    /// Why the pipeline did not run at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<CommandError>,
    /// Confidence, reasoning, warnings and timing.
    pub metadata: PipeMetadata,
}

impl PipeRequest {
    /// Reads a request from afd-pipe's JSON input.
    ///
    /// # Errors
    ///
    /// `INVALID_PIPELINE_REQUEST` naming the path of the mistake.
    pub fn from_value(input: Value) -> Result<Self, CommandError> {
        serde_path_to_error::deserialize(input).map_err(|error| {
            invalid(format!(
                "Invalid pipeline request at '{}': {}",
                error.path(),
                error.inner()
            ))
        })
    }
}

fn invalid(message: String) -> CommandError {
    CommandError::new(codes::INVALID_PIPELINE_REQUEST, message)
        .with_suggestion(
            "Send {steps: [{command, input?, as?, when?}], input?, options?: {continueOnFailure?, timeoutMs?}}.",
        )
        .with_retryable(false)
}

/// A request that passed [`check`]: step aliases and parsed conditions.
struct Checked {
    aliases: HashMap<String, usize>,
    conditions: Vec<Option<Condition>>,
}

/// Checks the whole request before any step runs: limits, aliases, conditions.
fn check(request: &PipeRequest, max_steps: usize) -> Result<Checked, CommandError> {
    let total = request.steps.len();
    if total == 0 {
        return Err(invalid("The pipeline has no steps".to_owned()));
    }
    if total > max_steps {
        return Err(invalid(format!(
            "The pipeline has {total} steps; at most {max_steps} are allowed"
        )));
    }
    let mut aliases = HashMap::new();
    let mut conditions = Vec::with_capacity(total);
    for (index, step) in request.steps.iter().enumerate() {
        if let Some(alias) = &step.alias
            && let Some(first) = aliases.insert(alias.clone(), index)
        {
            return Err(invalid(format!(
                "Steps {first} and {index} are both named '{alias}'"
            )));
        }
        let condition = step
            .when
            .as_ref()
            .map(parse_condition)
            .transpose()
            .map_err(|reason| {
                invalid(format!(
                    "Step {index} ('{}'): invalid when: {reason}",
                    step.command
                ))
            })?;
        conditions.push(condition);
    }
    Ok(Checked {
        aliases,
        conditions,
    })
}
