//! The arguments of `#[command(...)]`: a closed set of keys, each set at most once.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::punctuated::Punctuated;
use syn::{LitBool, LitStr, Token};

use crate::case::closest;
use crate::errors::Errors;

/// The keys `#[command(...)]` accepts.
pub mod keys {
    pub const NAME: &str = "name";
    pub const CATEGORY: &str = "category";
    pub const TAGS: &str = "tags";
    pub const MUTATION: &str = "mutation";
    pub const DESTRUCTIVE: &str = "destructive";
    pub const IDEMPOTENT: &str = "idempotent";
    pub const CONFIRM_PROMPT: &str = "confirm_prompt";
    pub const EXECUTION_TIME: &str = "execution_time";
    pub const ERRORS: &str = "errors";
    pub const HANDOFF: &str = "handoff";
    pub const HANDOFF_PROTOCOL: &str = "handoff_protocol";
    pub const VERSION: &str = "version";
    pub const EXPOSE: &str = "expose";
    pub const ALIASES: &str = "aliases";
    pub const DEPRECATED_ALIASES: &str = "deprecated_aliases";
    pub const EAGER: &str = "eager";
    pub const CONTEXTS: &str = "contexts";

    pub const ALL: &[&str] = &[
        NAME,
        CATEGORY,
        TAGS,
        MUTATION,
        DESTRUCTIVE,
        IDEMPOTENT,
        CONFIRM_PROMPT,
        EXECUTION_TIME,
        ERRORS,
        HANDOFF,
        HANDOFF_PROTOCOL,
        VERSION,
        EXPOSE,
        ALIASES,
        DEPRECATED_ALIASES,
        EAGER,
        CONTEXTS,
    ];

    /// The surfaces `expose(...)` accepts.
    pub const SURFACES: &[&str] = &["mcp", "cli", "agent", "palette"];
}

/// One attribute value: remembers the tokens it was set with, and flags a second setting.
pub struct Attr<T> {
    key: &'static str,
    value: Option<(TokenStream, T)>,
}

impl<T> Attr<T> {
    pub(crate) fn none(key: &'static str) -> Self {
        Attr { key, value: None }
    }

    pub(crate) fn set(&mut self, errors: &Errors, tokens: impl ToTokens, value: T) {
        let tokens = tokens.into_token_stream();
        if self.value.is_some() {
            errors.error_spanned_by(&tokens, format!("duplicate `{}`", self.key));
        } else {
            self.value = Some((tokens, value));
        }
    }

    /// The value, if set.
    pub fn get(&self) -> Option<&T> {
        self.value.as_ref().map(|(_, value)| value)
    }

    /// The tokens the value was set with, for spans.
    pub fn tokens(&self) -> Option<&TokenStream> {
        self.value.as_ref().map(|(tokens, _)| tokens)
    }
}

/// A flag such as `mutation`: set or not; the span of the key when set.
pub type Flag = Attr<Span>;

/// The parsed `#[command(...)]` arguments.
pub struct Attrs {
    pub name: Attr<LitStr>,
    pub category: Attr<LitStr>,
    pub tags: Attr<Vec<LitStr>>,
    pub mutation: Flag,
    pub destructive: Flag,
    pub idempotent: Flag,
    pub confirm_prompt: Attr<LitStr>,
    pub execution_time: Attr<LitStr>,
    pub error_codes: Attr<Vec<LitStr>>,
    pub handoff: Flag,
    pub handoff_protocol: Attr<LitStr>,
    pub version: Attr<LitStr>,
    pub expose: Attr<Vec<(syn::Ident, LitBool)>>,
    pub aliases: Attr<Vec<LitStr>>,
    pub deprecated_aliases: Attr<Vec<LitStr>>,
    pub eager: Flag,
    pub contexts: Attr<Vec<LitStr>>,
}

