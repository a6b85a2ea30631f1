//! afd-batch: several commands in one request, with partial success.
//!
//! One failing command never fails the batch; `stopOnError` skips what has not started
//! (counted as skipped, not failed); `parallelism` runs up to N commands at once while
//! results keep input order; `timeoutMs` cancels what is still running (`BATCH_TIMEOUT`).

use std::collections::HashSet;
use std::time::{Duration, Instant, SystemTime};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::command_context::CommandContext;
use crate::dispatch::CallPath;
use crate::error::{CommandError, codes};
use crate::result::{CommandResult, Metadata};
use crate::text::iso8601;

/// An afd-batch request.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BatchRequest {
    /// The commands to run.
    pub commands: Vec<BatchCommand>,
    /// How to run them.
    #[serde(default)]
    pub options: BatchOptions,
}

/// One command of a batch.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchCommand {
    /// An id to find the result by (default `cmd-<index>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The command name.
    pub command: String,
    /// The command's input (default `{}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
}

/// How a batch runs.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BatchOptions {
    /// Skip the commands not yet started once one fails.
    #[serde(default)]
    pub stop_on_error: bool,
    /// Cancel what is still running after this many milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// How many commands may run at once (default 1: in order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<usize>,
}

/// The result of one batch command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchEntry {
    /// The command's id.
    pub id: String,
    /// Its position in the request.
    pub index: usize,
    /// The command name.
    pub command: String,
    /// What it returned (or why it did not run).
    pub result: CommandResult<Value>,
    /// How long it ran.
    pub duration_ms: u64,
}

impl BatchEntry {
    /// Whether the command was skipped rather than run.
    pub fn is_skipped(&self) -> bool {
        self.result
            .error
            .as_ref()
            .is_some_and(|error| error.is(codes::COMMAND_SKIPPED))
    }
}

/// Counts of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchSummary {
    /// Commands requested.
    pub total: usize,
    /// Commands that succeeded.
    pub success_count: usize,
    /// Commands that ran and failed.
    pub failure_count: usize,
    /// Commands not run.
    pub skipped_count: usize,
}

/// When a batch ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchTiming {
    /// Wall-clock time of the whole batch.
    pub total_ms: u64,
    /// Mean time of the commands that ran.
    pub average_ms: f64,
    /// Start, ISO 8601.
    pub started_at: String,
    /// End, ISO 8601.
    pub completed_at: String,
}

/// A warning of one batch command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchWarning {
    /// The command's id.
    pub command_id: String,
    /// Warning code.
    pub code: String,
    /// Warning text.
    pub message: String,
}

/// The result of afd-batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchResult {
    /// Whether the batch ran (false only for an invalid request).
    pub success: bool,
    /// One entry per requested command, in request order.
    pub results: Vec<BatchEntry>,
    /// Counts.
    pub summary: BatchSummary,
    /// Timing.
    pub timing: BatchTiming,
    /// Half the success ratio plus half the mean confidence of the successes.
    pub confidence: f64,
    /// What happened, in one line.
    pub reasoning: String,
    /// Warnings of the commands.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<BatchWarning>,
    /// Why the batch did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<CommandError>,
    /// Execution metadata.
    pub metadata: Metadata,
}

fn elapsed_ms(since: Instant) -> u64 {
    since.elapsed().as_millis() as u64
}

fn skipped(reason: String, suggestion: &str) -> CommandResult<Value> {
    CommandResult::failure(
        CommandError::new(codes::COMMAND_SKIPPED, reason).with_suggestion(suggestion),
    )
}

fn invalid(message: String, suggestion: &str) -> CommandError {
    CommandError::new(codes::INVALID_BATCH_REQUEST, message)
        .with_suggestion(suggestion)
        .with_retryable(false)
}

impl BatchRequest {
    /// Reads a request from afd-batch's JSON input.
    ///
    /// # Errors
    ///
    /// `INVALID_BATCH_REQUEST` naming the path of the mistake.
    pub fn from_value(input: Value) -> Result<Self, CommandError> {
        serde_path_to_error::deserialize(input).map_err(|error| {
            invalid(
                format!("Invalid batch request at '{}': {}", error.path(), error.inner()),
                "Send {commands: [{command, input?, id?}], options?: {stopOnError?, timeoutMs?, parallelism?}}.",
            )
        })
    }
}

