//! The afd-pipe executor: runs the steps in order on the call path, substituting
//! references, skipping steps whose `when` is false and stopping at a failure or the
//! timeout, then gathers the steps' confidence, reasoning and warnings into the result.

use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::expr::Scope;
use super::{
    Checked, PipeMetadata, PipeRequest, PipeResult, PipeStep, StepConfidence, StepReasoning,
    StepResult, StepStatus, StepWarning, check,
};
use crate::command_context::CommandContext;
use crate::dispatch::CallPath;
use crate::error::{CommandError, codes};
use crate::result::Warning;

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

/// A step that failed before or instead of returning a result (a reference that did not
/// resolve, the pipeline's deadline).
fn failed_step(
    index: usize,
    step: &PipeStep,
    error: CommandError,
    execution_time_ms: u64,
) -> StepResult {
    StepResult {
        index,
        alias: step.alias.clone(),
        command: step.command.clone(),
        status: StepStatus::Failure,
        data: None,
        error: Some(error),
        execution_time_ms,
    }
}

/// Runs afd-pipe. Every step goes through [`CallPath::call`], so exposure, validation and
/// middleware apply exactly as to afd-call.
pub(crate) async fn run<P: CallPath>(
    path: &P,
    request: PipeRequest,
    ctx: CommandContext,
) -> PipeResult {
    let started = Instant::now();
    let total = request.steps.len();
    let Checked {
        aliases,
        conditions,
    } = match check(&request, path.limits().max_pipeline_steps()) {
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
                results.push(failed_step(index, step, error, 0));
                if !request.options.continue_on_failure {
                    halted = Some(format!("Not run: step {index} failed"));
                }
                continue;
            }
        };
        let step_started = Instant::now();
        let call = path.call(&step.command, input, pipe_ctx.child());
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
            results.push(failed_step(index, step, error, execution_time_ms));
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