impl Attrs {
    /// Parses the arguments, recording every mistake in `errors` and carrying on.
    pub fn parse(errors: &Errors, args: TokenStream) -> Attrs {
        let mut attrs = Attrs {
            name: Attr::none(keys::NAME),
            category: Attr::none(keys::CATEGORY),
            tags: Attr::none(keys::TAGS),
            mutation: Attr::none(keys::MUTATION),
            destructive: Attr::none(keys::DESTRUCTIVE),
            idempotent: Attr::none(keys::IDEMPOTENT),
            confirm_prompt: Attr::none(keys::CONFIRM_PROMPT),
            execution_time: Attr::none(keys::EXECUTION_TIME),
            error_codes: Attr::none(keys::ERRORS),
            handoff: Attr::none(keys::HANDOFF),
            handoff_protocol: Attr::none(keys::HANDOFF_PROTOCOL),
            version: Attr::none(keys::VERSION),
            expose: Attr::none(keys::EXPOSE),
            aliases: Attr::none(keys::ALIASES),
            deprecated_aliases: Attr::none(keys::DEPRECATED_ALIASES),
            eager: Attr::none(keys::EAGER),
            contexts: Attr::none(keys::CONTEXTS),
        };
        let parser = syn::meta::parser(|meta| {
            if let Err(error) = attrs.parse_one(errors, &meta) {
                errors.syn_error(error);
                skip_value(&meta)?;
            }
            Ok(())
        });
        if let Err(error) = syn::parse::Parser::parse2(parser, args) {
            errors.syn_error(error);
        }
        attrs
    }

    fn parse_one(&mut self, errors: &Errors, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let path = &meta.path;
        let Some(key) = path.get_ident().map(ToString::to_string) else {
            return Err(meta.error(unknown_key_message(&path.to_token_stream().to_string())));
        };
        match key.as_str() {
            keys::NAME => self.name.set(errors, path, string_value(meta)?),
            keys::CATEGORY => self.category.set(errors, path, string_value(meta)?),
            keys::CONFIRM_PROMPT => self.confirm_prompt.set(errors, path, string_value(meta)?),
            keys::EXECUTION_TIME => self.execution_time.set(errors, path, string_value(meta)?),
            keys::HANDOFF_PROTOCOL => self.handoff_protocol.set(errors, path, string_value(meta)?),
            keys::VERSION => self.version.set(errors, path, string_value(meta)?),
            keys::TAGS => self.tags.set(errors, path, string_list(meta)?),
            keys::ERRORS => self.error_codes.set(errors, path, string_list(meta)?),
            keys::ALIASES => self.aliases.set(errors, path, string_list(meta)?),
            keys::DEPRECATED_ALIASES => {
                self.deprecated_aliases
                    .set(errors, path, string_list(meta)?)
            }
            keys::CONTEXTS => self.contexts.set(errors, path, string_list(meta)?),
            keys::MUTATION => self.mutation.set(errors, path, flag(meta)?),
            keys::DESTRUCTIVE => self.destructive.set(errors, path, flag(meta)?),
            keys::IDEMPOTENT => self.idempotent.set(errors, path, flag(meta)?),
            keys::HANDOFF => self.handoff.set(errors, path, flag(meta)?),
            keys::EAGER => self.eager.set(errors, path, flag(meta)?),
            keys::EXPOSE => self.expose.set(errors, path, surfaces(errors, meta)?),
            other => return Err(meta.error(unknown_key_message(other))),
        }
        Ok(())
    }
}

fn unknown_key_message(key: &str) -> String {
    format!(
        "unknown `#[command]` key `{key}`; {}",
        expectation(key, keys::ALL)
    )
}

/// "did you mean `category`?" when a candidate is close, else "expected one of ...".
pub(crate) fn expectation(word: &str, candidates: &[&str]) -> String {
    if let Some(candidate) = closest(word, candidates) {
        return format!("did you mean `{candidate}`?");
    }
    let expected: Vec<String> = candidates.iter().map(|c| format!("`{c}`")).collect();
    format!("expected one of {}", expected.join(", "))
}

