//! Schemas as a `tools/list` advertises them: what informs an agent (types, enums,
//! meaningful bounds, defaults, descriptions, formats such as `date-time`) without what only
//! costs tokens (numeric `format`s, `default: null`, optional fields' `null` alternative,
//! trivial lower bounds, titles, `$defs` used once), and the output schema a command's tool
//! states: the shape of the `data` its successful results carry, nothing of the envelope
//! around it, without descriptions (afd-detail and afd-schema give the full schema). The validators keep the strict schemas; an advertised input schema may
//! be looser (bounds left out) or stricter (no `null`), an advertised output schema
//! only looser, so every result it describes still validates.

use serde_json::{Map, Value, json};

/// The keyword that names the `Mcp-Param-*` header carrying a property's value (SEP-2243).
const HEADER_PARAM: &str = "x-mcp-header";

/// The tools whose input schema has an `x-mcp-header` annotation anywhere: their calls carry
/// `Mcp-Param-*` headers to check.
pub(in crate::mcp) fn header_param_tools(
    tools: &[rmcp::model::Tool],
) -> std::collections::HashSet<String> {
    fn mentions(value: &Value) -> bool {
        match value {
            Value::Object(map) => map
                .iter()
                .any(|(key, value)| key == HEADER_PARAM || mentions(value)),
            Value::Array(items) => items.iter().any(mentions),
            _ => false,
        }
    }
    tools
        .iter()
        .filter(|tool| {
            tool.input_schema
                .iter()
                .any(|(key, value)| key == HEADER_PARAM || mentions(value))
        })
        .map(|tool| tool.name.to_string())
        .collect()
}

/// Checks the `x-mcp-header` annotations of an advertised input schema as a client reads
/// them (an MCP client drops a tool whose annotations it cannot use): each on a top-level
/// property of type string, integer or boolean, naming an HTTP token, no two alike but for
/// case.
///
/// # Errors
///
/// The first annotation at fault, in words.
pub(in crate::mcp) fn header_params(schema: &Map<String, Value>) -> Result<(), String> {
    fn count(value: &Value) -> usize {
        match value {
            Value::Object(map) => map
                .iter()
                .map(|(key, value)| usize::from(key == HEADER_PARAM) + count(value))
                .sum(),
            Value::Array(items) => items.iter().map(count).sum(),
            _ => 0,
        }
    }
    let total: usize = schema
        .iter()
        .map(|(key, value)| usize::from(key == HEADER_PARAM) + count(value))
        .sum();
    if total == 0 {
        return Ok(());
    }
    let mut seen = std::collections::HashSet::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, property) in properties.into_iter().flatten() {
        let Some(header) = property.get(HEADER_PARAM) else {
            continue;
        };
        let header = header
            .as_str()
            .filter(|header| !header.is_empty() && header.bytes().all(is_tchar))
            .ok_or_else(|| format!("`{name}`: {HEADER_PARAM} must name an HTTP token"))?;
        if !seen.insert(header.to_ascii_lowercase()) {
            return Err(format!("`{name}`: {HEADER_PARAM} `{header}` is used twice"));
        }
        if !matches!(
            property.get("type").and_then(Value::as_str),
            Some("string" | "integer" | "boolean")
        ) {
            return Err(format!(
                "`{name}`: {HEADER_PARAM} needs a property of type string, integer or boolean"
            ));
        }
    }
    if seen.len() != total {
        return Err(format!(
            "{HEADER_PARAM} may only annotate a top-level property of the input"
        ));
    }
    Ok(())
}

/// A character of an HTTP token (RFC 9110).
fn is_tchar(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// Which schema a rendering is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// What an agent sends: an optional field is advertised by its type alone (leaving it
    /// out is how an agent says "none"; the validator still accepts `null`).
    Input,
    /// What a result holds: `null` stays where the data may hold it.
    Output,
}

/// The `format`s schemars gives Rust's number types: not JSON Schema formats, so no
/// validator checks them and no agent learns anything from them.
const NUMBER_FORMATS: [&str; 16] = [
    "int", "int8", "int16", "int32", "int64", "int128", "uint", "uint8", "uint16", "uint32",
    "uint64", "uint128", "float", "double", "float32", "float64",
];

/// Keywords whose value is a map of names to schemas.
const SCHEMA_MAPS: [&str; 4] = ["properties", "patternProperties", "$defs", "definitions"];
/// Keywords whose value is one schema.
const SCHEMA_VALUES: [&str; 9] = [
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
];
/// Keywords whose value is a list of schemas.
const SCHEMA_LISTS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];

/// A command's input schema as its tool advertises it.
pub(in crate::mcp) fn input(schema: &Value) -> Value {
    inline_defs(clean(schema, Side::Input))
}

