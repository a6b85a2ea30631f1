//! A command's flags, from its JSON input schema, and its JSON input back from the parsed
//! flags. Public so that a command-line client of any MCP server (whose tools come with an
//! input schema) builds the same flags as an app's own command line.
//!
//! Each property of the schema becomes `--kebab-name`: strings, integers, numbers and
//! booleans (`--done`, `--done false`) are checked by clap; an enumeration lists its values;
//! an array is a repeated flag; an object (or anything else) is JSON. Required properties
//! are required flags, unless the whole input is given as JSON with [`INPUT_JSON`] or
//! [`INPUT_FILE`] (flags given next to it override its fields).
//!
//! ```
//! use afd_runtime::cli::flags::Flags;
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {
//!         "orderId": {"type": "integer", "description": "The order."},
//!         "tags": {"type": "array", "items": {"type": "string"}}
//!     },
//!     "required": ["orderId"]
//! });
//! let flags = Flags::from_schema(&schema, &[]);
//! let command = flags.apply(clap::Command::new("order-get"));
//! let matches = command
//!     .try_get_matches_from(["order-get", "--order-id", "7", "--tags", "a", "--tags", "b"])
//!     .unwrap();
//! assert_eq!(flags.input(&matches).unwrap(), json!({"orderId": 7, "tags": ["a", "b"]}));
//! ```

use std::io::Read as _;
use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser as _, ValueParser};
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::{Map, Value};

use crate::error::CommandError;

/// The flag (and argument id) that takes the whole input as JSON text. Spelled so that it
/// does not collide with a schema property: a property called `input` is `--input`.
pub const INPUT_JSON: &str = "input-json";

/// The flag (and argument id) that takes the whole input as a JSON file (`-`: standard
/// input).
pub const INPUT_FILE: &str = "input-file";

/// The heading of the input flags in help.
const INPUT_HEADING: &str = "Input as JSON";

/// The names no property may take as its flag: clap's own and the input flags.
const ALWAYS_RESERVED: [&str; 4] = ["help", "version", INPUT_JSON, INPUT_FILE];

/// What values a flag takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Text.
    String,
    /// A whole number.
    Integer,
    /// A number.
    Number,
    /// `true` or `false`; the bare flag means `true`.
    Boolean,
    /// One of these strings.
    Enum(Vec<String>),
    /// A JSON value (objects, unions); text that is not JSON is taken as a string.
    Json,
    /// A repeated flag, each value of the inner kind.
    Array(Box<Kind>),
}

impl Kind {
    /// The placeholder shown in help: `STRING`, `INT`, `NUMBER`, `BOOL`, `JSON`.
    pub fn label(&self) -> &'static str {
        match self {
            Kind::String | Kind::Enum(_) => "STRING",
            Kind::Integer => "INT",
            Kind::Number => "NUMBER",
            Kind::Boolean => "BOOL",
            Kind::Json => "JSON",
            Kind::Array(inner) => inner.label(),
        }
    }

    /// A readable name of the type: `string`, `integer`, `one of a, b`, `list of string`.
    pub fn describe(&self) -> String {
        match self {
            Kind::String => "string".into(),
            Kind::Integer => "integer".into(),
            Kind::Number => "number".into(),
            Kind::Boolean => "boolean".into(),
            Kind::Enum(values) => format!("one of {}", values.join(", ")),
            Kind::Json => "JSON".into(),
            Kind::Array(inner) => format!("list of {}", inner.describe()),
        }
    }

    /// Parses one value given on the command line.
    fn parse(&self, text: &str) -> Result<Value, String> {
        match self {
            Kind::String | Kind::Enum(_) => Ok(Value::String(text.to_owned())),
            Kind::Integer => text
                .trim()
                .parse::<i64>()
                .map(Value::from)
                .or_else(|_| text.trim().parse::<u64>().map(Value::from))
                .map_err(|_| format!("'{text}' is not an integer")),
            Kind::Number => {
                let trimmed = text.trim();
                if let Ok(int) = trimmed.parse::<i64>() {
                    return Ok(Value::from(int));
                }
                trimmed
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map(Value::Number)
                    .ok_or_else(|| format!("'{text}' is not a number"))
            }
            Kind::Boolean => match text.trim().to_ascii_lowercase().as_str() {
                "true" | "yes" | "1" => Ok(Value::Bool(true)),
                "false" | "no" | "0" => Ok(Value::Bool(false)),
                _ => Err(format!("'{text}' is not a boolean (true or false)")),
            },
            Kind::Json => {
                Ok(serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned())))
            }
            Kind::Array(inner) => inner.parse(text),
        }
    }
}

