//! Elicitation: a form the client shows its user, and the answer. The form's schema comes
//! from a Rust type and is reduced to what MCP allows: one flat object of primitives
//! (strings, numbers, integers, booleans), with their `default`s (SEP-1034), and enums as
//! SEP-1330 writes them (untitled `enum`, titled single-select `oneOf` of `{const, title}`,
//! multi-select arrays of either).

use schemars::JsonSchema;
use serde_json::{Map, Value, json};

use crate::error::CommandError;

/// The user's answer to a form.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicitation<T> {
    /// The user filled in the form and sent it.
    Accept(T),
    /// The user refused to answer.
    Decline,
    /// The user dismissed the form without choosing.
    Cancel,
}

impl<T> Elicitation<T> {
    /// The accepted answer, if any.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicitation::Accept(value) => Some(value),
            Elicitation::Decline | Elicitation::Cancel => None,
        }
    }

    /// The action's name as MCP writes it: `accept`, `decline` or `cancel`.
    pub fn action(&self) -> &'static str {
        match self {
            Elicitation::Accept(_) => "accept",
            Elicitation::Decline => "decline",
            Elicitation::Cancel => "cancel",
        }
    }
}

/// The form schema of `T`, as an elicitation request carries it.
///
/// ```
/// use afd_runtime::client::form_schema;
/// use afd_runtime::prelude::*;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Contact {
///     /// Your name.
///     name: String,
///     /// How old you are.
///     #[serde(default = "thirty")]
///     age: u32,
/// }
/// fn thirty() -> u32 { 30 }
///
/// let schema = form_schema::<Contact>().unwrap();
/// assert_eq!(schema["properties"]["age"], json!({"type": "integer", "description": "How old you are.", "minimum": 0, "default": 30}));
/// assert_eq!(schema["required"], json!(["name"]));
/// ```
///
/// # Errors
///
/// `INTERNAL_ERROR` when `T` is not a flat object of primitives and enums (a nested
/// object, an array of objects, a map): a form cannot ask for it.
pub fn form_schema<T: JsonSchema>() -> Result<Value, CommandError> {
    let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    flatten(&schema).map_err(|problem| {
        CommandError::internal(format!(
            "`{}` cannot be an elicitation form: {problem}",
            std::any::type_name::<T>()
        ))
    })
}

/// The form of a confirmation: one `confirm` checkbox, ticked by default.
pub fn confirmation_schema(prompt: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "confirm": {"type": "boolean", "title": "Confirm", "description": prompt, "default": true}
        }
    })
}

/// Reduces a schemars root schema to MCP's form shape.
pub(crate) fn flatten(schema: &Value) -> Result<Value, String> {
    let defs = schema.get("$defs").and_then(Value::as_object);
    let root = resolve(schema, defs);
    let Some(properties) = root.get("properties").and_then(Value::as_object) else {
        return Err("the form must be an object with named fields".into());
    };
    let mut out = Map::new();
    for (name, property) in properties {
        let field = field(property, defs).map_err(|problem| format!("field `{name}` {problem}"))?;
        out.insert(name.clone(), field);
    }
    let mut form = json!({"type": "object", "properties": out});
    if let Some(required) = root
        .get("required")
        .filter(|r| r.as_array().is_some_and(|r| !r.is_empty()))
    {
        form["required"] = required.clone();
    }
    Ok(form)
}

/// `schema`, or the definition its `$ref` names.
fn resolve<'a>(schema: &'a Value, defs: Option<&'a Map<String, Value>>) -> &'a Value {
    let target = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix("#/$defs/"))
        .and_then(|name| defs?.get(name));
    match target {
        Some(target) => resolve(target, defs),
        None => schema,
    }
}

