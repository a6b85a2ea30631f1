//! Checks on the values as a whole: names (valid MCP tool names when given, kebab-case
//! when derived from the function; context names in kebab-case), keys that require another key,
//! the doc comment, repeated list entries, and for `#[command]` the attributes against the
//! function. For `#[resource]`: the URI or template, and the template's variables against
//! the function's parameters; for `#[prompt]`: the name and the one arguments parameter.
//! Every failed check is recorded; none stops the others.

use proc_macro2::Span;
use syn::LitStr;

use crate::ast::{DeclFn, Declaration, Handler};
use crate::attr::{CommandAttrs, ContextAttrs, PromptAttrs, ResourceAttrs};
use crate::case::{is_kebab, is_screaming_snake, is_tool_name, to_kebab};
use crate::errors::Errors;
use crate::words::{ClientNeed, ExecutionTime, TaskSupport, Words as _};

/// The command's name: `name = "..."`, else the function name in kebab-case.
pub fn command_name(attrs: &CommandAttrs, handler: &Handler<'_>) -> String {
    attrs
        .name
        .get()
        .map(LitStr::value)
        .unwrap_or_else(|| to_kebab(&handler.item.sig.ident.to_string()))
}

/// Records every mistake in a command's attributes and every inconsistency between them
/// and the function.
pub fn command(errors: &Errors, attrs: &CommandAttrs, handler: &Handler<'_>) {
    let name = command_name(attrs, handler);
    match attrs.name.get() {
        Some(lit) => {
            tool_name(errors, lit, "command names");
        }
        None if !is_kebab(&name) => errors.error_at(
            handler.ident_span(),
            format!("the command name `{name}` derived from this function is not kebab-case; set `name = \"...\"`"),
        ),
        None => {}
    }

    if handler.description().is_empty() {
        errors.error_at(
            handler.ident_span(),
            "a command needs a doc comment: its first sentence is the summary agents see (`/// Create a todo.`)",
        );
    }

    for alias in attrs
        .aliases
        .get()
        .into_iter()
        .chain(attrs.deprecated_aliases.get())
        .flatten()
    {
        if tool_name(errors, alias, "aliases") && alias.value() == name {
            errors.error_spanned_by(
                alias,
                format!(
                    "`{}` is the command's own name, not an alias",
                    alias.value()
                ),
            );
        }
    }

    if let Some(category) = attrs.category.get()
        && category.value().trim().is_empty()
    {
        errors.error_spanned_by(category, "`category` cannot be empty");
    }
    for tag in attrs.tags.get().into_iter().flatten() {
        if tag.value().trim().is_empty() {
            errors.error_spanned_by(tag, "a tag cannot be empty");
        }
    }
    let contexts = attrs.contexts.get().map(Vec::as_slice).unwrap_or_default();
    for (index, context) in contexts.iter().enumerate() {
        if kebab(errors, context, "context names") && repeats(contexts, index) {
            errors.error_spanned_by(context, format!("duplicate context `{}`", context.value()));
        }
    }
    if let (Some(tokens), true) = (attrs.contexts.tokens(), contexts.is_empty()) {
        errors.error_spanned_by(
            tokens,
            "`contexts()` is empty: name at least one context, or remove it to make the command universal",
        );
    }
    let scopes = attrs.scopes.get().map(Vec::as_slice).unwrap_or_default();
    for (index, scope) in scopes.iter().enumerate() {
        if !is_scope_token(&scope.value()) {
            errors.error_spanned_by(
                scope,
                "a scope is one OAuth scope token: no spaces, quotes or backslashes, as `orders:write`",
            );
        } else if repeats(scopes, index) {
            errors.error_spanned_by(scope, format!("duplicate scope `{}`", scope.value()));
        }
    }
    if let (Some(tokens), true) = (attrs.scopes.tokens(), scopes.is_empty()) {
        errors.error_spanned_by(
            tokens,
            "`scopes()` is empty: name the scopes a caller needs, or remove it",
        );
    }
    let needs = attrs
        .needs_client
        .get()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (index, need) in needs.iter().enumerate() {
        if ClientNeed::from_word(&need.value()).is_none() {
            errors.error_spanned_by(need, ClientNeed::unknown(&need.value()));
        } else if repeats(needs, index) {
            errors.error_spanned_by(need, format!("duplicate `{}`", need.value()));
        }
    }
    if let (Some(tokens), true) = (attrs.needs_client.tokens(), needs.is_empty()) {
        errors.error_spanned_by(
            tokens,
            "`needs_client()` is empty: name what the client must support (\"sampling\", \"elicitation\", \"roots\"), or remove it",
        );
    }
    // A call can only start as a task later if the command runs as one at all.
    let tasks = match attrs.task.get() {
        Some(support) => *support != TaskSupport::Forbidden,
        None => attrs.execution_time.get() == Some(&ExecutionTime::LongRunning),
    };
    if let (Some(tokens), false) = (attrs.task_start.tokens(), tasks) {
        errors.error_spanned_by(
            tokens,
            "`task_start` needs a command that runs as a task: add `task = \"optional\"` or `task = \"required\"`",
        );
    }
    for code in attrs.error_codes.get().into_iter().flatten() {
        if !is_screaming_snake(&code.value()) {
            errors.error_spanned_by(code, "error codes are SCREAMING_SNAKE_CASE: `NOT_FOUND`");
        }
    }

    if attrs.mutation.get().is_none() {
        if let Some(tokens) = attrs.destructive.tokens() {
            errors.error_spanned_by(tokens, "`destructive` requires `mutation`");
        }
        if let Some(tokens) = attrs.confirm_prompt.tokens() {
            errors.error_spanned_by(tokens, "`confirm_prompt` requires `mutation`");
        }
        if let Some(tokens) = attrs.idempotent.tokens() {
            errors.error_spanned_by(
                tokens,
                "`idempotent` requires `mutation`: read-only commands are idempotent already",
            );
        }
    }
    if let (Some(tokens), true) = (
        attrs.blocking.tokens(),
        handler.item.sig.asyncness.is_some(),
    ) {
        errors.error_spanned_by(
            tokens,
            "`blocking` is for a plain `fn`: an `async fn` must not block; remove `blocking`, or make the function sync and let it block",
        );
    }
    if attrs.handoff.get().is_none()
        && let Some(tokens) = attrs.handoff_protocol.tokens()
    {
        errors.error_spanned_by(tokens, "`handoff_protocol` requires `handoff`");
    }
    if let Some(title) = attrs.title.get()
        && title.value().trim().is_empty()
    {
        errors.error_spanned_by(title, "`title` cannot be empty");
    }
    if let Some(version) = attrs.version.get()
        && version.value().trim().is_empty()
    {
        errors.error_spanned_by(version, "`version` cannot be empty");
    }
}

