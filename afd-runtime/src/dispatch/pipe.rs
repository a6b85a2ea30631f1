//! afd-pipe: a pipeline of commands whose outputs feed later inputs.
//!
//! A string value that starts with `$` is a reference, resolved before the step runs:
//!
//! | reference | value |
//! |---|---|
//! | `$prev` | the data of the step just before (it must have succeeded) |
//! | `$first` | the data of the first step |
//! | `$steps[n]` | the data of step `n`, counted by position in the request |
//! | `$steps.alias` | the data of the step declared with `as: "alias"` |
//! | `$input` | the pipeline's own `input` |
//!
//! Each may be followed by a path: `.field`, `[0]`, and `.length` of an array or string.
//! `$$` escapes a literal dollar (`"$$5"` is the string `"$5"`). A reference that does not
//! resolve fails its step with `UNRESOLVED_REFERENCE`, naming the reference: never a null.
//!
//! `when` skips a step unless its condition holds: `{"$exists": ref}`, `{"$eq": [ref,
//! value]}`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte` (numbers, or strings compared in order),
//! `{"$and": [...]}`, `{"$or": [...]}`, `{"$not": cond}`. A reference that does not resolve
//! makes a comparison false (and `$exists` false).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Dispatcher;
use crate::command_context::CommandContext;
use crate::error::{CommandError, codes};
use crate::result::Warning;

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

// ---- references -------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Root {
    Prev,
    First,
    Input,
    StepIndex(usize),
    StepAlias(String),
}

#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Key(String),
    Index(usize),
}

#[derive(Debug, Clone, PartialEq)]
struct Reference {
    root: Root,
    path: Vec<Segment>,
}

/// A string value of a step input: a literal, or a reference.
#[derive(Debug, Clone, PartialEq)]
enum Text {
    Literal(String),
    Reference(Reference),
}

fn classify(text: &str) -> Result<Text, String> {
    if let Some(rest) = text.strip_prefix("$$") {
        return Ok(Text::Literal(format!("${rest}")));
    }
    if text.starts_with('$') {
        return parse_reference(text).map(Text::Reference);
    }
    Ok(Text::Literal(text.to_owned()))
}

fn parse_reference(text: &str) -> Result<Reference, String> {
    let body = &text[1..];
    let word_end = body.find(['.', '[']).unwrap_or(body.len());
    let (word, mut rest) = body.split_at(word_end);
    let root = match word {
        "prev" => Root::Prev,
        "first" => Root::First,
        "input" => Root::Input,
        "steps" => {
            if let Some(after) = rest.strip_prefix('[') {
                let close = after
                    .find(']')
                    .ok_or_else(|| format!("'{text}': missing ']'"))?;
                let index = after[..close]
                    .parse::<usize>()
                    .map_err(|_| format!("'{text}': '{}' is not a step number", &after[..close]))?;
                rest = &after[close + 1..];
                Root::StepIndex(index)
            } else if let Some(after) = rest.strip_prefix('.') {
                let end = after.find(['.', '[']).unwrap_or(after.len());
                if end == 0 {
                    return Err(format!("'{text}': missing alias after '$steps.'"));
                }
                let alias = after[..end].to_owned();
                rest = &after[end..];
                Root::StepAlias(alias)
            } else {
                return Err(format!("'{text}': write '$steps[n]' or '$steps.<alias>'"));
            }
        }
        _ => {
            return Err(format!(
                "'{text}' is not a reference; references start with $prev, $first, $steps or $input (write '$$' for a literal '$')"
            ));
        }
    };
    let mut path = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            if end == 0 {
                return Err(format!("'{text}': empty field name"));
            }
            path.push(Segment::Key(after[..end].to_owned()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let close = after
                .find(']')
                .ok_or_else(|| format!("'{text}': missing ']'"))?;
            let index = after[..close]
                .parse::<usize>()
                .map_err(|_| format!("'{text}': '{}' is not an index", &after[..close]))?;
            path.push(Segment::Index(index));
            rest = &after[close + 1..];
        } else {
            return Err(format!("'{text}': unexpected '{rest}'"));
        }
    }
    Ok(Reference { root, path })
}