/// A meta-tool's or bootstrap tool's input schema as advertised: cleaned like a command's,
/// without the properties named in `in_band` (arguments a result tells the agent to pass,
/// with the value, when it needs them: a session handle, the next page's offset), and
/// with a one-or-many field (`anyOf` of a value and a list of it) in its list form.
pub(in crate::mcp) fn meta_input(schema: &Value, in_band: &[&str]) -> Value {
    let mut schema = input(schema);
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for name in in_band {
            properties.remove(*name);
        }
        for property in properties.values_mut() {
            if let Some(list) = list_form(property) {
                *property = list;
            }
        }
    }
    schema
}

/// `{"anyOf": [T, {"type": "array", "items": T, ...}], ...}` -> the array alternative, with
/// the property's other keywords (its description): every value it allows is allowed by
/// the one-or-many field.
fn list_form(property: &Value) -> Option<Value> {
    let alternatives = property.get("anyOf")?.as_array()?;
    let [one, many] = alternatives.as_slice() else {
        return None;
    };
    if many.get("type") != Some(&json!("array")) || many.get("items") != Some(one) {
        return None;
    }
    let mut list = many.clone();
    if let (Some(list), Some(property)) = (list.as_object_mut(), property.as_object()) {
        for (key, value) in property.iter().filter(|(key, _)| *key != "anyOf") {
            list.insert(key.clone(), value.clone());
        }
    }
    Some(list)
}

/// The output schema of a command's tool whose data has `data` as its schema: an object
/// whose `data` (when present) follows it. A successful result's `structuredContent` is
/// the whole result (`success`, `data`, `reasoning`, ...): the other fields are the same
/// for every command, so they are not repeated per tool, and the schema leaves them open.
pub(in crate::mcp) fn output(data: &Value) -> Value {
    let mut data = clean(data, Side::Output);
    let defs = data.as_object_mut().and_then(|map| map.remove("$defs"));
    let mut schema = json!({"type": "object", "properties": {"data": data}});
    if let Some(defs) = defs {
        schema["$defs"] = defs;
    }
    inline_defs(schema)
}

/// Whether a keyword is worth its tokens in a listing (`side`'s).
fn advertised(key: &str, value: &Value, side: Side) -> bool {
    match key {
        // Validators enforce these; an agent gains nothing from them.
        "title" | "$schema" | "minLength" | "minItems" => false,
        "additionalProperties" => !value.is_boolean(),
        "minimum" => !matches!(value.as_u64(), Some(0 | 1)),
        "format" => !value.as_str().is_some_and(|f| NUMBER_FORMATS.contains(&f)),
        "default" => !value.is_null(),
        // What a result's field means, afd-detail and afd-schema say (with the full
        // schema); the listing's output schema is its shape.
        "description" => side == Side::Input,
        _ => true,
    }
}

/// The `null` alternative of a schema, as schemars writes an `Option`'s.
fn is_null_schema(schema: &Value) -> bool {
    schema
        .as_object()
        .is_some_and(|map| map.len() == 1 && map.get("type") == Some(&json!("null")))
}

/// One schema (and every schema inside it) without the keywords that only cost tokens.
fn clean(schema: &Value, side: Side) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::with_capacity(map.len());
    for (key, value) in map {
        if !advertised(key, value, side) {
            continue;
        }
        let key = key.as_str();
        if SCHEMA_MAPS.contains(&key) {
            let cleaned = value.as_object().map_or_else(
                || value.clone(),
                |map| {
                    Value::Object(
                        map.iter()
                            .map(|(name, schema)| (name.clone(), clean(schema, side)))
                            .collect(),
                    )
                },
            );
            out.insert(key.to_owned(), cleaned);
        } else if SCHEMA_VALUES.contains(&key) {
            out.insert(key.to_owned(), clean(value, side));
        } else if SCHEMA_LISTS.contains(&key) {
            let Some(list) = value.as_array() else {
                out.insert(key.to_owned(), value.clone());
                continue;
            };
            let kept: Vec<Value> = list
                .iter()
                .filter(|schema| side == Side::Output || !is_null_schema(schema))
                .map(|schema| clean(schema, side))
                .collect();
            match kept.as_slice() {
                // `Option<T>` as `anyOf: [T, null]`: an input advertises T itself.
                [only] if kept.len() < list.len() && matches!(key, "anyOf" | "oneOf") => {
                    if let Value::Object(only) = only {
                        for (k, v) in only {
                            out.entry(k.clone()).or_insert_with(|| v.clone());
                        }
                    }
                }
                _ => {
                    out.insert(key.to_owned(), Value::Array(kept));
                }
            }
        } else if key == "type" && side == Side::Input {
            out.insert(key.to_owned(), without_null_type(value));
        } else if key == "enum" && side == Side::Input {
            let values = value.as_array().map_or_else(
                || value.clone(),
                |values| Value::Array(values.iter().filter(|v| !v.is_null()).cloned().collect()),
            );
            out.insert(key.to_owned(), values);
        } else {
            // enum, const, default, examples, required...: data, not schemas.
            out.insert(key.to_owned(), value.clone());
        }
    }
    Value::Object(out)
}