/// A resource's or prompt's name: `name = "..."`, else the function name in kebab-case.
pub fn declared_name(name: Option<&LitStr>, decl: &DeclFn<'_>) -> String {
    name.map(LitStr::value)
        .unwrap_or_else(|| to_kebab(&decl.item.sig.ident.to_string()))
}

/// The description: `description = "..."`, else the doc comment.
pub fn declared_description(description: Option<&LitStr>, decl: &DeclFn<'_>) -> String {
    description
        .map(LitStr::value)
        .unwrap_or_else(|| decl.description())
}

/// Records every mistake in a resource's attributes and between them and the function.
pub fn resource(errors: &Errors, attrs: &ResourceAttrs, decl: &DeclFn<'_>) {
    let name = declared_name(attrs.name.get(), decl);
    if name.trim().is_empty() {
        errors.error_spanned_by(attrs.name.tokens(), "`name` cannot be empty");
    }
    if declared_description(attrs.description.get(), decl).is_empty() {
        errors.error_at(
            decl.item.sig.ident.span(),
            "a resource needs a description: a doc comment or `description = \"...\"`",
        );
    }
    if decl.output.is_none() {
        errors.error_at(
            decl.item.sig.ident.span(),
            "a resource returns its contents: text (`-> String`), bytes (`-> Vec<u8>`) or `ResourceContents`",
        );
    }
    if let Some(mime) = attrs.mime_type.get()
        && !mime.value().contains('/')
    {
        errors.error_spanned_by(mime, "`mime_type` is a media type such as `text/plain`");
    }
    let variables = match (attrs.uri.get(), attrs.uri_template.get()) {
        (Some(_), Some(_)) => {
            errors.error_spanned_by(
                attrs.uri_template.tokens(),
                "a resource has `uri` or `uri_template`, not both",
            );
            return;
        }
        (None, None) => {
            errors.error_at(
                Span::call_site(),
                "a resource needs `uri = \"...\"` or `uri_template = \"...\"`",
            );
            return;
        }
        (Some(uri), None) => {
            let value = uri.value();
            if value.contains(['{', '}']) {
                errors.error_spanned_by(
                    uri,
                    "this URI holds `{...}`: declare a template with `uri_template = \"...\"`",
                );
            } else if let Err(message) = crate::uri::check_uri(&value) {
                errors.error_spanned_by(uri, message);
            }
            if let Some(completers) = attrs.complete.get() {
                for completer in completers {
                    errors.error_spanned_by(
                        &completer.argument,
                        "completions are for template variables: a resource at a fixed `uri` has none",
                    );
                }
            }
            for param in decl.values() {
                errors.error_spanned_by(
                    param.ident,
                    format!(
                        "`{}` is not a variable of the URI: a resource at a fixed `uri` takes only the context",
                        param.ident
                    ),
                );
            }
            return;
        }
        (None, Some(template)) => match crate::uri::template_variables(&template.value()) {
            Ok(variables) => (template, variables),
            Err(message) => {
                errors.error_spanned_by(template, message);
                return;
            }
        },
    };
    let (template, variables) = variables;
    let list = variables
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ");
    for param in decl.values() {
        let ident = param.ident.to_string();
        if !variables.contains(&ident) {
            errors.error_spanned_by(
                param.ident,
                format!(
                    "`{ident}` is not a variable of `{}`: its variables are {list}",
                    template.value()
                ),
            );
        }
    }
    for variable in &variables {
        if !decl.values().any(|param| param.ident == variable) {
            errors.error_spanned_by(
                template,
                format!(
                    "the template variable `{variable}` has no parameter: add `{variable}: String` to the function"
                ),
            );
        }
    }
    for completer in attrs.complete.get().into_iter().flatten() {
        if !variables.contains(&completer.argument.to_string()) {
            errors.error_spanned_by(
                &completer.argument,
                format!(
                    "`{}` is not a variable of `{}`: its variables are {list}",
                    completer.argument,
                    template.value()
                ),
            );
        }
    }
}