/// What earlier steps produced, for resolving references.
struct Scope<'a> {
    index: usize,
    steps: &'a [StepResult],
    aliases: &'a HashMap<String, usize>,
    input: Option<&'a Value>,
}

impl Scope<'_> {
    fn step_data(&self, index: usize, what: &str) -> Result<&Value, String> {
        if index >= self.index {
            return Err(format!(
                "{what} refers to step {index}, which has not run before step {}",
                self.index
            ));
        }
        let step = &self.steps[index];
        match (&step.status, &step.data) {
            (StepStatus::Success, Some(data)) => Ok(data),
            (StepStatus::Success, None) => Err(format!(
                "step {index} ('{}') returned no data",
                step.command
            )),
            (StepStatus::Failure, _) => Err(format!("step {index} ('{}') failed", step.command)),
            (StepStatus::Skipped, _) => {
                Err(format!("step {index} ('{}') was skipped", step.command))
            }
        }
    }

    fn resolve(&self, reference: &Reference) -> Result<Value, String> {
        let mut current: &Value = match &reference.root {
            Root::Prev if self.index == 0 => {
                return Err("the first step has no previous step".to_owned());
            }
            Root::Prev => self.step_data(self.index - 1, "$prev")?,
            Root::First if self.index == 0 => {
                return Err("the first step cannot refer to itself".to_owned());
            }
            Root::First => self.step_data(0, "$first")?,
            Root::Input => self
                .input
                .ok_or_else(|| "the pipeline has no input".to_owned())?,
            Root::StepIndex(index) => {
                if *index >= self.steps.len() {
                    return Err(format!("there is no step {index}"));
                }
                self.step_data(*index, &format!("$steps[{index}]"))?
            }
            Root::StepAlias(alias) => {
                let index = *self
                    .aliases
                    .get(alias)
                    .ok_or_else(|| format!("no step is named '{alias}'"))?;
                self.step_data(index, &format!("$steps.{alias}"))?
            }
        };
        let mut length = None;
        for (depth, segment) in reference.path.iter().enumerate() {
            if length.is_some() {
                return Err("'.length' must come last".to_owned());
            }
            current = match (current, segment) {
                (Value::Object(map), Segment::Key(key)) => match map.get(key) {
                    Some(value) => value,
                    None => {
                        return Err(format!(
                            "there is no field '{key}'{}",
                            at(&reference.path[..depth])
                        ));
                    }
                },
                (Value::Array(items), Segment::Key(key)) if key == "length" => {
                    length = Some(items.len());
                    current
                }
                (Value::String(text), Segment::Key(key)) if key == "length" => {
                    length = Some(text.chars().count());
                    current
                }
                (Value::Array(items), Segment::Index(index)) => match items.get(*index) {
                    Some(value) => value,
                    None => {
                        return Err(format!(
                            "index {index} is out of range (length {}){}",
                            items.len(),
                            at(&reference.path[..depth])
                        ));
                    }
                },
                (other, segment) => {
                    let wanted = match segment {
                        Segment::Key(key) => format!("field '{key}'"),
                        Segment::Index(index) => format!("index {index}"),
                    };
                    return Err(format!(
                        "cannot take {wanted} of {}{}",
                        kind(other),
                        at(&reference.path[..depth])
                    ));
                }
            };
        }
        Ok(length.map_or_else(|| current.clone(), Value::from))
    }

    /// Replaces every reference in `input`.
    fn substitute(&self, input: &Value) -> Result<Value, (String, String)> {
        Ok(match input {
            Value::String(text) => match classify(text).map_err(|reason| (text.clone(), reason))? {
                Text::Literal(literal) => Value::String(literal),
                Text::Reference(reference) => self
                    .resolve(&reference)
                    .map_err(|reason| (text.clone(), reason))?,
            },
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|item| self.substitute(item))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, value)| Ok((key.clone(), self.substitute(value)?)))
                    .collect::<Result<Map<_, _>, (String, String)>>()?,
            ),
            other => other.clone(),
        })
    }
}