/// `["string", "null"]` -> `"string"`; other types unchanged.
fn without_null_type(value: &Value) -> Value {
    let Some(types) = value.as_array() else {
        return value.clone();
    };
    let kept: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
    match kept.as_slice() {
        [only] => (*only).clone(),
        _ => Value::Array(kept.into_iter().cloned().collect()),
    }
}

/// The name a local reference points to: `#/$defs/Name` -> `Name`.
fn def_name(reference: &str) -> Option<&str> {
    reference.strip_prefix("#/$defs/")
}

/// How often each definition is referenced, anywhere in `schema`.
fn count_refs(schema: &Value, counts: &mut Map<String, Value>) {
    match schema {
        Value::Object(map) => {
            if let Some(name) = map.get("$ref").and_then(Value::as_str).and_then(def_name) {
                let count = counts.get(name).and_then(Value::as_u64).unwrap_or(0);
                counts.insert(name.to_owned(), json!(count + 1));
            }
            map.values().for_each(|value| count_refs(value, counts));
        }
        Value::Array(items) => items.iter().for_each(|value| count_refs(value, counts)),
        _ => {}
    }
}

/// Replaces each reference to a definition used once by the definition itself (the
/// reference's own keywords, such as its description, win), keeps the others in `$defs`,
/// and drops definitions nothing references any more. A definition reached again while it
/// is being inlined (recursion) stays a reference.
fn inline_defs(mut schema: Value) -> Value {
    let Some(defs) = schema
        .as_object_mut()
        .and_then(|map| map.remove("$defs"))
        .and_then(|defs| match defs {
            Value::Object(defs) => Some(defs),
            _ => None,
        })
    else {
        return schema;
    };
    let mut counts = Map::new();
    count_refs(&schema, &mut counts);
    defs.values().for_each(|def| count_refs(def, &mut counts));
    let once = |name: &str| counts.get(name).and_then(Value::as_u64) == Some(1);
    let mut stack = Vec::new();
    let mut schema = expand(&schema, &defs, &once, &mut stack);
    // The definitions still referenced, and those their bodies reference.
    let mut kept = Map::new();
    let mut pending = referenced(&schema);
    while let Some(name) = pending.pop() {
        if kept.contains_key(&name) {
            continue;
        }
        let Some(def) = defs.get(&name) else { continue };
        stack.push(name.clone());
        let body = expand(def, &defs, &once, &mut stack);
        stack.pop();
        pending.extend(referenced(&body));
        kept.insert(name, body);
    }
    if !kept.is_empty()
        && let Some(map) = schema.as_object_mut()
    {
        map.insert("$defs".into(), Value::Object(kept));
    }
    schema
}