/// The schema an `Option<T>` wraps (`anyOf: [T, null]` or `type: [t, "null"]`), else itself.
fn unwrap_option(schema: &Value) -> Value {
    if let Some(any_of) = schema.get("anyOf").and_then(Value::as_array) {
        let rest: Vec<&Value> = any_of
            .iter()
            .filter(|alternative| alternative.get("type") != Some(&json!("null")))
            .collect();
        if rest.len() == 1 && rest.len() < any_of.len() {
            let mut inner = rest[0].clone();
            copy_annotations(schema, &mut inner);
            return inner;
        }
    }
    if let Some(types) = schema.get("type").and_then(Value::as_array) {
        let rest: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        if rest.len() == 1 {
            let mut inner = schema.clone();
            inner["type"] = rest[0].clone();
            return inner;
        }
    }
    schema.clone()
}

/// Carries a field's title, description and default onto the schema it resolves to.
fn copy_annotations(from: &Value, to: &mut Value) {
    for key in ["title", "description", "default"] {
        if let (Some(value), Some(map)) = (from.get(key), to.as_object_mut())
            && !value.is_null()
        {
            map.insert(key.into(), value.clone());
        }
    }
}

/// One field of the form.
fn field(property: &Value, defs: Option<&Map<String, Value>>) -> Result<Value, String> {
    let property = unwrap_option(property);
    let mut schema = unwrap_option(resolve(&property, defs));
    copy_annotations(&property, &mut schema);
    let mut out = Map::new();
    for key in ["title", "description"] {
        if let Some(Value::String(text)) = schema.get(key) {
            out.insert(key.into(), json!(text));
        }
    }
    if let Some(choices) = choices(&schema, defs) {
        out.insert("type".into(), json!("string"));
        choices.write(&mut out, "oneOf");
        keep(&schema, &mut out, &["default"]);
        return Ok(Value::Object(out));
    }
    let kind = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match kind {
        "string" => {
            out.insert("type".into(), json!("string"));
            keep(&schema, &mut out, &["minLength", "maxLength", "default"]);
            if let Some(format) = schema.get("format").and_then(Value::as_str)
                && ["email", "uri", "date", "date-time"].contains(&format)
            {
                out.insert("format".into(), json!(format));
            }
        }
        "integer" | "number" => {
            out.insert("type".into(), json!(kind));
            keep(&schema, &mut out, &["minimum", "maximum", "default"]);
        }
        "boolean" => {
            out.insert("type".into(), json!("boolean"));
            keep(&schema, &mut out, &["default"]);
        }
        "array" => {
            let items = schema
                .get("items")
                .map(|items| unwrap_option(resolve(items, defs)));
            let Some(choices) = items.as_ref().and_then(|items| choices(items, defs)) else {
                return Err("is an array of something other than enum values: a form can only ask to pick several of a fixed set".into());
            };
            out.insert("type".into(), json!("array"));
            let mut items = Map::new();
            choices.write(&mut items, "anyOf");
            out.insert("items".into(), Value::Object(items));
            keep(&schema, &mut out, &["minItems", "maxItems", "default"]);
        }
        _ => {
            return Err(
                "is not a string, number, integer, boolean or enum: a form holds only those".into(),
            );
        }
    }
    Ok(Value::Object(out))
}

/// Copies `keys` of `from` that are set.
fn keep(from: &Value, to: &mut Map<String, Value>, keys: &[&str]) {
    for key in keys {
        if let Some(value) = from.get(*key).filter(|value| !value.is_null()) {
            to.insert((*key).into(), value.clone());
        }
    }
}

/// The values of an enum field.
enum Choices {
    /// Plain values: `enum`.
    Untitled(Vec<Value>),
    /// Values with titles: `oneOf` (single) or `anyOf` (multiple) of `{const, title}`.
    Titled(Vec<(Value, String)>),
}

impl Choices {
    fn write(self, out: &mut Map<String, Value>, titled_key: &str) {
        match self {
            Choices::Untitled(values) => {
                out.insert("type".into(), json!("string"));
                out.insert("enum".into(), Value::Array(values));
            }
            Choices::Titled(values) => {
                let alternatives = values
                    .into_iter()
                    .map(|(value, title)| json!({"const": value, "title": title}))
                    .collect();
                out.insert(titled_key.into(), Value::Array(alternatives));
            }
        }
    }
}