/// Runs afd-batch. Every command goes through [`CallPath::call`], so exposure, validation
/// and middleware apply to each exactly as to afd-call.
pub(crate) async fn run<P: CallPath>(
    path: &P,
    request: BatchRequest,
    ctx: CommandContext,
) -> BatchResult {
    let started = Instant::now();
    let started_at = SystemTime::now();
    let limits = path.limits();
    let total = request.commands.len();
    if total == 0 || total > limits.max_batch_len() {
        let message = if total == 0 {
            "The batch has no commands".to_owned()
        } else {
            format!(
                "The batch has {total} commands; at most {} are allowed",
                limits.max_batch_len()
            )
        };
        let suggestion = "Send between 1 and the allowed number of commands; split larger work into several batches.";
        return failed_batch(invalid(message, suggestion), started, started_at);
    }
    let parallelism = request
        .options
        .parallelism
        .unwrap_or(1)
        .clamp(1, limits.max_parallelism());
    let deadline = request
        .options
        .timeout_ms
        .map(|ms| tokio::time::Instant::now() + Duration::from_millis(ms));
    let stop_on_error = request.options.stop_on_error;

    let mut slots: Vec<Option<BatchEntry>> = vec![None; total];
    let ids: Vec<String> = request
        .commands
        .iter()
        .enumerate()
        .map(|(index, command)| command.id.clone().unwrap_or_else(|| format!("cmd-{index}")))
        .collect();
    let names: Vec<String> = request
        .commands
        .iter()
        .map(|command| command.command.clone())
        .collect();
    // Every command runs under a child of this token, so a timeout can cancel them all.
    let batch_ctx = ctx.child();
    let mut commands = request.commands.into_iter().enumerate();
    let mut running: FuturesUnordered<_> = FuturesUnordered::new();
    let mut in_flight: HashSet<usize> = HashSet::new();
    let mut stopped_by: Option<usize> = None;
    let mut timed_out = false;

    loop {
        while stopped_by.is_none() && running.len() < parallelism {
            let Some((index, command)) = commands.next() else {
                break;
            };
            let child = batch_ctx.child();
            in_flight.insert(index);
            running.push(async move {
                let started = Instant::now();
                let input = command
                    .input
                    .unwrap_or_else(|| Value::Object(Default::default()));
                let result = path.call(&command.command, input, child).await;
                (index, command.command, result, elapsed_ms(started))
            });
        }
        if running.is_empty() {
            break;
        }
        let next = match deadline {
            Some(deadline) => match tokio::time::timeout_at(deadline, running.next()).await {
                Ok(next) => next,
                Err(_) => {
                    timed_out = true;
                    break;
                }
            },
            None => running.next().await,
        };
        let Some((index, command, result, duration_ms)) = next else {
            break;
        };
        in_flight.remove(&index);
        if stop_on_error && !result.success && stopped_by.is_none() {
            stopped_by = Some(index);
        }
        slots[index] = Some(BatchEntry {
            id: ids[index].clone(),
            index,
            command,
            result,
            duration_ms,
        });
    }
    // Dropping the futures stops what still runs; cancelling the token tells handlers
    // (and anything they spawned) that watch it.
    drop(running);
    if timed_out {
        batch_ctx.cancellation_token().cancel();
    }

    let timeout_ms = request.options.timeout_ms.unwrap_or_default();
    let leftovers: Vec<usize> = commands.map(|(index, _)| index).collect();
    let mut unfinished: Vec<usize> = in_flight.into_iter().collect();
    unfinished.sort_unstable();
    for index in unfinished {
        let error = CommandError::new(
            codes::BATCH_TIMEOUT,
            format!("The batch timed out after {timeout_ms} ms while this command was running; it was cancelled"),
        )
        .with_suggestion("Raise options.timeoutMs, or run the slow command on its own with afd-call.")
        .with_retryable(true);
        slots[index] = Some(BatchEntry {
            id: ids[index].clone(),
            index,
            command: names[index].clone(),
            result: CommandResult::failure(error),
            duration_ms: elapsed_ms(started),
        });
    }
    for index in leftovers {
        let command = names[index].clone();
        let result = if timed_out {
            skipped(
                format!("Not run: the batch timed out after {timeout_ms} ms"),
                "Raise options.timeoutMs or send the remaining commands in a new batch.",
            )
        } else {
            let culprit = stopped_by.map_or_else(String::new, |i| ids[i].clone());
            skipped(
                format!("Not run: command '{culprit}' failed and stopOnError is set"),
                "Fix the failed command, then send the skipped commands again.",
            )
        };
        slots[index] = Some(BatchEntry {
            id: ids[index].clone(),
            index,
            command,
            result,
            duration_ms: 0,
        });
    }

    let results: Vec<BatchEntry> = slots
        .into_iter()
        .map(|slot| slot.expect("every slot is filled"))
        .collect();
    finish(results, started, started_at)
}

