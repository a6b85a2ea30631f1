//! MCP resources: the app's declared ones (`#[resource]`: fixed URIs and templates, read
//! through [`Resources`]) and the catalog's own, for clients and code-executing agents that
//! browse it like a file system: `afd://catalog` (the index), `afd://categories/{name}` and
//! `afd://commands/{name}` (a command's full definition, as afd-detail gives it). Also
//! what a failed declared read or subscription is as a JSON-RPC error.

use rmcp::model::{
    ErrorCode, ErrorData, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};
use serde_json::{Value, json};

use crate::MetaTools;
use crate::command_context::CommandContext;
use crate::dispatch::Dispatcher;
use crate::error::{CommandError, codes};
use crate::resource::{ResourceDef, Resources};
use crate::text::summary;

/// The catalog index.
pub const CATALOG_URI: &str = "afd://catalog";
/// The prefix of a command's resource.
pub const COMMANDS_PREFIX: &str = "afd://commands/";
/// The prefix of a category's resource.
pub const CATEGORIES_PREFIX: &str = "afd://categories/";

const JSON: &str = "application/json";

/// Every resource, in a fixed order: the app's declared ones (by URI), then the catalog's
/// index, each category, each exposed command.
pub(crate) fn all(dispatcher: &Dispatcher, declared: &Resources) -> Vec<Resource> {
    let mut resources = Vec::with_capacity(
        1 + dispatcher.available_categories().len() + dispatcher.exposed_count(),
    );
    resources.extend(declared.resources().map(|def| {
        let resource = Resource::new(def.uri(), def.name()).with_description(def.description());
        let resource = match def.title() {
            Some(title) => resource.with_title(title),
            None => resource,
        };
        match def.mime_type() {
            Some(mime) => resource.with_mime_type(mime),
            None => resource,
        }
    }));
    resources.push(
        Resource::new(CATALOG_URI, "catalog")
            .with_title("Command catalog")
            .with_description("Every category with its description and command count.")
            .with_mime_type(JSON),
    );
    for (category, count) in dispatcher.available_categories() {
        let about = dispatcher
            .registry()
            .category_description(category)
            .map_or_else(
                || format!("The {category} commands ({count})."),
                str::to_owned,
            );
        resources.push(
            Resource::new(format!("{CATEGORIES_PREFIX}{category}"), *category)
                .with_description(about)
                .with_mime_type(JSON),
        );
    }
    for entry in dispatcher.exposed_entries() {
        resources.push(
            Resource::new(format!("{COMMANDS_PREFIX}{}", entry.name()), entry.name())
                .with_description(summary(entry.description()))
                .with_mime_type(JSON),
        );
    }
    resources
}

/// The URI templates: the app's declared ones (by template), then the catalog's.
pub(crate) fn templates(declared: &Resources) -> Vec<ResourceTemplate> {
    let mut resource_templates: Vec<ResourceTemplate> =
        declared.templates().map(template).collect();
    resource_templates.extend([
            ResourceTemplate::new(format!("{COMMANDS_PREFIX}{{name}}"), "command")
                .with_title("Command definition")
                .with_description(
                    "A command's full definition: description, category, tags, mutation, input schema, errors.",
                )
                .with_mime_type(JSON),
            ResourceTemplate::new(format!("{CATEGORIES_PREFIX}{{name}}"), "category")
                .with_title("Category")
                .with_description("A category's description and the summaries of its commands.")
                .with_mime_type(JSON),
    ]);
    resource_templates
}

fn template(def: &ResourceDef) -> ResourceTemplate {
    let template = ResourceTemplate::new(def.uri(), def.name()).with_description(def.description());
    let template = match def.title() {
        Some(title) => template.with_title(title),
        None => template,
    };
    match def.mime_type() {
        Some(mime) => template.with_mime_type(mime),
        None => template,
    }
}

/// Reads a resource: a declared one first, else one of the catalog's. A resource that is not
/// there is MCP's resource-not-found (-32002) naming the URI asked for in its data (`uri`).
pub(crate) async fn read(
    dispatcher: &Dispatcher,
    declared: &Resources,
    context: CommandContext,
    uri: &str,
) -> Result<ReadResourceResult, ErrorData> {
    read_any(dispatcher, declared, context, uri)
        .await
        .map_err(|error| naming_uri(error, uri))
}