/// The string values of an enum schema: `enum: [...]`, or `oneOf`/`anyOf` of `const`s (as
/// schemars writes an enum whose variants have doc comments or titles).
fn choices(schema: &Value, defs: Option<&Map<String, Value>>) -> Option<Choices> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let strings: Vec<Value> = values.iter().filter(|v| v.is_string()).cloned().collect();
        return (!strings.is_empty()).then_some(Choices::Untitled(strings));
    }
    let alternatives = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)?;
    let mut titled = Vec::new();
    for alternative in alternatives {
        let alternative = resolve(alternative, defs);
        let value = alternative.get("const").or_else(|| {
            alternative
                .get("enum")
                .and_then(Value::as_array)
                .filter(|values| values.len() == 1)
                .and_then(|values| values.first())
        })?;
        value.as_str()?;
        let title = ["title", "description"]
            .iter()
            .find_map(|key| alternative.get(*key).and_then(Value::as_str))
            .map(|text| text.trim_end_matches('.').to_owned())
            .unwrap_or_else(|| value.as_str().unwrap_or_default().to_owned());
        titled.push((value.clone(), title));
    }
    (!titled.is_empty()).then_some(Choices::Titled(titled))
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Plain {
        Option1,
        Option2,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    enum Titled {
        /// First Option
        #[serde(rename = "value1")]
        One,
        /// Second Option
        #[serde(rename = "value2")]
        Two,
    }

    fn active() -> String {
        "active".into()
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Form {
        /// Your name.
        #[serde(default = "name")]
        name: String,
        #[serde(default = "thirty")]
        age: i64,
        #[serde(default = "score")]
        score: f64,
        #[serde(default = "active")]
        status: String,
        #[serde(default)]
        verified: bool,
        nickname: Option<String>,
        untitled_single: Plain,
        titled_single: Option<Titled>,
        untitled_multi: Vec<Plain>,
        titled_multi: Vec<Titled>,
    }

    fn name() -> String {
        "John Doe".into()
    }
    fn thirty() -> i64 {
        30
    }
    fn score() -> f64 {
        95.5
    }

    #[test]
    fn a_struct_becomes_a_flat_form_with_defaults_and_enums() {
        let form = form_schema::<Form>().unwrap();
        let properties = &form["properties"];
        assert_eq!(
            properties["name"],
            json!({"type": "string", "description": "Your name.", "default": "John Doe"})
        );
        assert_eq!(properties["age"], json!({"type": "integer", "default": 30}));
        assert_eq!(
            properties["score"],
            json!({"type": "number", "default": 95.5})
        );
        assert_eq!(
            properties["verified"],
            json!({"type": "boolean", "default": false})
        );
        assert_eq!(properties["nickname"], json!({"type": "string"}));
        assert_eq!(
            properties["untitledSingle"],
            json!({"type": "string", "enum": ["option1", "option2"]})
        );
        assert_eq!(
            properties["titledSingle"],
            json!({"type": "string", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"}
            ]})
        );
        assert_eq!(
            properties["untitledMulti"],
            json!({"type": "array", "items": {"type": "string", "enum": ["option1", "option2"]}})
        );
        assert_eq!(
            properties["titledMulti"],
            json!({"type": "array", "items": {"anyOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"}
            ]}})
        );
        assert_eq!(
            form["required"],
            json!(["untitledSingle", "untitledMulti", "titledMulti"])
        );
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        inner: Form,
    }

    #[test]
    fn a_nested_object_is_refused_with_the_field_named() {
        let error = form_schema::<Nested>().unwrap_err();
        assert_eq!(error.code, "INTERNAL_ERROR");
        assert!(
            error.message.contains("field `inner` is not a string"),
            "{}",
            error.message
        );
    }
}