/// `schema` with the references to once-used definitions replaced by their bodies.
fn expand(
    schema: &Value,
    defs: &Map<String, Value>,
    once: &dyn Fn(&str) -> bool,
    stack: &mut Vec<String>,
) -> Value {
    match schema {
        Value::Object(map) => {
            let target = map.get("$ref").and_then(Value::as_str).and_then(def_name);
            if let Some(name) = target
                && once(name)
                && !stack.iter().any(|open| open == name)
                && let Some(Value::Object(body)) = defs.get(name)
            {
                stack.push(name.to_owned());
                let mut merged = match expand(&Value::Object(body.clone()), defs, once, stack) {
                    Value::Object(merged) => merged,
                    _ => Map::new(),
                };
                stack.pop();
                for (key, value) in map {
                    if key != "$ref" {
                        merged.insert(key.clone(), expand(value, defs, once, stack));
                    }
                }
                return Value::Object(merged);
            }
            Value::Object(
                map.iter()
                    .map(|(key, value)| (key.clone(), expand(value, defs, once, stack)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|value| expand(value, defs, once, stack))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The definitions `schema` references.
fn referenced(schema: &Value) -> Vec<String> {
    let mut counts = Map::new();
    count_refs(schema, &mut counts);
    counts.keys().cloned().collect()
}

#[cfg(test)]
mod tests {

    #[test]
    fn header_params_sit_on_top_level_primitive_properties_with_token_names() {
        let ok = json!({"properties": {"region": {"type": "string", "x-mcp-header": "Region"}}});
        assert!(header_params(ok.as_object().unwrap()).is_ok());
        let nested = json!({"properties": {"a": {"type": "object",
            "properties": {"b": {"type": "string", "x-mcp-header": "B"}}}}});
        assert!(header_params(nested.as_object().unwrap()).is_err());
        let object = json!({"properties": {"a": {"type": "object", "x-mcp-header": "A"}}});
        assert!(header_params(object.as_object().unwrap()).is_err());
        let spaced = json!({"properties": {"a": {"type": "string", "x-mcp-header": "A B"}}});
        assert!(header_params(spaced.as_object().unwrap()).is_err());
        let twice = json!({"properties": {
            "a": {"type": "string", "x-mcp-header": "Name"},
            "b": {"type": "string", "x-mcp-header": "name"}}});
        assert!(header_params(twice.as_object().unwrap()).is_err());
    }

    use super::*;

    #[test]
    fn an_optional_input_field_is_advertised_by_its_type_without_noise() {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": ["string", "null"], "default": null},
                "limit": {"type": "integer", "format": "uint32", "minimum": 1, "maximum": 100, "default": 20},
                "at": {"type": "string", "format": "date-time"},
                "status": {"anyOf": [{"$ref": "#/$defs/Status"}, {"type": "null"}], "description": "Filter."},
                "title": {"type": "string", "title": "Title"}
            },
            "additionalProperties": false,
            "$defs": {"Status": {"enum": ["open", "closed"], "description": "A status."}}
        });
        assert_eq!(
            input(&schema),
            json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "limit": {"type": "integer", "maximum": 100, "default": 20},
                    "at": {"type": "string", "format": "date-time"},
                    "status": {"enum": ["open", "closed"], "description": "Filter."},
                    "title": {"type": "string"}
                }
            })
        );
    }

    #[test]
    fn an_output_schema_keeps_null_and_shared_definitions_and_validates_the_envelope() {
        let data = json!({
            "type": "object",
            "description": "What the command answers.",
            "properties": {
                "note": {"type": ["string", "null"]},
                "a": {"$ref": "#/$defs/Item"},
                "b": {"$ref": "#/$defs/Item"},
                "tree": {"$ref": "#/$defs/Tree"}
            },
            "required": ["a"],
            "$defs": {
                "Item": {"type": "object", "properties": {"n": {"type": "integer", "format": "uint64", "minimum": 0}}},
                "Tree": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}}
            }
        });
        let schema = output(&data);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {"data": {
                    "type": "object",
                    "properties": {
                        "note": {"type": ["string", "null"]},
                        "a": {"$ref": "#/$defs/Item"},
                        "b": {"$ref": "#/$defs/Item"},
                        "tree": {"$ref": "#/$defs/Tree"}
                    },
                    "required": ["a"]
                }},
                "$defs": {
                    "Item": {"type": "object", "properties": {"n": {"type": "integer"}}},
                    "Tree": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}}
                }
            })
        );
        let validator = jsonschema::validator_for(&schema).unwrap();
        let result = json!({"success": true, "data": {"note": null, "a": {"n": 1}, "tree": {"children": [{"children": []}]}}, "reasoning": "ok"});
        assert!(validator.is_valid(&result));
        assert!(validator.is_valid(&json!({"success": false, "error": {"code": "X"}})));
        assert!(!validator.is_valid(&json!({"success": true, "data": {"note": 3, "a": {}}})));
    }

    #[test]
    fn a_definition_used_once_is_inlined_and_descriptions_are_left_to_afd_detail() {
        let data = json!({
            "type": "object",
            "properties": {"echo": {"$ref": "#/$defs/Echo", "description": "The input it got."}},
            "$defs": {"Echo": {"type": "object", "description": "An echo.", "properties": {"q": {"type": ["string", "null"], "description": "The query."}}}}
        });
        assert_eq!(
            output(&data),
            json!({"type": "object", "properties": {"data": {
                "type": "object",
                "properties": {"echo": {"type": "object", "properties": {"q": {"type": ["string", "null"]}}}}
            }}})
        );
    }

    #[test]
    fn meta_tools_leave_in_band_arguments_out_and_list_one_or_many_fields() {
        let schema = json!({
            "type": "object",
            "properties": {
                "command": {"anyOf": [{"type": "string", "minLength": 1}, {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 10}]},
                "session": {"type": "string"}
            },
            "required": ["command"]
        });
        assert_eq!(
            meta_input(&schema, &["session"]),
            json!({
                "type": "object",
                "properties": {"command": {"type": "array", "items": {"type": "string"}, "maxItems": 10}},
                "required": ["command"]
            })
        );
    }
}
