//! Checks on the values as a whole: names (valid MCP tool names when given, kebab-case
//! when derived from the function; context names in kebab-case), keys that require another key,
//! the doc comment, repeated list entries, and for `#[command]` the attributes against the
//! function. Every failed check is recorded; none stops the others.

use proc_macro2::Span;
use syn::LitStr;

use crate::ast::{Declaration, Handler};
use crate::attr::{CommandAttrs, ContextAttrs};
use crate::case::{is_kebab, is_screaming_snake, is_tool_name, to_kebab};
use crate::errors::Errors;

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
    if attrs.handoff.get().is_none()
        && let Some(tokens) = attrs.handoff_protocol.tokens()
    {
        errors.error_spanned_by(tokens, "`handoff_protocol` requires `handoff`");
    }
    if let Some(version) = attrs.version.get()
        && version.value().trim().is_empty()
    {
        errors.error_spanned_by(version, "`version` cannot be empty");
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