/// One property that got a flag.
#[derive(Debug, Clone)]
pub struct Field {
    /// The property's name in the schema (the key of the JSON input).
    pub name: String,
    /// The flag, without the leading `--`.
    pub long: String,
    /// What values it takes.
    pub kind: Kind,
    /// Whether the schema requires it.
    pub required: bool,
    /// The property's description.
    pub description: Option<String>,
    /// The property's default, shown in help.
    pub default: Option<Value>,
}

/// The flags of one command (or tool), from its input schema.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    fields: Vec<Field>,
    skipped: Vec<String>,
}

impl Flags {
    /// The flags for `schema`'s properties. A property whose flag would be one of
    /// `reserved` (the command line's own flags, such as `json` or `yes`), `help`,
    /// `version` or an input flag gets none: it can still be given in the JSON input.
    pub fn from_schema(schema: &Value, reserved: &[&str]) -> Flags {
        let mut flags = Flags::default();
        let root = schema;
        let schema = resolve(root, schema);
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            return flags;
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, property) in properties {
            let long = kebab(name);
            let taken = ALWAYS_RESERVED.contains(&long.as_str())
                || reserved.contains(&long.as_str())
                || flags.fields.iter().any(|field| field.long == long);
            if taken || long.is_empty() {
                flags.skipped.push(name.clone());
                continue;
            }
            let resolved = resolve(root, property);
            let description = property
                .get("description")
                .or_else(|| resolved.get("description"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            let default = property
                .get("default")
                .or_else(|| resolved.get("default"))
                .cloned();
            flags.fields.push(Field {
                name: name.clone(),
                long,
                kind: kind_of(root, property),
                required: required.contains(&name.as_str()),
                description,
                default,
            });
        }
        flags
    }

    /// The properties that got a flag, in schema order.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The properties that got no flag (their flag name was taken): JSON input only.
    pub fn skipped(&self) -> &[String] {
        &self.skipped
    }

    /// The clap arguments: one per field, then [`INPUT_JSON`] and [`INPUT_FILE`].
    pub fn args(&self) -> Vec<Arg> {
        let mut args: Vec<Arg> = self.fields.iter().map(field_arg).collect();
        args.push(
            Arg::new(INPUT_JSON)
                .long(INPUT_JSON)
                .value_name("JSON")
                .help("The whole input as a JSON object (flags given too override its fields)")
                .help_heading(INPUT_HEADING)
                .conflicts_with(INPUT_FILE),
        );
        args.push(
            Arg::new(INPUT_FILE)
                .long(INPUT_FILE)
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help("The whole input from a JSON file ('-': standard input)")
                .help_heading(INPUT_HEADING),
        );
        args
    }

    /// `command` with these flags added.
    pub fn apply(&self, command: Command) -> Command {
        command.args(self.args())
    }

    /// The JSON input from parsed flags: the JSON of [`INPUT_JSON`] or [`INPUT_FILE`] if
    /// given, then every flag given on the command line.
    ///
    /// # Errors
    ///
    /// `VALIDATION_ERROR` when the JSON input is not a JSON object, or the input file
    /// cannot be read.
    pub fn input(&self, matches: &ArgMatches) -> Result<Value, CommandError> {
        let mut input = Map::new();
        let whole = if let Some(text) = matches.try_get_one::<String>(INPUT_JSON).ok().flatten() {
            Some(parse_object(text, &format!("--{INPUT_JSON}"))?)
        } else if let Some(path) = matches.try_get_one::<PathBuf>(INPUT_FILE).ok().flatten() {
            let text = read_input(path)?;
            Some(parse_object(&text, &path.display().to_string())?)
        } else {
            None
        };
        if let Some(whole) = whole {
            input = whole;
        }
        for field in &self.fields {
            if matches.value_source(&field.name) != Some(ValueSource::CommandLine) {
                continue;
            }
            let value = match field.kind {
                Kind::Array(_) => Value::Array(
                    matches
                        .get_many::<Value>(&field.name)
                        .map(|values| values.cloned().collect())
                        .unwrap_or_default(),
                ),
                _ => match matches.get_one::<Value>(&field.name) {
                    Some(value) => value.clone(),
                    None => continue,
                },
            };
            input.insert(field.name.clone(), value);
        }
        Ok(Value::Object(input))
    }
}

/// Reads a file, or standard input for `-`.
///
/// # Errors
///
/// `VALIDATION_ERROR` naming the file when it cannot be read.
pub fn read_input(path: &std::path::Path) -> Result<String, CommandError> {
    let mut text = String::new();
    let read = if path.as_os_str() == "-" {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::read_to_string(path).map(|read| text = read)
    };
    read.map_err(|error| {
        CommandError::validation(format!("cannot read {}: {error}", path.display()))
            .with_suggestion("Give a readable JSON file, or '-' for standard input")
    })?;
    Ok(text)
}

fn parse_object(text: &str, source: &str) -> Result<Map<String, Value>, CommandError> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(CommandError::validation(format!(
            "the input in {source} must be a JSON object, not {}",
            crate::text::json_kind(&other)
        ))
        .with_suggestion("Give an object such as {\"limit\": 5}")),
        Err(error) => Err(CommandError::validation(format!(
            "the input in {source} is not valid JSON: {error}"
        ))
        .with_suggestion("Give an object such as {\"limit\": 5}")),
    }
}