/// Records every mistake in a prompt's attributes and between them and the function.
pub fn prompt(errors: &Errors, attrs: &PromptAttrs, decl: &DeclFn<'_>) {
    let name = declared_name(attrs.name.get(), decl);
    match attrs.name.get() {
        Some(lit) => {
            tool_name(errors, lit, "prompt names");
        }
        None if !is_tool_name(&name) => errors.error_at(
            decl.item.sig.ident.span(),
            format!("the prompt name `{name}` derived from this function is not usable; set `name = \"...\"`"),
        ),
        None => {}
    }
    if declared_description(attrs.description.get(), decl).is_empty() {
        errors.error_at(
            decl.item.sig.ident.span(),
            "a prompt needs a description: a doc comment or `description = \"...\"`",
        );
    }
    for extra in decl.values().skip(1) {
        errors.error_spanned_by(
            extra.ident,
            "a prompt takes at most one arguments parameter: gather the arguments into one struct",
        );
    }
    if decl.output.is_none() {
        errors.error_at(
            decl.item.sig.ident.span(),
            "a prompt returns its messages: `-> Vec<PromptMessage>`",
        );
    }
    if let (Some(completers), None) = (attrs.complete.get(), decl.values().next()) {
        for completer in completers {
            errors.error_spanned_by(
                &completer.argument,
                "this prompt takes no arguments: there is nothing to complete",
            );
        }
    }
}

