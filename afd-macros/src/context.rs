//! `context! { ... }`: the declaration of a runtime context, parsed, validated and
//! expanded into an `inventory` registration like a command's.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseStream, Parser};
use syn::{Attribute, LitInt, LitStr, Token};

use crate::attr::{Attr, Flag, flag, parse_keys, string_list, string_value};
use crate::case::is_kebab;
use crate::errors::Errors;
use crate::valid::kebab_hint;
use crate::words::ContextKey;

/// A parsed declaration.
struct Declaration {
    docs: Vec<Attribute>,
    name: Attr<LitStr>,
    parent: Attr<LitStr>,
    priority: Attr<LitInt>,
    triggers: Attr<Vec<LitStr>>,
    read_only: Flag,
}

/// Expands `context! { /// doc  name = "...", ... }`.
pub fn context(input: TokenStream) -> TokenStream {
    let errors = Errors::default();
    let declaration = parse(&errors, input);
    validate(&errors, &declaration);
    match errors.check() {
        Ok(()) => expand(&declaration),
        Err(error) => error.to_compile_error(),
    }
}

fn parse(errors: &Errors, input: TokenStream) -> Declaration {
    let mut declaration = Declaration {
        docs: Vec::new(),
        name: Attr::none(ContextKey::Name),
        parent: Attr::none(ContextKey::Parent),
        priority: Attr::none(ContextKey::Priority),
        triggers: Attr::none(ContextKey::Triggers),
        read_only: Attr::none(ContextKey::ReadOnly),
    };
    let parser = |stream: ParseStream<'_>| -> syn::Result<()> {
        declaration.docs = stream.call(Attribute::parse_outer)?;
        let keys = stream.parse::<TokenStream>()?;
        parse_keys(errors, keys, |key, meta| {
            parse_key(errors, &mut declaration, key, meta)
        });
        Ok(())
    };
    if let Err(error) = parser.parse2(input) {
        errors.syn_error(error);
    }
    declaration
}

fn parse_key(
    errors: &Errors,
    declaration: &mut Declaration,
    key: ContextKey,
    meta: &ParseNestedMeta<'_>,
) -> syn::Result<()> {
    let path = &meta.path;
    match key {
        ContextKey::Name => declaration.name.set(errors, path, string_value(meta)?),
        ContextKey::Parent => declaration.parent.set(errors, path, string_value(meta)?),
        ContextKey::Triggers => declaration.triggers.set(errors, path, string_list(meta)?),
        ContextKey::ReadOnly => declaration.read_only.set(errors, path, flag(meta)?),
        ContextKey::Priority => {
            if !meta.input.peek(Token![=]) {
                return Err(meta.error("expected `priority = <integer>`"));
            }
            let value: syn::Expr = meta.value()?.parse()?;
            match value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(int),
                    ..
                }) => declaration.priority.set(errors, path, int),
                syn::Expr::Unary(syn::ExprUnary {
                    op: syn::UnOp::Neg(_),
                    ..
                }) => {
                    return Err(syn::Error::new_spanned(
                        value,
                        "`priority` is 0 or more: higher is suggested first",
                    ));
                }
                other => {
                    return Err(syn::Error::new_spanned(
                        other,
                        "expected an integer: `priority = 10`",
                    ));
                }
            }
        }
    }
    Ok(())
}

fn description(docs: &[Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in docs.iter().filter(|attr| attr.path().is_ident("doc")) {
        if let syn::Meta::NameValue(syn::MetaNameValue {
            value:
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(text),
                    ..
                }),
            ..
        }) = &attr.meta
        {
            lines.push(text.value().trim().to_owned());
        }
    }
    lines.join(" ").trim().to_owned()
}

fn validate(errors: &Errors, declaration: &Declaration) {
    for attr in &declaration.docs {
        if !attr.path().is_ident("doc") {
            errors.error_spanned_by(attr, "only doc comments may precede a context's keys");
        }
    }
    let Some(name) = declaration.name.get() else {
        errors.error_at(
            Span::call_site(),
            "a context needs a name: `name = \"document-editing\"`",
        );
        return;
    };
    let value = name.value();
    if !is_kebab(&value) {
        errors.error_spanned_by(
            name,
            format!(
                "context names are kebab-case: `{}`, not `{value}`",
                kebab_hint(&value)
            ),
        );
    }
    if description(&declaration.docs).is_empty() {
        errors.error_spanned_by(
            name,
            "a context needs a doc comment: agents read it to choose a context (`/// Editing the document's text.`)",
        );
    }
    if let Some(parent) = declaration.parent.get() {
        let parent_name = parent.value();
        if parent_name == value {
            errors.error_spanned_by(parent, "a context cannot be its own parent");
        } else if !is_kebab(&parent_name) {
            errors.error_spanned_by(
                parent,
                format!(
                    "context names are kebab-case: `{}`, not `{parent_name}`",
                    kebab_hint(&parent_name)
                ),
            );
        }
    }
    if let Some(priority) = declaration.priority.get()
        && priority.base10_parse::<u16>().is_err()
    {
        errors.error_spanned_by(priority, "`priority` is an integer from 0 to 65535");
    }
    let triggers = declaration
        .triggers
        .get()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (index, trigger) in triggers.iter().enumerate() {
        let word = trigger.value();
        if word.trim().is_empty() {
            errors.error_spanned_by(trigger, "a trigger keyword cannot be empty");
        } else if triggers[..index].iter().any(|seen| seen.value() == word) {
            errors.error_spanned_by(trigger, format!("duplicate trigger `{word}`"));
        }
    }
}

fn expand(declaration: &Declaration) -> TokenStream {
    let rt = quote!(::afd_runtime::__private);
    let name = declaration.name.get().expect("validated");
    let description = description(&declaration.docs);
    let mut calls = TokenStream::new();
    if let Some(parent) = declaration.parent.get() {
        calls.extend(quote!(.with_parent(#parent)));
    }
    if let Some(priority) = declaration.priority.get() {
        calls.extend(quote!(.with_priority(#priority)));
    }
    if let Some(triggers) = declaration.triggers.get() {
        calls.extend(quote!(.with_triggers(&[#(#triggers),*])));
    }
    if declaration.read_only.get().is_some() {
        calls.extend(quote!(.with_read_only()));
    }
    let location = crate::expand::source_location(name.span(), &rt);
    quote! {
        const _: () = {
            #rt::inventory::submit! {
                #rt::ContextDef::new(#name, #description, #location) #calls
            }
        };
    }
}