fn key_name(meta: &ParseNestedMeta<'_>) -> String {
    meta.path.to_token_stream().to_string()
}

/// `key = "value"`.
pub(crate) fn string_value(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    if !meta.input.peek(Token![=]) {
        return Err(meta.error(format!("expected `{0} = \"...\"`", key_name(meta))));
    }
    let key = key_name(meta);
    match meta.value()?.parse::<syn::Expr>()? {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(lit),
            ..
        }) => Ok(lit),
        other => Err(syn::Error::new_spanned(
            other,
            format!("expected a string: `{key} = \"...\"`"),
        )),
    }
}

/// `key("a", "b")`.
pub(crate) fn string_list(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<LitStr>> {
    if meta.input.peek(Token![=]) {
        // `tags = "x"`: show the list form with the user's value.
        let key = key_name(meta);
        let eq: Token![=] = meta.input.parse()?;
        let value: syn::Expr = meta.input.parse()?;
        let example = match &value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(lit),
                ..
            }) => format!("{key}({})", lit.to_token_stream()),
            _ => format!("{key}(\"...\", ...)"),
        };
        return Err(syn::Error::new_spanned(
            quote::quote!(#eq #value),
            format!("`{key}` takes a list: write `{example}`"),
        ));
    }
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error(format!("expected `{0}(\"...\", ...)`", key_name(meta))));
    }
    let content;
    syn::parenthesized!(content in meta.input);
    Ok(Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?
        .into_iter()
        .collect())
}

/// A bare key such as `mutation`.
pub(crate) fn flag(meta: &ParseNestedMeta<'_>) -> syn::Result<Span> {
    if !meta.input.is_empty() && !meta.input.peek(Token![,]) {
        // `mutation = true` or `mutation(true)`: the error is on what follows the key.
        let key = key_name(meta);
        let message = format!("`{key}` is a flag: write `{key}` alone");
        if meta.input.peek(Token![=]) {
            let eq: Token![=] = meta.input.parse()?;
            let value: syn::Expr = meta.input.parse()?;
            return Err(syn::Error::new_spanned(quote::quote!(#eq #value), message));
        }
        if meta.input.peek(syn::token::Paren) {
            let content;
            let parens = syn::parenthesized!(content in meta.input);
            content.parse::<TokenStream>()?;
            return Err(syn::Error::new(parens.span.join(), message));
        }
        return Err(meta.error(message));
    }
    Ok(syn::spanned::Spanned::span(&meta.path))
}

/// `expose(mcp = false, cli = true)`.
fn surfaces(
    errors: &Errors,
    meta: &ParseNestedMeta<'_>,
) -> syn::Result<Vec<(syn::Ident, LitBool)>> {
    let mut surfaces: Vec<(syn::Ident, LitBool)> = Vec::new();
    meta.parse_nested_meta(|inner| {
        let Some(ident) = inner.path.get_ident().cloned() else {
            return Err(inner.error("expected a surface name"));
        };
        // Read the value first, so an unknown surface does not derail the rest.
        let value = inner.value()?.parse::<LitBool>()?;
        let surface = ident.to_string();
        if !keys::SURFACES.contains(&surface.as_str()) {
            errors.error_spanned_by(
                &ident,
                format!(
                    "unknown surface `{surface}`; {}",
                    expectation(&surface, keys::SURFACES)
                ),
            );
            return Ok(());
        }
        if surfaces.iter().any(|(seen, _)| *seen == ident) {
            errors.error_spanned_by(&ident, format!("duplicate `{ident}`"));
        } else {
            surfaces.push((ident, value));
        }
        Ok(())
    })?;
    Ok(surfaces)
}

/// After an error, consumes the rest of the key's value so the next keys are still read.
pub(crate) fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.input.parse::<Token![=]>()?;
        meta.input.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<TokenStream>()?;
    }
    Ok(())
}