/// Records every mistake in a context's declaration.
pub fn context(errors: &Errors, declaration: &Declaration) {
    for attr in &declaration.docs {
        if !attr.path().is_ident("doc") {
            errors.error_spanned_by(attr, "only doc comments may precede a context's keys");
        }
    }
    let attrs: &ContextAttrs = &declaration.attrs;
    let Some(name) = attrs.name.get() else {
        errors.error_at(
            Span::call_site(),
            "a context needs a name: `name = \"document-editing\"`",
        );
        return;
    };
    kebab(errors, name, "context names");
    if declaration.description().is_empty() {
        errors.error_spanned_by(
            name,
            "a context needs a doc comment: agents read it to choose a context (`/// Editing the document's text.`)",
        );
    }
    if let Some(parent) = attrs.parent.get() {
        if parent.value() == name.value() {
            errors.error_spanned_by(parent, "a context cannot be its own parent");
        } else {
            kebab(errors, parent, "context names");
        }
    }
    if let Some(priority) = attrs.priority.get()
        && priority.base10_parse::<u16>().is_err()
    {
        errors.error_spanned_by(priority, "`priority` is an integer from 0 to 65535");
    }
    let triggers = attrs.triggers.get().map(Vec::as_slice).unwrap_or_default();
    for (index, trigger) in triggers.iter().enumerate() {
        let word = trigger.value();
        if word.trim().is_empty() {
            errors.error_spanned_by(trigger, "a trigger keyword cannot be empty");
        } else if repeats(triggers, index) {
            errors.error_spanned_by(trigger, format!("duplicate trigger `{word}`"));
        }
    }
}

/// Whether `lit` is kebab-case; if not, records "`what` are kebab-case: `todo-create`, not
/// `todoCreate`" on it.
fn kebab(errors: &Errors, lit: &LitStr, what: &str) -> bool {
    let value = lit.value();
    let ok = is_kebab(&value);
    if !ok {
        errors.error_spanned_by(
            lit,
            format!(
                "{what} are kebab-case: `{}`, not `{value}`",
                kebab_hint(&value)
            ),
        );
    }
    ok
}

/// Records an error unless `lit` is a valid MCP tool name; whether it is.
fn tool_name(errors: &Errors, lit: &LitStr, what: &str) -> bool {
    let value = lit.value();
    let ok = is_tool_name(&value);
    if !ok {
        errors.error_spanned_by(
            lit,
            format!(
                "{what} are MCP tool names, 1 to 128 of `A-Z a-z 0-9 _ . -`: `{}`, not `{value}`",
                tool_name_hint(&value)
            ),
        );
    }
    ok
}

/// `value` with every run of characters a tool name cannot hold made one `-`.
fn tool_name_hint(value: &str) -> String {
    let mut out = String::new();
    for part in value
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
        .filter(|part| !part.is_empty())
    {
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(part);
    }
    out.chars().take(128).collect()
}

/// An OAuth scope token (RFC 6749, section 3.3): one or more printable ASCII characters
/// other than space, the double quote and the backslash.
fn is_scope_token(value: &str) -> bool {
    !value.is_empty()
        && value
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
}

/// Whether the `index`-th entry of a list repeats an earlier one.
fn repeats(list: &[LitStr], index: usize) -> bool {
    let value = list[index].value();
    list[..index].iter().any(|seen| seen.value() == value)
}

fn kebab_hint(name: &str) -> String {
    let hint = to_kebab(name).replace(|c: char| !(c.is_ascii_alphanumeric() || c == '-'), "-");
    let mut out = String::new();
    for part in hint.split('-').filter(|part| !part.is_empty()) {
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(part);
    }
    out
}
