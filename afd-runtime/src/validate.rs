//! Input validation: JSON Schema first (every violation, with its JSON pointer), then
//! deserialisation, naming the field that did not fit.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::LocationSegment;
use std::marker::PhantomData;

use serde::de::value::StrDeserializer;
use serde::de::{
    DeserializeOwned, DeserializeSeed, Deserializer, Expected, IgnoredAny, MapAccess, Unexpected,
    Visitor,
};
use serde_json::{Map, Value, json};

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
pub fn validation_failure(command: &str, violations: &[Violation]) -> CommandError {
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

/// Deserialises a command's input, naming the field whose value did not fit.
///
/// `null` is read as `{}`, so commands whose fields are all optional accept no input.
///
/// The input object is read by [`InputDeserializer`], not through `serde_path_to_error`:
/// per input type, only the derive's `visit_map` and its field-name visitor are compiled
/// (compile cost per command, BENCHMARKS.md), while the fields' values are decoded from
/// plain `serde_json::Value`s by code shared between commands. So a mismatch is reported
/// at the top-level field whose value failed (`Field 'items'`, pointer `/items`), not
/// below it (`items[1]`): the JSON Schema validation that runs before this reports exact
/// pointers for anything the schema describes.
///
/// # Errors
///
/// `VALIDATION_ERROR` naming the field and what serde expected.
pub fn deserialize_input<T: DeserializeOwned>(
    command: &str,
    input: Value,
) -> Result<T, CommandError> {
    let mut failed = None;
    match T::deserialize(InputDeserializer::new(object_if_null(input), &mut failed)) {
        Ok(input) => Ok(input),
        Err(error) => Err(field_failure(command, failed, error)),
    }
}

/// `null` as `{}`; anything else as it is. (Apart from the generic function above so that
/// each input type does not get its own copy.)
#[inline(never)]
fn object_if_null(input: Value) -> Value {
    if input.is_null() {
        Value::Object(Default::default())
    } else {
        input
    }
}

/// The `VALIDATION_ERROR` for a deserialisation error, at the field `field` (`None`: the
/// input itself).
#[cold]
#[inline(never)]
fn field_failure(command: &str, field: Option<String>, error: serde_json::Error) -> CommandError {
    let (pointer, field) = match field {
        Some(key) => (format!("/{key}"), key),
        None => (String::new(), "input".to_owned()),
    };
    let violation = Violation {
        pointer,
        keyword: "type".to_owned(),
        message: format!("Field '{field}': {error}"),
    };
    validation_failure(command, &[violation])
}

/// A `serde::Deserializer` for a command's input, cheaper to compile per input type than
/// `serde_path_to_error` over a `serde_json::Value`.
///
/// - A struct (or a map, or anything read with `deserialize_any`) is read from a JSON
///   object with `visit_map` over its entries: keys as strings ([`StrDeserializer`]; for
///   anything but a struct, through serde_json's own key deserializer, so that integer and
///   boolean keys still parse), values with the plain
///   `serde_json::Value` deserializer. A struct is never read from an array (no
///   `visit_seq`): the schema of a struct requires an object, and the input has been
///   validated against it.
/// - The key of the entry whose key or value failed is written to `failed`, so the error
///   can name the field. Paths below that key are not tracked.
/// - `Option` and newtype structs see this deserializer again (as with serde_json);
///   everything else is forwarded to the `serde_json::Value`.
///
/// [`StrDeserializer`]: serde::de::value::StrDeserializer
pub struct InputDeserializer<'a> {
    input: Value,
    failed: &'a mut Option<String>,
}

impl<'a> InputDeserializer<'a> {
    /// A deserializer for `input` that writes the key of a failed entry to `failed`.
    pub fn new(input: Value, failed: &'a mut Option<String>) -> Self {
        InputDeserializer { input, failed }
    }
}

