//! Checks that involve several attributes, or an attribute and the function.

use crate::ast::Handler;
use crate::attr::CommandAttrs;
use crate::case::{is_kebab, is_screaming_snake, to_kebab};
use crate::errors::Errors;

/// The command's name: `name = "..."`, else the function name in kebab-case.
pub fn command_name(attrs: &CommandAttrs, handler: &Handler<'_>) -> String {
    attrs
        .name
        .get()
        .map(syn::LitStr::value)
        .unwrap_or_else(|| to_kebab(&handler.item.sig.ident.to_string()))
}

/// Records every inconsistency between the attributes and the function.
pub fn check(errors: &Errors, attrs: &CommandAttrs, handler: &Handler<'_>) {
    let name = command_name(attrs, handler);
    match attrs.name.get() {
        Some(lit) if !is_kebab(&name) => errors.error_spanned_by(
            lit,
            format!("command names are kebab-case: `{}`, not `{name}`", kebab_hint(&name)),
        ),
        None if !is_kebab(&name) => errors.error_at(
            handler.ident_span(),
            format!("the command name `{name}` derived from this function is not kebab-case; set `name = \"...\"`"),
        ),
        _ => {}
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
        let value = alias.value();
        if !is_kebab(&value) {
            errors.error_spanned_by(
                alias,
                format!(
                    "aliases are kebab-case: `{}`, not `{value}`",
                    kebab_hint(&value)
                ),
            );
        } else if value == name {
            errors.error_spanned_by(
                alias,
                format!("`{value}` is the command's own name, not an alias"),
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
        let value = context.value();
        if !is_kebab(&value) {
            errors.error_spanned_by(
                context,
                format!(
                    "context names are kebab-case: `{}`, not `{value}`",
                    kebab_hint(&value)
                ),
            );
        } else if contexts[..index].iter().any(|seen| seen.value() == value) {
            errors.error_spanned_by(context, format!("duplicate context `{value}`"));
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

pub(crate) fn kebab_hint(name: &str) -> String {
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