fn failed_batch(error: CommandError, started: Instant, started_at: SystemTime) -> BatchResult {
    let reasoning = format!("Batch execution failed: {}", error.message);
    BatchResult {
        success: false,
        results: Vec::new(),
        summary: BatchSummary {
            total: 0,
            success_count: 0,
            failure_count: 0,
            skipped_count: 0,
        },
        timing: BatchTiming {
            total_ms: elapsed_ms(started),
            average_ms: 0.0,
            started_at: iso8601(started_at),
            completed_at: iso8601(SystemTime::now()),
        },
        confidence: 0.0,
        reasoning,
        warnings: Vec::new(),
        error: Some(error),
        metadata: Metadata {
            execution_time_ms: Some(elapsed_ms(started)),
            ..Metadata::default()
        },
    }
}

fn finish(results: Vec<BatchEntry>, started: Instant, started_at: SystemTime) -> BatchResult {
    let total = results.len();
    let skipped_count = results.iter().filter(|entry| entry.is_skipped()).count();
    let success_count = results.iter().filter(|entry| entry.result.success).count();
    let failure_count = total - success_count - skipped_count;
    let summary = BatchSummary {
        total,
        success_count,
        failure_count,
        skipped_count,
    };

    let ran: Vec<&BatchEntry> = results.iter().filter(|entry| !entry.is_skipped()).collect();
    let average_ms = if ran.is_empty() {
        0.0
    } else {
        ran.iter()
            .map(|entry| entry.duration_ms as f64)
            .sum::<f64>()
            / ran.len() as f64
    };
    let successes: Vec<f64> = results
        .iter()
        .filter(|entry| entry.result.success)
        .map(|entry| entry.result.confidence.unwrap_or(1.0))
        .collect();
    let mean_confidence = if successes.is_empty() {
        0.0
    } else {
        successes.iter().sum::<f64>() / successes.len() as f64
    };
    let confidence = (success_count as f64 / total as f64) * 0.5 + mean_confidence * 0.5;

    let warnings = results
        .iter()
        .flat_map(|entry| {
            entry.result.warnings.iter().map(|warning| BatchWarning {
                command_id: entry.id.clone(),
                code: warning.code.clone(),
                message: warning.message.clone(),
            })
        })
        .collect();
    let total_ms = elapsed_ms(started);
    BatchResult {
        success: true,
        reasoning: reasoning(&summary),
        results,
        summary,
        timing: BatchTiming {
            total_ms,
            average_ms,
            started_at: iso8601(started_at),
            completed_at: iso8601(SystemTime::now()),
        },
        confidence,
        warnings,
        error: None,
        metadata: Metadata {
            execution_time_ms: Some(total_ms),
            ..Metadata::default()
        },
    }
}

fn reasoning(summary: &BatchSummary) -> String {
    let plural = if summary.total == 1 { "" } else { "s" };
    let head = format!("Executed {} command{plural}", summary.total);
    if summary.success_count == summary.total {
        return format!("{head}: all succeeded");
    }
    let mut parts = Vec::new();
    if summary.success_count > 0 {
        parts.push(format!("{} succeeded", summary.success_count));
    }
    if summary.failure_count > 0 {
        parts.push(format!("{} failed", summary.failure_count));
    }
    if summary.skipped_count > 0 {
        parts.push(format!("{} skipped", summary.skipped_count));
    }
    format!("{head}: {}", parts.join(", "))
}
