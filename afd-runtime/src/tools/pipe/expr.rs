//! The reference and condition language of afd-pipe, parsed and evaluated against the
//! steps that already ran.
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

use serde_json::{Map, Value};

use super::{StepResult, StepStatus};
use crate::text::json_kind;

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

/// A parsed reference: where it starts, then the path into that value.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Reference {
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
pub(super) struct Scope<'a> {
    /// The position of the step about to run.
    pub(super) index: usize,
    /// The results of the steps before it.
    pub(super) steps: &'a [StepResult],
    /// Step aliases, to their positions.
    pub(super) aliases: &'a HashMap<String, usize>,
    /// The pipeline's own input.
    pub(super) input: Option<&'a Value>,
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
                        json_kind(other),
                        at(&reference.path[..depth])
                    ));
                }
            };
        }
        Ok(length.map_or_else(|| current.clone(), Value::from))
    }

    /// Replaces every reference in `input`.
    pub(super) fn substitute(&self, input: &Value) -> Result<Value, (String, String)> {
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

// ---- conditions -------------------------------------------------------------------------

/// A parsed `when` condition.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Condition {
    Exists(Reference),
    Compare(Comparison, Reference, Value),
    And(Vec<Condition>),
    Or(Vec<Condition>),
    Not(Box<Condition>),
}

/// The comparison operators of a condition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Comparison {
    Eq,
    Ne,
    Gt,
    Gte,
    Lt,
    Lte,
}

/// Parses a `when` condition.
pub(super) fn parse_condition(value: &Value) -> Result<Condition, String> {
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
    /// Whether `condition` holds given the steps that ran.
    pub(super) fn holds(&self, condition: &Condition) -> bool {
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
