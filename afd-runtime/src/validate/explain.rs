//! Explaining JSON Schema violations to an agent: [`InputValidator`] checks an input
//! against a command's compiled input schema and turns every violation into a
//! [`Violation`] whose message names the field (`Required field 'email' is missing`), and
//! [`validation_failure`] makes the `VALIDATION_ERROR` that lists them.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::LocationSegment;
use serde_json::{Value, json};

use crate::error::{CommandError, codes};

/// At most this many violations are reported in one error.
const MAX_VIOLATIONS: usize = 20;

/// One way the input breaks the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer to the offending value (`""` for the input itself).
    pub pointer: String,
    /// The schema keyword that failed (`required`, `minLength`, ...).
    pub keyword: String,
    /// A sentence saying what is wrong, naming the field.
    pub message: String,
}

/// A command's input schema, compiled once.
pub struct InputValidator {
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for InputValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InputValidator").finish_non_exhaustive()
    }
}

impl InputValidator {
    /// Compiles a schema.
    ///
    /// # Errors
    ///
    /// The schema is not a valid JSON Schema.
    pub fn new(schema: &Value) -> Result<Self, String> {
        jsonschema::validator_for(schema)
            .map(|validator| InputValidator { validator })
            .map_err(|error| error.to_string())
    }

    /// Every violation of the schema by `input` (at most 20), in schema order.
    pub fn violations(&self, input: &Value) -> Vec<Violation> {
        let mut violations: Vec<Violation> = self
            .validator
            .iter_errors(input)
            .flat_map(|error| explain(&error))
            .collect();
        violations.truncate(MAX_VIOLATIONS);
        violations
    }

    /// Checks `input` for the command `command`.
    ///
    /// # Errors
    ///
    /// `VALIDATION_ERROR` naming every violation, with the afd-detail suggestion.
    pub fn validate(&self, command: &str, input: &Value) -> Result<(), CommandError> {
        if self.validator.is_valid(input) {
            return Ok(());
        }
        Err(validation_failure(command, &self.violations(input)))
    }
}

/// One schema error as violations. A failed `anyOf` / `oneOf` is explained by the branch
/// whose type fits the value (its own errors), or else by the types the branches accept.
fn explain(error: &jsonschema::ValidationError<'_>) -> Vec<Violation> {
    let pointer = error.instance_path().as_str().to_owned();
    let field = field_name(error.instance_path().segments());
    let branches = match error.kind() {
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            Some(context)
        }
        _ => None,
    };
    if let Some(branches) = branches {
        let type_mismatch = |e: &jsonschema::ValidationError<'_>| {
            e.instance_path().as_str() == pointer
                && matches!(e.kind(), ValidationErrorKind::Type { .. })
        };
        let fitting: Vec<&Vec<jsonschema::ValidationError<'static>>> = branches
            .iter()
            .filter(|branch| !branch.iter().any(&type_mismatch))
            .collect();
        if let [branch] = fitting.as_slice() {
            return branch.iter().flat_map(|e| explain(e)).collect();
        }
        let mut expected: Vec<String> = Vec::new();
        for branch in branches {
            for e in branch.iter().filter(|e| type_mismatch(e)) {
                if let ValidationErrorKind::Type { kind } = e.kind() {
                    let name = type_names(kind);
                    if !expected.contains(&name) {
                        expected.push(name);
                    }
                }
            }
        }
        if !expected.is_empty() {
            let subject = if field.is_empty() {
                "Input".to_owned()
            } else {
                format!("Field '{field}'")
            };
            let message = format!("{subject} must be {}", with_article(&expected.join(" or ")));
            let keyword = error.kind().keyword().to_owned();
            return vec![Violation {
                pointer,
                keyword,
                message,
            }];
        }
    }
    let keyword = error.kind().keyword().to_owned();
    let message = describe(&field, error.kind(), &error.to_string());
    vec![Violation {
        pointer,
        keyword,
        message,
    }]
}

fn type_names(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(ty) => ty.to_string(),
        TypeKind::Multiple(set) => set
            .iter()
            .map(|ty| ty.to_string())
            .collect::<Vec<_>>()
            .join(" or "),
    }
}

/// The `VALIDATION_ERROR` for a command's violations:
/// `Invalid input for 'user-create': Required field 'email' is missing`.
pub(crate) fn validation_failure(command: &str, violations: &[Violation]) -> CommandError {
    let summary: Vec<&str> = violations.iter().map(|v| v.message.as_str()).collect();
    let details: Vec<Value> = violations
        .iter()
        .map(|v| json!({"path": v.pointer, "keyword": v.keyword, "message": v.message}))
        .collect();
    CommandError::new(
        codes::VALIDATION_ERROR,
        format!("Invalid input for '{command}': {}", summary.join("; ")),
    )
    .with_suggestion(format!(
        "Call afd-detail with command '{command}' to see the expected input schema."
    ))
    .with_retryable(false)
    .with_details(json!({ "errors": details }))
}

/// `address.lines[0]` for the pointer `/address/lines/0`; `input` for the root.
fn field_name<'a>(segments: impl Iterator<Item = LocationSegment<'a>>) -> String {
    let mut name = String::new();
    for segment in segments {
        match segment {
            LocationSegment::Property(property) => {
                if !name.is_empty() {
                    name.push('.');
                }
                name.push_str(&property);
            }
            LocationSegment::Index(index) => {
                name.push('[');
                name.push_str(&index.to_string());
                name.push(']');
            }
        }
    }
    name
}

