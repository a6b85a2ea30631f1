//! JSON Schema to TypeScript declarations, for afd-schema's `typescript` format.
//!
//! Covers what schemars generates: objects with required and optional properties, arrays,
//! enums and consts, `anyOf` / `oneOf` unions, `allOf` intersections, nullable type lists,
//! `additionalProperties` maps, and `$ref`s into `$defs` (each emitted once as its own
//! type). Descriptions become JSDoc comments.

use std::collections::BTreeMap;

use serde_json::Value;

/// `order-cancel` + `Input` -> `OrderCancelInput`.
pub(crate) fn type_name(command: &str, suffix: &str) -> String {
    let mut name: String = command
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect();
    name.push_str(suffix);
    name
}

/// Declarations for one schema named `name`: `export type Name = ...;` plus one per
/// definition in its `$defs`. `defs` collects definitions across schemas, so each is
/// emitted once.
pub(crate) fn declare(name: &str, schema: &Value, defs: &mut BTreeMap<String, String>) -> String {
    if let Some(own) = schema.get("$defs").and_then(Value::as_object) {
        for (def_name, def_schema) in own {
            if !defs.contains_key(def_name) {
                defs.insert(def_name.clone(), String::new());
                let body = declaration(def_name, def_schema);
                defs.insert(def_name.clone(), body);
            }
        }
    }
    declaration(name, schema)
}

fn declaration(name: &str, schema: &Value) -> String {
    let mut out = String::new();
    if let Some(description) = schema.get("description").and_then(Value::as_str) {
        out.push_str(&doc(description, ""));
    }
    out.push_str(&format!("export type {name} = {};\n", ts(schema, "")));
    out
}

fn doc(text: &str, indent: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() == 1 {
        return format!("{indent}/** {} */\n", lines[0].replace("*/", "*\\/"));
    }
    let mut out = format!("{indent}/**\n");
    for line in lines {
        out.push_str(&format!("{indent} * {}\n", line.replace("*/", "*\\/")));
    }
    out.push_str(&format!("{indent} */\n"));
    out
}

fn literal(value: &Value) -> String {
    match value {
        Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => value.to_string(),
        other => format!("/* {other} */ unknown"),
    }
}

fn union(parts: Vec<String>) -> String {
    let mut unique: Vec<String> = Vec::new();
    for part in parts {
        if !unique.contains(&part) {
            unique.push(part);
        }
    }
    match unique.len() {
        0 => "never".to_owned(),
        1 => unique.remove(0),
        _ => unique.join(" | "),
    }
}

fn property_key(key: &str) -> String {
    let plain = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if plain {
        key.to_owned()
    } else {
        Value::String(key.to_owned()).to_string()
    }
}

/// The TypeScript type of a schema.
pub(crate) fn ts(schema: &Value, indent: &str) -> String {
    let Some(map) = schema.as_object() else {
        return if schema == &Value::Bool(false) {
            "never".to_owned()
        } else {
            "unknown".to_owned()
        };
    };
    if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
        return reference.rsplit('/').next().unwrap_or("unknown").to_owned();
    }
    if let Some(value) = map.get("const") {
        return literal(value);
    }
    if let Some(options) = map.get("enum").and_then(Value::as_array) {
        return union(options.iter().map(literal).collect());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = map.get(key).and_then(Value::as_array) {
            return union(options.iter().map(|option| ts(option, indent)).collect());
        }
    }
    if let Some(all) = map.get("allOf").and_then(Value::as_array) {
        let parts: Vec<String> = all.iter().map(|part| ts(part, indent)).collect();
        return if parts.len() == 1 {
            parts[0].clone()
        } else {
            parts.join(" & ")
        };
    }
    match map.get("type") {
        Some(Value::Array(types)) => union(
            types
                .iter()
                .map(|ty| single(map, ty.as_str().unwrap_or(""), indent))
                .collect(),
        ),
        Some(Value::String(ty)) => single(map, ty, indent),
        _ if map.contains_key("properties") => object(map, indent),
        _ => "unknown".to_owned(),
    }
}

fn single(map: &serde_json::Map<String, Value>, ty: &str, indent: &str) -> String {
    match ty {
        "string" => "string".to_owned(),
        "number" | "integer" => "number".to_owned(),
        "boolean" => "boolean".to_owned(),
        "null" => "null".to_owned(),
        "array" => match map.get("items") {
            Some(items) => {
                let inner = ts(items, indent);
                if inner.contains(' ') {
                    format!("Array<{inner}>")
                } else {
                    format!("{inner}[]")
                }
            }
            None => "unknown[]".to_owned(),
        },
        "object" => object(map, indent),
        _ => "unknown".to_owned(),
    }
}

fn object(map: &serde_json::Map<String, Value>, indent: &str) -> String {
    let properties = map.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let extra = match map.get("additionalProperties") {
        Some(Value::Bool(false)) => None,
        Some(schema @ Value::Object(_)) => Some(ts(schema, indent)),
        _ if properties.is_none_or(|p| p.is_empty()) => Some("unknown".to_owned()),
        _ => None,
    };
    if properties.is_none_or(|p| p.is_empty()) {
        return match extra {
            Some(value) => format!("Record<string, {value}>"),
            None => "{}".to_owned(),
        };
    }
    let inner = format!("{indent}  ");
    let mut out = String::from("{\n");
    for (key, schema) in properties.into_iter().flatten() {
        if let Some(description) = schema.get("description").and_then(Value::as_str) {
            out.push_str(&doc(description, &inner));
        }
        let optional = if required.contains(&key.as_str()) {
            ""
        } else {
            "?"
        };
        out.push_str(&format!(
            "{inner}{}{optional}: {};\n",
            property_key(key),
            ts(schema, &inner)
        ));
    }
    if let Some(value) = extra {
        out.push_str(&format!("{inner}[key: string]: {value};\n"));
    }
    out.push_str(indent);
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_unions_arrays_and_refs() {
        let schema = json!({
            "type": "object",
            "description": "Create an order.",
            "properties": {
                "userId": {"type": "integer", "description": "The buyer."},
                "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
                "note": {"type": ["string", "null"]},
                "status": {"enum": ["pending", "paid"]},
                "meta": {"type": "object", "additionalProperties": {"type": "string"}},
                "kind": {"oneOf": [{"const": "a"}, {"const": "b"}]},
                "total-cost": {"type": "number"}
            },
            "required": ["userId", "items"],
            "$defs": {"Item": {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]}}
        });
        let mut defs = BTreeMap::new();
        let text = declare("OrderCreateInput", &schema, &mut defs);
        assert_eq!(
            text,
            "/** Create an order. */\nexport type OrderCreateInput = {\n  /** The buyer. */\n  userId: number;\n  items: Item[];\n  note?: string | null;\n  status?: \"pending\" | \"paid\";\n  meta?: Record<string, string>;\n  kind?: \"a\" | \"b\";\n  \"total-cost\"?: number;\n};\n"
        );
        assert_eq!(defs["Item"], "export type Item = {\n  sku: string;\n};\n");
        assert_eq!(type_name("order-cancel", "Input"), "OrderCancelInput");
    }
}