/// Adds `uri` to the data of a resource-not-found error.
fn naming_uri(mut error: ErrorData, uri: &str) -> ErrorData {
    if error.code == ErrorCode::RESOURCE_NOT_FOUND {
        let mut data = match error.data.take() {
            Some(Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        data.insert("uri".to_owned(), Value::from(uri));
        error.data = Some(Value::Object(data));
    }
    error
}

async fn read_any(
    dispatcher: &Dispatcher,
    declared: &Resources,
    context: CommandContext,
    uri: &str,
) -> Result<ReadResourceResult, ErrorData> {
    if declared.find(uri).is_some() {
        let contents = declared.read(uri, context).await.map_err(error_data)?;
        let contents = contents
            .iter()
            .map(|contents| {
                serde_json::to_value(contents)
                    .and_then(serde_json::from_value)
                    .map_err(|error| {
                        ErrorData::internal_error(
                            format!("the contents of '{uri}' could not be encoded: {error}"),
                            None,
                        )
                    })
            })
            .collect::<Result<Vec<ResourceContents>, ErrorData>>()?;
        return Ok(ReadResourceResult::new(contents));
    }
    let value = if uri == CATALOG_URI {
        catalog(dispatcher)
    } else if let Some(name) = uri.strip_prefix(COMMANDS_PREFIX) {
        command(dispatcher, uri, name).await?
    } else if let Some(name) = uri.strip_prefix(CATEGORIES_PREFIX) {
        category(dispatcher, uri, name)?
    } else {
        let mut error = declared.not_found(uri);
        error.suggestion = Some(format!(
            "{} The catalog's own: {CATALOG_URI}, {COMMANDS_PREFIX}<name>, {CATEGORIES_PREFIX}<name>.",
            error.suggestion.unwrap_or_default()
        ));
        return Err(error_data(error));
    };
    let text = serde_json::to_string_pretty(&value).unwrap_or_default();
    Ok(ReadResourceResult::new(vec![
        ResourceContents::TextResourceContents {
            uri: uri.to_owned(),
            mime_type: Some(JSON.to_owned()),
            text,
            meta: None,
        },
    ]))
}

/// A declared resource's failure as a JSON-RPC error: `NOT_FOUND` is MCP's
/// resource-not-found (-32002), `VALIDATION_ERROR` invalid params (-32602), anything else
/// an internal error; the data holds the stable code, the suggestion, whether to retry
/// and the details.
pub(in crate::mcp) fn error_data(error: CommandError) -> ErrorData {
    let data = Some(super::errors::error_data(&error));
    if error.is(codes::NOT_FOUND) {
        ErrorData::resource_not_found(error.message, data)
    } else if error.is(codes::VALIDATION_ERROR) {
        ErrorData::invalid_params(error.message, data)
    } else {
        ErrorData::internal_error(error.message, data)
    }
}

fn catalog(dispatcher: &Dispatcher) -> Value {
    let categories: Vec<Value> = dispatcher
        .available_categories()
        .iter()
        .map(|(name, count)| {
            json!({
                "name": name,
                "count": count,
                "description": dispatcher.registry().category_description(name),
                "uri": format!("{CATEGORIES_PREFIX}{name}"),
            })
        })
        .collect();
    json!({"commands": dispatcher.exposed_count(), "categories": categories})
}

async fn command(dispatcher: &Dispatcher, uri: &str, name: &str) -> Result<Value, ErrorData> {
    let detail = dispatcher.detail(json!({"command": name})).await;
    let entry = detail
        .data
        .and_then(|data| data.as_array().and_then(|entries| entries.first().cloned()))
        .unwrap_or(Value::Null);
    if entry["found"] == true {
        return Ok(entry);
    }
    Err(ErrorData::resource_not_found(
        format!("no command named '{name}' ({uri})"),
        Some(json!({
            "suggestion": entry["error"]["suggestion"],
            "suggestions": dispatcher.suggest(name, 3),
        })),
    ))
}

fn category(dispatcher: &Dispatcher, uri: &str, name: &str) -> Result<Value, ErrorData> {
    let commands: Vec<Value> = dispatcher
        .exposed_entries()
        .filter(|entry| entry.category() == name)
        .map(|entry| {
            json!({
                "name": entry.name(),
                "description": summary(entry.description()),
                "mutation": entry.is_mutation(),
                "uri": format!("{COMMANDS_PREFIX}{}", entry.name()),
            })
        })
        .collect();
    if commands.is_empty() {
        let known = dispatcher.available_categories().iter().map(|(c, _)| *c);
        let similar = crate::similarity::find_similar(name, known, 3);
        return Err(ErrorData::resource_not_found(
            format!("no category named '{name}' ({uri})"),
            Some(
                json!({"suggestions": similar, "suggestion": format!("Read {CATALOG_URI} for every category.")}),
            ),
        ));
    }
    Ok(json!({
        "name": name,
        "description": dispatcher.registry().category_description(name),
        "count": commands.len(),
        "commands": commands,
    }))
}