fn at(path: &[Segment]) -> String {
    if path.is_empty() {
        return String::new();
    }
    let mut text = String::new();
    for segment in path {
        match segment {
            Segment::Key(key) => {
                text.push('.');
                text.push_str(key);
            }
            Segment::Index(index) => text.push_str(&format!("[{index}]")),
        }
    }
    format!(" at '{}'", text.trim_start_matches('.'))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

// ---- conditions -------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Condition {
    Exists(Reference),
    Compare(Comparison, Reference, Value),
    And(Vec<Condition>),
    Or(Vec<Condition>),
    Not(Box<Condition>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Comparison {
    Eq,
    Ne,
    Gt,
    Gte,
    Lt,
    Lte,
}

fn parse_condition(value: &Value) -> Result<Condition, String> {
    let Some((operator, operand)) = value
        .as_object()
        .filter(|map| map.len() == 1)
        .and_then(|map| map.iter().next())
    else {
        return Err(format!(
            "a condition is an object with one operator ($exists, $eq, $and, ...), got {value}"
        ));
    };
    let reference = |value: &Value| -> Result<Reference, String> {
        match value.as_str() {
            Some(text) if text.starts_with('$') && !text.starts_with("$$") => parse_reference(text),
            _ => Err(format!(
                "{operator} needs a reference such as \"$prev.id\", got {value}"
            )),
        }
    };
    let pair = |operand: &Value| -> Result<(Reference, Value), String> {
        match operand.as_array().map(Vec::as_slice) {
            Some([left, right]) => Ok((reference(left)?, right.clone())),
            _ => Err(format!(
                "{operator} takes [reference, value], got {operand}"
            )),
        }
    };
    let list = |operand: &Value| -> Result<Vec<Condition>, String> {
        operand
            .as_array()
            .filter(|items| !items.is_empty())
            .ok_or_else(|| format!("{operator} takes a non-empty list of conditions"))?
            .iter()
            .map(parse_condition)
            .collect()
    };
    let compare =
        |comparison| pair(operand).map(|(left, right)| Condition::Compare(comparison, left, right));
    match operator.as_str() {
        "$exists" => reference(operand).map(Condition::Exists),
        "$eq" => compare(Comparison::Eq),
        "$ne" => compare(Comparison::Ne),
        "$gt" => compare(Comparison::Gt),
        "$gte" => compare(Comparison::Gte),
        "$lt" => compare(Comparison::Lt),
        "$lte" => compare(Comparison::Lte),
        "$and" => list(operand).map(Condition::And),
        "$or" => list(operand).map(Condition::Or),
        "$not" => parse_condition(operand).map(|inner| Condition::Not(Box::new(inner))),
        other => Err(format!(
            "unknown operator '{other}'; use $exists, $eq, $ne, $gt, $gte, $lt, $lte, $and, $or or $not"
        )),
    }
}

impl Scope<'_> {
    fn holds(&self, condition: &Condition) -> bool {
        match condition {
            Condition::Exists(reference) => {
                self.resolve(reference).is_ok_and(|value| !value.is_null())
            }
            Condition::Compare(comparison, reference, expected) => {
                let Ok(actual) = self.resolve(reference) else {
                    return false;
                };
                let ordering = match (&actual, expected) {
                    (Value::Number(a), Value::Number(b)) => a
                        .as_f64()
                        .zip(b.as_f64())
                        .and_then(|(a, b)| a.partial_cmp(&b)),
                    (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
                    _ => None,
                };
                match comparison {
                    Comparison::Eq => {
                        actual == *expected || ordering == Some(std::cmp::Ordering::Equal)
                    }
                    Comparison::Ne => {
                        actual != *expected && ordering != Some(std::cmp::Ordering::Equal)
                    }
                    Comparison::Gt => ordering.is_some_and(|o| o.is_gt()),
                    Comparison::Gte => ordering.is_some_and(|o| o.is_ge()),
                    Comparison::Lt => ordering.is_some_and(|o| o.is_lt()),
                    Comparison::Lte => ordering.is_some_and(|o| o.is_le()),
                }
            }
            Condition::And(all) => all.iter().all(|inner| self.holds(inner)),
            Condition::Or(any) => any.iter().any(|inner| self.holds(inner)),
            Condition::Not(inner) => !self.holds(inner),
        }
    }
}

// ---- execution --------------------------------------------------------------------------

fn skipped_step(index: usize, step: &PipeStep, message: String, suggestion: &str) -> StepResult {
    StepResult {
        index,
        alias: step.alias.clone(),
        command: step.command.clone(),
        status: StepStatus::Skipped,
        data: None,
        error: Some(CommandError::new(codes::COMMAND_SKIPPED, message).with_suggestion(suggestion)),
        execution_time_ms: 0,
    }
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

/// Runs afd-pipe. Every step goes through [`Dispatcher::call`], so exposure, validation
/// and middleware apply exactly as to afd-call.
pub(crate) async fn run(
    dispatcher: &Dispatcher,
    request: PipeRequest,
    ctx: CommandContext,
) -> PipeResult {
    let started = Instant::now();
    let total = request.steps.len();
    let Checked {
        aliases,
        conditions,
    } = match check(&request, dispatcher.limits().max_pipeline_steps()) {
        Ok(checked) => checked,
        Err(error) => return finish(Vec::new(), Vec::new(), total, started, Some(error)),
    };
    let deadline = request
        .options
        .timeout_ms
        .map(|ms| tokio::time::Instant::now() + Duration::from_millis(ms));
    let pipe_ctx = ctx.child();
    let mut results: Vec<StepResult> = Vec::with_capacity(total);
    let mut extras: Vec<StepExtras> = Vec::with_capacity(total);
    let mut halted: Option<String> = None;

    for (index, step) in request.steps.iter().enumerate() {
        // Steps that did not reach a handler report nothing beside their status.
        extras.resize_with(results.len(), StepExtras::default);
        if let Some(reason) = &halted {
            let suggestion = "Fix the cause, then run the remaining steps again.";
            results.push(skipped_step(index, step, reason.clone(), suggestion));
            continue;
        }
        let scope = Scope {
            index,
            steps: &results,
            aliases: &aliases,
            input: request.input.as_ref(),
        };
        if let Some(condition) = &conditions[index]
            && !scope.holds(condition)
        {
            results.push(skipped_step(
                index,
                step,
                "Not run: its when condition is false".to_owned(),
                "No action needed.",
            ));
            continue;
        }
        let input = match step
            .input
            .as_ref()
            .map(|input| scope.substitute(input))
            .transpose()
        {
            Ok(input) => input.unwrap_or_else(|| Value::Object(Map::new())),
            Err((reference, reason)) => {
                let error = CommandError::new(
                    codes::UNRESOLVED_REFERENCE,
                    format!("Step {index} ('{}'): reference '{reference}' does not resolve: {reason}", step.command),
                )
                .with_suggestion(
                    "Check the reference against the data of the step it names (in steps[n].data), or guard the step with when: {\"$exists\": ...}.",
                )
                .with_retryable(false);
                results.push(StepResult {
                    index,
                    alias: step.alias.clone(),
                    command: step.command.clone(),
                    status: StepStatus::Failure,
                    data: None,
                    error: Some(error),
                    execution_time_ms: 0,
                });
                if !request.options.continue_on_failure {
                    halted = Some(format!("Not run: step {index} failed"));
                }
                continue;
            }
        };
        let step_started = Instant::now();
        let call = dispatcher.call(&step.command, input, pipe_ctx.child());
        let outcome = match deadline {
            Some(deadline) => tokio::time::timeout_at(deadline, call).await.ok(),
            None => Some(call.await),
        };
        let execution_time_ms = step_started.elapsed().as_millis() as u64;
        let Some(result) = outcome else {
            pipe_ctx.cancellation_token().cancel();
            let timeout_ms = request.options.timeout_ms.unwrap_or_default();
            let error = CommandError::new(
                codes::TIMEOUT,
                format!("The pipeline timed out after {timeout_ms} ms during step {index} ('{}'); it was cancelled", step.command),
            )
            .with_suggestion("Raise options.timeoutMs, or run the slow step on its own with afd-call.")
            .with_retryable(true);
            results.push(StepResult {
                index,
                alias: step.alias.clone(),
                command: step.command.clone(),
                status: StepStatus::Failure,
                data: None,
                error: Some(error),
                execution_time_ms,
            });
            halted = Some(format!(
                "Not run: the pipeline timed out after {timeout_ms} ms"
            ));
            continue;
        };
        let succeeded = result.success;
        results.push(StepResult {
            index,
            alias: step.alias.clone(),
            command: step.command.clone(),
            status: if succeeded {
                StepStatus::Success
            } else {
                StepStatus::Failure
            },
            data: if succeeded { result.data.clone() } else { None },
            error: result.error.clone(),
            execution_time_ms,
        });
        extras.push(StepExtras {
            confidence: result.confidence,
            reasoning: result.reasoning,
            warnings: result.warnings,
        });
        if !succeeded && !request.options.continue_on_failure {
            halted = Some(format!("Not run: step {index} ('{}') failed", step.command));
        }
    }
    extras.resize_with(results.len(), StepExtras::default);
    finish(results, extras, total, started, None)
}

/// What a step reported beside its data: confidence, reasoning, warnings.
#[derive(Default)]
struct StepExtras {
    confidence: Option<f64>,
    reasoning: Option<String>,
    warnings: Vec<Warning>,
}

fn finish(
    steps: Vec<StepResult>,
    extras: Vec<StepExtras>,
    total: usize,
    started: Instant,
    error: Option<CommandError>,
) -> PipeResult {
    let mut breakdown = Vec::new();
    let mut reasoning = Vec::new();
    let mut warnings = Vec::new();
    for (step, extra) in steps.iter().zip(&extras) {
        let confidence = match step.status {
            StepStatus::Skipped => continue,
            StepStatus::Failure => 0.0,
            StepStatus::Success => extra.confidence.unwrap_or(1.0),
        };
        breakdown.push(StepConfidence {
            step: step.index,
            alias: step.alias.clone(),
            command: step.command.clone(),
            confidence,
        });
        if let Some(text) = &extra.reasoning {
            reasoning.push(StepReasoning {
                step_index: step.index,
                command: step.command.clone(),
                reasoning: text.clone(),
            });
        }
        warnings.extend(extra.warnings.iter().map(|warning| StepWarning {
            step_index: step.index,
            step_alias: step.alias.clone(),
            code: warning.code.clone(),
            message: warning.message.clone(),
        }));
    }
    let confidence = if error.is_some() {
        0.0
    } else {
        breakdown
            .iter()
            .map(|step| step.confidence)
            .fold(1.0, f64::min)
    };
    let success = error.is_none() && steps.iter().all(|step| step.status != StepStatus::Failure);
    let data = steps
        .iter()
        .rev()
        .find(|step| step.status == StepStatus::Success)
        .and_then(|step| step.data.clone());
    let completed_steps = steps
        .iter()
        .filter(|step| step.status == StepStatus::Success)
        .count();
    PipeResult {
        success,
        data,
        steps,
        error,
        metadata: PipeMetadata {
            confidence,
            confidence_breakdown: breakdown,
            reasoning,
            warnings,
            execution_time_ms: started.elapsed().as_millis() as u64,
            completed_steps,
            total_steps: total,
        },
    }
}