fn field_arg(field: &Field) -> Arg {
    let mut help = field.description.clone().unwrap_or_default();
    if let Some(default) = &field.default {
        let shown = match default {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        if !help.is_empty() {
            help.push(' ');
        }
        help.push_str(&format!("[default: {shown}]"));
    }
    let mut arg = Arg::new(field.name.clone())
        .long(field.long.clone())
        .help(help)
        .value_name(field.kind.label());
    if field.required {
        arg = arg.required_unless_present_any([INPUT_JSON, INPUT_FILE]);
    }
    let element = match &field.kind {
        Kind::Array(inner) => {
            arg = arg.action(ArgAction::Append);
            inner.as_ref()
        }
        other => {
            arg = arg.action(ArgAction::Set);
            other
        }
    };
    if *element == Kind::Boolean && !matches!(field.kind, Kind::Array(_)) {
        arg = arg
            .num_args(0..=1)
            .default_missing_value("true")
            .value_name("BOOL");
    }
    arg.value_parser(parser(element))
}

fn parser(kind: &Kind) -> ValueParser {
    match kind {
        Kind::Enum(values) => ValueParser::new(
            PossibleValuesParser::new(values.iter().map(|value| {
                clap::builder::PossibleValue::new(clap::builder::Str::from(value.clone()))
            }))
            .map(Value::String),
        ),
        other => {
            let kind = other.clone();
            ValueParser::new(move |text: &str| kind.parse(text))
        }
    }
}

/// Follows a local `$ref` (`#/$defs/...`, `#/definitions/...`), and a lone `allOf`.
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    let mut current = schema;
    for _ in 0..8 {
        if let Some(reference) = current.get("$ref").and_then(Value::as_str) {
            let Some(pointer) = reference.strip_prefix('#') else {
                return current;
            };
            match root.pointer(pointer) {
                Some(target) => current = target,
                None => return current,
            }
        } else if let Some([only]) = current
            .get("allOf")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            current = only;
        } else {
            return current;
        }
    }
    current
}

fn kind_of(root: &Value, schema: &Value) -> Kind {
    let schema = resolve(root, schema);
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let strings: Option<Vec<String>> = values
            .iter()
            .filter(|value| !value.is_null())
            .map(|value| value.as_str().map(str::to_owned))
            .collect();
        return strings.map_or(Kind::Json, Kind::Enum);
    }
    if let Some(constant) = schema.get("const").and_then(Value::as_str) {
        return Kind::Enum(vec![constant.to_owned()]);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(variants) = schema.get(key).and_then(Value::as_array) {
            let variants: Vec<&Value> = variants
                .iter()
                .filter(|variant| variant.get("type").and_then(Value::as_str) != Some("null"))
                .collect();
            if let [only] = variants.as_slice() {
                return kind_of(root, only);
            }
            let kinds: Vec<Kind> = variants
                .iter()
                .map(|variant| kind_of(root, variant))
                .collect();
            let mut values = Vec::new();
            for kind in &kinds {
                match kind {
                    Kind::Enum(more) => values.extend(more.iter().cloned()),
                    _ => return Kind::Json,
                }
            }
            return if values.is_empty() {
                Kind::Json
            } else {
                Kind::Enum(values)
            };
        }
    }
    let ty = match schema.get("type") {
        Some(Value::String(ty)) => Some(ty.as_str()),
        Some(Value::Array(types)) => {
            let types: Vec<&str> = types
                .iter()
                .filter_map(Value::as_str)
                .filter(|ty| *ty != "null")
                .collect();
            match types.as_slice() {
                [only] => Some(*only),
                _ => None,
            }
        }
        _ => None,
    };
    match ty {
        Some("string") => Kind::String,
        Some("integer") => Kind::Integer,
        Some("number") => Kind::Number,
        Some("boolean") => Kind::Boolean,
        Some("array") => {
            let item = schema
                .get("items")
                .map_or(Kind::Json, |items| kind_of(root, items));
            match item {
                Kind::Array(_) => Kind::Array(Box::new(Kind::Json)),
                item => Kind::Array(Box::new(item)),
            }
        }
        _ => Kind::Json,
    }
}