fn join_field(parent: &str, child: &str) -> String {
    if parent.is_empty() {
        child.to_owned()
    } else {
        format!("{parent}.{child}")
    }
}

fn describe(field: &str, kind: &ValidationErrorKind, fallback: &str) -> String {
    let subject = if field.is_empty() {
        "Input".to_owned()
    } else {
        format!("Field '{field}'")
    };
    match kind {
        ValidationErrorKind::Required { property } => {
            let property = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            format!(
                "Required field '{}' is missing",
                join_field(field, &property)
            )
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let names: Vec<String> = unexpected
                .iter()
                .map(|name| format!("'{}'", join_field(field, name)))
                .collect();
            format!("Unknown field {} is not allowed", names.join(", "))
        }
        ValidationErrorKind::Type { kind } => {
            let expected = type_names(kind);
            format!("{subject} must be {}", with_article(&expected))
        }
        ValidationErrorKind::MinLength { limit } => {
            format!(
                "{subject} must be at least {limit} character{} long",
                plural(*limit)
            )
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!(
                "{subject} must be at most {limit} character{} long",
                plural(*limit)
            )
        }
        ValidationErrorKind::Minimum { limit } => format!("{subject} must be >= {limit}"),
        ValidationErrorKind::Maximum { limit } => format!("{subject} must be <= {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => format!("{subject} must be > {limit}"),
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("{subject} must be < {limit}"),
        ValidationErrorKind::MinItems { limit } => {
            format!(
                "{subject} must have at least {limit} item{}",
                plural(*limit)
            )
        }
        ValidationErrorKind::MaxItems { limit } => {
            format!("{subject} must have at most {limit} item{}", plural(*limit))
        }
        ValidationErrorKind::Enum { options } => {
            let options = match options.as_array() {
                Some(values) => values
                    .iter()
                    .map(Value::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                None => options.to_string(),
            };
            format!("{subject} must be one of {options}")
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("{subject} must be {expected_value}")
        }
        ValidationErrorKind::Pattern { pattern } => {
            format!("{subject} must match the pattern `{pattern}`")
        }
        ValidationErrorKind::Format { format } => format!("{subject} must be a valid {format}"),
        _ => format!("{subject}: {fallback}"),
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn with_article(ty: &str) -> String {
    match ty.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => format!("an {ty}"),
        Some(_) if ty != "null" => format!("a {ty}"),
        _ => ty.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validator() -> InputValidator {
        InputValidator::new(&json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "email": {"type": "string"},
                "age": {"type": "integer", "minimum": 0, "maximum": 150},
                "role": {"enum": ["admin", "user"]},
                "address": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"]
                }
            },
            "required": ["name", "email"]
        }))
        .unwrap()
    }

    #[test]
    fn missing_field_reads_like_the_spec() {
        let err = validator()
            .validate("user-create", &json!({"name": "Alice"}))
            .unwrap_err();
        assert_eq!(err.code, codes::VALIDATION_ERROR);
        assert_eq!(
            err.message,
            "Invalid input for 'user-create': Required field 'email' is missing"
        );
        assert_eq!(
            err.suggestion.as_deref(),
            Some("Call afd-detail with command 'user-create' to see the expected input schema.")
        );
    }

    #[test]
    fn every_violation_is_reported_with_its_pointer() {
        let input = json!({"name": "", "email": 3, "age": 200, "role": "root", "address": {}});
        let violations = validator().violations(&input);
        let pointers: Vec<&str> = violations.iter().map(|v| v.pointer.as_str()).collect();
        for expected in ["/name", "/email", "/age", "/role", "/address"] {
            assert!(
                pointers.contains(&expected),
                "{expected} missing from {pointers:?}"
            );
        }
        let messages: Vec<&str> = violations.iter().map(|v| v.message.as_str()).collect();
        assert!(messages.contains(&"Field 'name' must be at least 1 character long"));
        assert!(messages.contains(&"Field 'email' must be a string"));
        assert!(messages.contains(&"Field 'age' must be <= 150"));
        assert!(messages.contains(&"Required field 'address.city' is missing"));
        assert!(messages.contains(&"Field 'role' must be one of \"admin\", \"user\""));
    }

    #[test]
    fn any_of_is_explained_by_the_branch_that_fits_or_by_the_types_it_wanted() {
        let one_or_many = InputValidator::new(&json!({
            "type": "object",
            "properties": {"tag": {"anyOf": [
                {"type": "string", "minLength": 1},
                {"type": "array", "items": {"type": "string"}, "maxItems": 2}
            ]}}
        }))
        .unwrap();
        let messages = |input: Value| -> Vec<String> {
            one_or_many
                .violations(&input)
                .into_iter()
                .map(|v| v.message)
                .collect()
        };
        assert_eq!(
            messages(json!({"tag": ["a", "b", "c"]})),
            ["Field 'tag' must have at most 2 items"]
        );
        assert_eq!(
            messages(json!({"tag": ""})),
            ["Field 'tag' must be at least 1 character long"]
        );
        assert_eq!(
            messages(json!({"tag": 5})),
            ["Field 'tag' must be a string or array"]
        );
        assert_eq!(
            messages(json!({"tag": [1]})),
            ["Field 'tag[0]' must be a string"]
        );
    }
}