/// What serde expected, for an error about `value` (serde_json's `Value::unexpected`).
#[cold]
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => {
            if let Some(n) = n.as_u64() {
                Unexpected::Unsigned(n)
            } else if let Some(n) = n.as_i64() {
                Unexpected::Signed(n)
            } else {
                Unexpected::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

/// The error for `value` where `expected` was wanted.
#[cold]
#[inline(never)]
fn invalid_type(value: &Value, expected: &dyn Expected) -> serde_json::Error {
    serde::de::Error::invalid_type(unexpected(value), expected)
}

/// serde_json's check after `visit_map`: every entry was read.
#[inline(never)]
fn check_consumed(len: usize, remaining: usize) -> Result<(), serde_json::Error> {
    if remaining == 0 {
        Ok(())
    } else {
        Err(serde::de::Error::invalid_length(
            len,
            &"fewer elements in map",
        ))
    }
}

impl<'de> Deserializer<'de> for InputDeserializer<'_> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.input {
            Value::Object(object) => Entries::<MapKeys>::new(object, self.failed).visit(visitor),
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let entries = Entries::<StructKeys>::of(self.input, self.failed, &visitor)?;
        entries.visit(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        let entries = Entries::<MapKeys>::of(self.input, self.failed, &visitor)?;
        entries.visit(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.input {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_bool(visitor)
    }

    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_i8(visitor)
    }

    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_i16(visitor)
    }

    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_i32(visitor)
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_i64(visitor)
    }

    fn deserialize_i128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_i128(visitor)
    }

    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_u8(visitor)
    }

    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_u16(visitor)
    }

    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_u32(visitor)
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_u64(visitor)
    }

    fn deserialize_u128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_u128(visitor)
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_f32(visitor)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_f64(visitor)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_char(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_str(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_string(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_bytes(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_byte_buf(visitor)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_unit(visitor)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.input.deserialize_unit_struct(name, visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_seq(visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.input.deserialize_tuple(len, visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.input.deserialize_tuple_struct(name, len, visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.input.deserialize_enum(name, variants, visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_identifier(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_ignored_any(visitor)
    }
}

/// How [`Entries`] reads keys: as plain strings for a struct's field names, or as
/// serde_json reads a map's keys (numbers and booleans in quotes too).
trait KeyMode {
    fn key<'de, S: DeserializeSeed<'de>>(key: &str, seed: S)
    -> Result<S::Value, serde_json::Error>;
}

/// A struct's field names: strings.
enum StructKeys {}

impl KeyMode for StructKeys {
    fn key<'de, S: DeserializeSeed<'de>>(
        key: &str,
        seed: S,
    ) -> Result<S::Value, serde_json::Error> {
        seed.deserialize(StrDeserializer::new(key))
    }
}

/// A map's keys, through serde_json's map-key deserializer (reached through a one-entry
/// map, since it is not public).
enum MapKeys {}

impl KeyMode for MapKeys {
    fn key<'de, S: DeserializeSeed<'de>>(
        key: &str,
        seed: S,
    ) -> Result<S::Value, serde_json::Error> {
        struct FirstKey<S>(S);

        impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for FirstKey<S> {
            type Value = S::Value;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("a map key")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<S::Value, A::Error> {
                match map.next_key_seed(self.0)? {
                    Some(key) => {
                        map.next_value::<IgnoredAny>()?;
                        Ok(key)
                    }
                    None => Err(serde::de::Error::custom("a map key is missing")),
                }
            }
        }

        let mut single = Map::new();
        single.insert(key.to_owned(), Value::Null);
        single.deserialize_any(FirstKey(seed))
    }
}

/// The entries of an input object, remembering the key of the one that failed.
///
/// Everything that does not depend on the visitor or the seed is in non-generic
/// `#[inline(never)]` methods, so that the code per input type stays small.
struct Entries<'a, K> {
    len: usize,
    iter: serde_json::map::IntoIter,
    /// The key of the entry being read.
    key: Option<String>,
    /// Its value, until `next_value_seed` takes it.
    value: Option<Value>,
    failed: &'a mut Option<String>,
    keys: PhantomData<K>,
}

impl<'a, K: KeyMode> Entries<'a, K> {
    /// The entries of `object`.
    #[inline(never)]
    fn new(object: Map<String, Value>, failed: &'a mut Option<String>) -> Self {
        Entries {
            len: object.len(),
            iter: object.into_iter(),
            key: None,
            value: None,
            failed,
            keys: PhantomData,
        }
    }

    /// The entries of `input`, or the error for a non-object where `expected` was wanted.
    #[inline(never)]
    fn of(
        input: Value,
        failed: &'a mut Option<String>,
        expected: &dyn Expected,
    ) -> Result<Self, serde_json::Error> {
        match input {
            Value::Object(object) => Ok(Entries::new(object, failed)),
            other => Err(invalid_type(&other, expected)),
        }
    }

    /// `visitor.visit_map` over the entries, then serde_json's check that all were read.
    fn visit<'de, V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, serde_json::Error> {
        let value = visitor.visit_map(&mut self)?;
        self.finish()?;
        Ok(value)
    }

    /// serde_json's check after `visit_map`: every entry was read.
    #[inline(never)]
    fn finish(self) -> Result<(), serde_json::Error> {
        check_consumed(self.len, self.iter.len())
    }

    /// The next entry's key (its value kept for `next_value_seed`), if any.
    #[inline(never)]
    fn advance(&mut self) -> Option<&str> {
        let (key, value) = self.iter.next()?;
        self.value = Some(value);
        Some(self.key.insert(key))
    }

    /// The current entry's value (its key stays, for [`Entries::fail_key`]).
    #[inline(never)]
    fn take_value(&mut self) -> Result<Value, serde_json::Error> {
        self.value.take().ok_or_else(value_missing)
    }

    /// `error`, after noting that the current entry's key or value failed.
    #[cold]
    #[inline(never)]
    fn fail_key(&mut self, error: serde_json::Error) -> serde_json::Error {
        if let Some(key) = self.key.take() {
            *self.failed = Some(key);
        }
        error
    }
}

impl<'de, K: KeyMode> MapAccess<'de> for Entries<'_, K> {
    type Error = serde_json::Error;

    fn next_key_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Self::Error> {
        let Some(key) = self.advance() else {
            return Ok(None);
        };
        match K::key(key, seed) {
            Ok(field) => Ok(Some(field)),
            Err(error) => Err(self.fail_key(error)),
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<S::Value, Self::Error> {
        let value = self.take_value()?;
        match seed.deserialize(value) {
            Ok(value) => Ok(value),
            Err(error) => Err(self.fail_key(error)),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        match self.iter.size_hint() {
            (lower, Some(upper)) if lower == upper => Some(upper),
            _ => None,
        }
    }
}

/// serde_json's error for `next_value` before `next_key`.
#[cold]
#[inline(never)]
fn value_missing() -> serde_json::Error {
    serde::de::Error::custom("value is missing")
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
    fn deserialisation_errors_name_the_field() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Input {
            items: Vec<u8>,
        }
        // The path stops at the top-level field (JSON Schema validation, which runs first,
        // has the exact pointer).
        let err = deserialize_input::<Input>("x", json!({"items": [1, 300]})).unwrap_err();
        assert_eq!(
            err.message,
            "Invalid input for 'x': Field 'items': invalid value: integer `300`, expected u8"
        );
        assert_eq!(err.details.unwrap()["errors"][0]["path"], "/items");
    }

    /// What `deserialize_input` reported through `serde_path_to_error`: the message and
    /// the pointer.
    fn with_path_to_error<T: DeserializeOwned + std::fmt::Debug>(input: Value) -> (String, String) {
        let error = serde_path_to_error::deserialize::<_, T>(object_if_null(input)).unwrap_err();
        let path = error.path().to_string();
        let (pointer, field) = if path == "." {
            (String::new(), "input".to_owned())
        } else {
            (format!("/{path}"), path)
        };
        (
            format!("Invalid input for 'x': Field '{field}': {}", error.inner()),
            pointer,
        )
    }

    fn with_input_deserializer<T: DeserializeOwned + std::fmt::Debug>(
        input: Value,
    ) -> (String, String) {
        let err = deserialize_input::<T>("x", input).unwrap_err();
        assert_eq!(err.code, codes::VALIDATION_ERROR);
        let pointer = err.details.unwrap()["errors"][0]["path"]
            .as_str()
            .unwrap()
            .to_owned();
        (err.message, pointer)
    }

    #[test]
    fn top_level_errors_read_as_with_serde_path_to_error() {
        use std::collections::BTreeMap;

        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct Input {
            user_id: String,
            limit: Option<u32>,
            #[serde(default)]
            tags: Vec<String>,
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Wrapper(Input);
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        #[serde(tag = "kind", rename_all = "lowercase")]
        enum Shape {
            Circle { radius: f64 },
            Square { side: f64 },
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Flat {
            name: String,
            #[serde(flatten)]
            rest: BTreeMap<String, u8>,
        }

        let same = |a: (String, String), b: (String, String)| assert_eq!(a, b);
        for input in [
            json!({"userId": "u", "limit": -1}),
            json!({"userId": "u", "limit": "ten"}),
            json!({"userId": 5}),
            json!({"limit": 3}),
            json!({"userId": "u", "extra": 1}),
            json!({"userId": "u", "tags": "one"}),
            json!(null),
            json!(7),
        ] {
            same(
                with_input_deserializer::<Input>(input.clone()),
                with_path_to_error::<Input>(input.clone()),
            );
            same(
                with_input_deserializer::<Wrapper>(input.clone()),
                with_path_to_error::<Wrapper>(input),
            );
        }
        for input in [
            json!({"kind": "circle"}),
            json!({"kind": "hexagon"}),
            json!({}),
        ] {
            same(
                with_input_deserializer::<Shape>(input.clone()),
                with_path_to_error::<Shape>(input),
            );
        }
        same(
            with_input_deserializer::<BTreeMap<u32, u8>>(json!({"1": 300})),
            with_path_to_error::<BTreeMap<u32, u8>>(json!({"1": 300})),
        );
        // A key that does not parse is named (serde_path_to_error said `?`).
        assert_eq!(
            with_input_deserializer::<BTreeMap<u32, u8>>(json!({"1": 1, "x": 2})),
            (
                "Invalid input for 'x': Field 'x': invalid value: expected key to be a number in quotes"
                    .to_owned(),
                "/x".to_owned()
            )
        );
        same(
            with_input_deserializer::<Flat>(json!({"name": "n", "a": 300})),
            with_path_to_error::<Flat>(json!({"name": "n", "a": 300})),
        );
    }

    #[test]
    fn inputs_decode_as_from_a_value() {
        use std::collections::BTreeMap;

        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Input {
            name: String,
            #[serde(default)]
            limit: Option<u32>,
        }
        #[derive(serde::Deserialize, Debug, PartialEq)]
        #[serde(untagged)]
        enum Either {
            Named { name: String },
            Id { id: u32 },
        }
        assert_eq!(
            deserialize_input::<Input>("x", json!({"name": "a", "limit": 2, "other": true}))
                .unwrap(),
            Input {
                name: "a".into(),
                limit: Some(2)
            }
        );
        assert_eq!(
            deserialize_input::<Option<Input>>("x", json!({"name": "a"})).unwrap(),
            Some(Input {
                name: "a".into(),
                limit: None
            })
        );
        assert_eq!(
            deserialize_input::<Either>("x", json!({"id": 3})).unwrap(),
            Either::Id { id: 3 }
        );
        assert_eq!(
            deserialize_input::<BTreeMap<u32, bool>>("x", json!({"1": true})).unwrap(),
            BTreeMap::from([(1, true)])
        );
        assert_eq!(
            deserialize_input::<BTreeMap<String, u8>>("x", Value::Null).unwrap(),
            BTreeMap::new()
        );
        assert_eq!(
            deserialize_input::<Value>("x", json!({"a": [1]})).unwrap(),
            json!({"a": [1]})
        );
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