/// `orderId` -> `order-id`, `sort_by` -> `sort-by`; kebab-case names stay as they are.
pub fn kebab(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut previous_lower = false;
    for ch in name.chars() {
        if ch == '_' || ch == ' ' || ch == '-' {
            if !out.is_empty() && !out.ends_with('-') {
                out.push('-');
            }
            previous_lower = false;
        } else if ch.is_uppercase() {
            if previous_lower && !out.ends_with('-') {
                out.push('-');
            }
            out.extend(ch.to_lowercase());
            previous_lower = false;
        } else {
            out.push(ch);
            previous_lower = ch.is_lowercase() || ch.is_ascii_digit();
        }
    }
    out.trim_end_matches('-').to_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(flags: &Flags, args: &[&str]) -> Result<Value, String> {
        let command = flags.apply(Command::new("cmd").no_binary_name(true));
        let matches = command
            .try_get_matches_from(args)
            .map_err(|e| format!("{:?}", e.kind()))?;
        flags.input(&matches).map_err(|e| e.code.to_string())
    }

    #[test]
    fn names_become_kebab_case_flags() {
        assert_eq!(kebab("orderId"), "order-id");
        assert_eq!(kebab("sort_by"), "sort-by");
        assert_eq!(kebab("user-id"), "user-id");
        assert_eq!(kebab("limit"), "limit");
        assert_eq!(kebab("addressLine2"), "address-line2");
    }

    #[test]
    fn every_kind_of_property_is_a_typed_flag() {
        let schema = json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "limit": {"type": ["integer", "null"]},
                "price": {"type": "number"},
                "done": {"type": "boolean"},
                "priority": {"$ref": "#/$defs/Priority"},
                "ids": {"type": "array", "items": {"type": "integer"}},
                "meta": {"type": "object"}
            },
            "required": ["title"],
            "$defs": {"Priority": {"type": "string", "enum": ["low", "high"]}}
        });
        let flags = Flags::from_schema(&schema, &[]);
        let input = parse(
            &flags,
            &[
                "--title",
                "Milk",
                "--limit",
                "5",
                "--price",
                "2.5",
                "--done",
                "--priority",
                "high",
                "--ids",
                "1",
                "--ids",
                "2",
                "--meta",
                r#"{"a":1}"#,
            ],
        )
        .unwrap();
        assert_eq!(
            input,
            json!({"title": "Milk", "limit": 5, "price": 2.5, "done": true, "priority": "high",
                   "ids": [1, 2], "meta": {"a": 1}})
        );
        assert_eq!(
            parse(&flags, &["--title", "x", "--done", "false"]).unwrap(),
            json!({"title": "x", "done": false})
        );
    }

    #[test]
    fn bad_values_and_missing_required_flags_are_usage_errors() {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": "integer"},
                "level": {"enum": ["low", "high"]}
            },
            "required": ["id"]
        });
        let flags = Flags::from_schema(&schema, &[]);
        assert_eq!(
            parse(&flags, &["--id", "seven"]).unwrap_err(),
            "ValueValidation"
        );
        assert_eq!(
            parse(&flags, &["--id", "1", "--level", "mid"]).unwrap_err(),
            "InvalidValue"
        );
        assert_eq!(parse(&flags, &[]).unwrap_err(), "MissingRequiredArgument");
        assert_eq!(
            parse(&flags, &["--input-json", r#"{"id": 3}"#]).unwrap(),
            json!({"id": 3})
        );
        assert_eq!(
            parse(&flags, &["--input-json", r#"{"id": 3}"#, "--id", "4"]).unwrap(),
            json!({"id": 4})
        );
        assert_eq!(
            parse(&flags, &["--input-json", "[1]"]).unwrap_err(),
            "VALIDATION_ERROR"
        );
    }

    #[test]
    fn a_property_named_like_a_reserved_flag_is_left_to_the_json_input() {
        let schema = json!({
            "type": "object",
            "properties": {"json": {"type": "string"}, "input": {"type": "object"}, "help": {"type": "string"}}
        });
        let flags = Flags::from_schema(&schema, &["json"]);
        let names: Vec<&str> = flags.fields().iter().map(|f| f.long.as_str()).collect();
        assert_eq!(names, ["input"]);
        assert_eq!(flags.skipped(), ["json", "help"]);
        assert_eq!(
            parse(&flags, &["--input", r#"{"a":1}"#]).unwrap(),
            json!({"input": {"a": 1}})
        );
    }
}
