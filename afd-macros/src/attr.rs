//! The arguments of `#[command(...)]`, `#[resource(...)]` and `#[prompt(...)]` and the keys
//! of `context! { ... }`: comma-separated lists of `key = "value"`, `key("a", "b")`,
//! `complete(arg = path)` and bare flags, read into typed attributes.
//! Each key is set at most once; an unknown or malformed key is recorded and reading
//! carries on, so that every mistake is reported at once.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{LitBool, LitInt, LitStr, Token};

use crate::errors::Errors;
use crate::words::{
    CommandKey, ContextKey, ExecutionTime, PromptKey, ResourceKey, Surface, TaskStart, TaskSupport,
    Words,
};

/// One attribute value: remembers the tokens it was set with, and flags a second setting.
pub struct Attr<T> {
    key: &'static str,
    value: Option<(TokenStream, T)>,
}

impl<T> Attr<T> {
    fn none(key: impl Words) -> Self {
        Attr {
            key: key.word(),
            value: None,
        }
    }

    fn set(&mut self, errors: &Errors, tokens: impl ToTokens, value: T) {
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

/// One `surface = bool` of `expose(...)`, with the surface as written, for the setter's span.
pub struct Exposed {
    pub surface: Surface,
    pub ident: syn::Ident,
    pub on: LitBool,
}

/// The parsed `#[command(...)]` arguments.
pub struct CommandAttrs {
    pub name: Attr<LitStr>,
    pub title: Attr<LitStr>,
    pub category: Attr<LitStr>,
    pub tags: Attr<Vec<LitStr>>,
    pub mutation: Flag,
    pub destructive: Flag,
    pub idempotent: Flag,
    pub open_world: Flag,
    pub confirm_prompt: Attr<LitStr>,
    pub execution_time: Attr<ExecutionTime>,
    pub error_codes: Attr<Vec<LitStr>>,
    pub handoff: Flag,
    pub handoff_protocol: Attr<LitStr>,
    pub version: Attr<LitStr>,
    pub expose: Attr<Vec<Exposed>>,
    pub aliases: Attr<Vec<LitStr>>,
    pub deprecated_aliases: Attr<Vec<LitStr>>,
    pub eager: Flag,
    pub blocking: Flag,
    pub contexts: Attr<Vec<LitStr>>,
    pub scopes: Attr<Vec<LitStr>>,
    pub needs_client: Attr<Vec<LitStr>>,
    pub task: Attr<TaskSupport>,
    pub task_start: Attr<TaskStart>,
    pub crate_path: Attr<syn::Path>,
}

impl CommandAttrs {
    /// Parses the arguments, recording every mistake in `errors` and carrying on.
    pub fn parse(errors: &Errors, args: TokenStream) -> CommandAttrs {
        let mut attrs = CommandAttrs {
            name: Attr::none(CommandKey::Name),
            title: Attr::none(CommandKey::Title),
            category: Attr::none(CommandKey::Category),
            tags: Attr::none(CommandKey::Tags),
            mutation: Attr::none(CommandKey::Mutation),
            destructive: Attr::none(CommandKey::Destructive),
            idempotent: Attr::none(CommandKey::Idempotent),
            open_world: Attr::none(CommandKey::OpenWorld),
            confirm_prompt: Attr::none(CommandKey::ConfirmPrompt),
            execution_time: Attr::none(CommandKey::ExecutionTime),
            error_codes: Attr::none(CommandKey::Errors),
            handoff: Attr::none(CommandKey::Handoff),
            handoff_protocol: Attr::none(CommandKey::HandoffProtocol),
            version: Attr::none(CommandKey::Version),
            expose: Attr::none(CommandKey::Expose),
            aliases: Attr::none(CommandKey::Aliases),
            deprecated_aliases: Attr::none(CommandKey::DeprecatedAliases),
            eager: Attr::none(CommandKey::Eager),
            blocking: Attr::none(CommandKey::Blocking),
            contexts: Attr::none(CommandKey::Contexts),
            scopes: Attr::none(CommandKey::Scopes),
            needs_client: Attr::none(CommandKey::NeedsClient),
            task: Attr::none(CommandKey::Task),
            task_start: Attr::none(CommandKey::TaskStart),
            crate_path: Attr::none(CommandKey::Crate),
        };
        parse_keys(errors, args, |key, meta| attrs.set(errors, key, meta));
        attrs
    }

    fn set(
        &mut self,
        errors: &Errors,
        key: CommandKey,
        meta: &ParseNestedMeta<'_>,
    ) -> syn::Result<()> {
        let path = &meta.path;
        match key {
            CommandKey::Name => self.name.set(errors, path, string_value(meta)?),
            CommandKey::Title => self.title.set(errors, path, string_value(meta)?),
            CommandKey::Category => self.category.set(errors, path, string_value(meta)?),
            CommandKey::ConfirmPrompt => {
                self.confirm_prompt.set(errors, path, string_value(meta)?);
            }
            CommandKey::ExecutionTime => {
                self.execution_time.set(errors, path, execution_time(meta)?);
            }
            CommandKey::HandoffProtocol => {
                self.handoff_protocol.set(errors, path, string_value(meta)?);
            }
            CommandKey::Version => self.version.set(errors, path, string_value(meta)?),
            CommandKey::Tags => self.tags.set(errors, path, string_list(meta)?),
            CommandKey::Errors => self.error_codes.set(errors, path, string_list(meta)?),
            CommandKey::Aliases => self.aliases.set(errors, path, string_list(meta)?),
            CommandKey::DeprecatedAliases => {
                self.deprecated_aliases
                    .set(errors, path, string_list(meta)?);
            }
            CommandKey::Contexts => self.contexts.set(errors, path, string_list(meta)?),
            CommandKey::Scopes => self.scopes.set(errors, path, string_list(meta)?),
            CommandKey::NeedsClient => self.needs_client.set(errors, path, string_list(meta)?),
            CommandKey::Task => self.task.set(errors, path, word(meta)?),
            CommandKey::TaskStart => self.task_start.set(errors, path, word(meta)?),
            CommandKey::Mutation => self.mutation.set(errors, path, flag(meta)?),
            CommandKey::Destructive => self.destructive.set(errors, path, flag(meta)?),
            CommandKey::Idempotent => self.idempotent.set(errors, path, flag(meta)?),
            CommandKey::OpenWorld => self.open_world.set(errors, path, flag(meta)?),
            CommandKey::Handoff => self.handoff.set(errors, path, flag(meta)?),
            CommandKey::Eager => self.eager.set(errors, path, flag(meta)?),
            CommandKey::Blocking => self.blocking.set(errors, path, flag(meta)?),
            CommandKey::Expose => self.expose.set(errors, path, surfaces(errors, meta)?),
            CommandKey::Crate => self.crate_path.set(errors, path, crate_path(meta)?),
        }
        Ok(())
    }
}

/// The parsed keys of `context! { ... }`.
pub struct ContextAttrs {
    pub name: Attr<LitStr>,
    pub parent: Attr<LitStr>,
    pub priority: Attr<LitInt>,
    pub triggers: Attr<Vec<LitStr>>,
    pub read_only: Flag,
    pub crate_path: Attr<syn::Path>,
}

impl ContextAttrs {
    /// Parses the keys, recording every mistake in `errors` and carrying on.
    pub fn parse(errors: &Errors, keys: TokenStream) -> ContextAttrs {
        let mut attrs = ContextAttrs {
            name: Attr::none(ContextKey::Name),
            parent: Attr::none(ContextKey::Parent),
            priority: Attr::none(ContextKey::Priority),
            triggers: Attr::none(ContextKey::Triggers),
            read_only: Attr::none(ContextKey::ReadOnly),
            crate_path: Attr::none(ContextKey::Crate),
        };
        parse_keys(errors, keys, |key, meta| attrs.set(errors, key, meta));
        attrs
    }

    fn set(
        &mut self,
        errors: &Errors,
        key: ContextKey,
        meta: &ParseNestedMeta<'_>,
    ) -> syn::Result<()> {
        let path = &meta.path;
        match key {
            ContextKey::Name => self.name.set(errors, path, string_value(meta)?),
            ContextKey::Parent => self.parent.set(errors, path, string_value(meta)?),
            ContextKey::Priority => self.priority.set(errors, path, priority(meta)?),
            ContextKey::Triggers => self.triggers.set(errors, path, string_list(meta)?),
            ContextKey::ReadOnly => self.read_only.set(errors, path, flag(meta)?),
            ContextKey::Crate => self.crate_path.set(errors, path, crate_path(meta)?),
        }
        Ok(())
    }
}

/// One `arg = path::to_fn` of `complete(...)`.
pub struct Completer {
    pub argument: syn::Ident,
    pub function: syn::Path,
}

/// The parsed `#[resource(...)]` arguments.
pub struct ResourceAttrs {
    pub uri: Attr<LitStr>,
    pub uri_template: Attr<LitStr>,
    pub name: Attr<LitStr>,
    pub title: Attr<LitStr>,
    pub description: Attr<LitStr>,
    pub mime_type: Attr<LitStr>,
    pub complete: Attr<Vec<Completer>>,
    pub crate_path: Attr<syn::Path>,
}

impl ResourceAttrs {
    /// Parses the arguments, recording every mistake in `errors` and carrying on.
    pub fn parse(errors: &Errors, args: TokenStream) -> ResourceAttrs {
        let mut attrs = ResourceAttrs {
            uri: Attr::none(ResourceKey::Uri),
            uri_template: Attr::none(ResourceKey::UriTemplate),
            name: Attr::none(ResourceKey::Name),
            title: Attr::none(ResourceKey::Title),
            description: Attr::none(ResourceKey::Description),
            mime_type: Attr::none(ResourceKey::MimeType),
            complete: Attr::none(ResourceKey::Complete),
            crate_path: Attr::none(ResourceKey::Crate),
        };
        parse_keys(errors, args, |key, meta| attrs.set(errors, key, meta));
        attrs
    }

    fn set(
        &mut self,
        errors: &Errors,
        key: ResourceKey,
        meta: &ParseNestedMeta<'_>,
    ) -> syn::Result<()> {
        let path = &meta.path;
        match key {
            ResourceKey::Uri => self.uri.set(errors, path, string_value(meta)?),
            ResourceKey::UriTemplate => self.uri_template.set(errors, path, string_value(meta)?),
            ResourceKey::Name => self.name.set(errors, path, string_value(meta)?),
            ResourceKey::Title => self.title.set(errors, path, string_value(meta)?),
            ResourceKey::Description => self.description.set(errors, path, string_value(meta)?),
            ResourceKey::MimeType => self.mime_type.set(errors, path, string_value(meta)?),
            ResourceKey::Complete => self.complete.set(errors, path, completers(errors, meta)?),
            ResourceKey::Crate => self.crate_path.set(errors, path, crate_path(meta)?),
        }
        Ok(())
    }
}

/// The parsed `#[prompt(...)]` arguments.
pub struct PromptAttrs {
    pub name: Attr<LitStr>,
    pub title: Attr<LitStr>,
    pub description: Attr<LitStr>,
    pub complete: Attr<Vec<Completer>>,
    pub crate_path: Attr<syn::Path>,
}

impl PromptAttrs {
    /// Parses the arguments, recording every mistake in `errors` and carrying on.
    pub fn parse(errors: &Errors, args: TokenStream) -> PromptAttrs {
        let mut attrs = PromptAttrs {
            name: Attr::none(PromptKey::Name),
            title: Attr::none(PromptKey::Title),
            description: Attr::none(PromptKey::Description),
            complete: Attr::none(PromptKey::Complete),
            crate_path: Attr::none(PromptKey::Crate),
        };
        parse_keys(errors, args, |key, meta| attrs.set(errors, key, meta));
        attrs
    }

    fn set(
        &mut self,
        errors: &Errors,
        key: PromptKey,
        meta: &ParseNestedMeta<'_>,
    ) -> syn::Result<()> {
        let path = &meta.path;
        match key {
            PromptKey::Name => self.name.set(errors, path, string_value(meta)?),
            PromptKey::Title => self.title.set(errors, path, string_value(meta)?),
            PromptKey::Description => self.description.set(errors, path, string_value(meta)?),
            PromptKey::Complete => self.complete.set(errors, path, completers(errors, meta)?),
            PromptKey::Crate => self.crate_path.set(errors, path, crate_path(meta)?),
        }
        Ok(())
    }
}

/// `complete(arg = path::to_fn, ...)`: each argument once.
fn completers(errors: &Errors, meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<Completer>> {
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error("expected `complete(argument = path::to_function, ...)`"));
    }
    let mut completers: Vec<Completer> = Vec::new();
    meta.parse_nested_meta(|inner| {
        let Some(argument) = inner.path.get_ident().cloned() else {
            return Err(
                inner.error("expected an argument name: `complete(argument = path::to_function)`")
            );
        };
        if !inner.input.peek(Token![=]) {
            return Err(inner.error(format!("expected `{argument} = path::to_function`")));
        }
        let function = inner.value()?.parse::<syn::Path>()?;
        if completers.iter().any(|seen| seen.argument == argument) {
            errors.error_spanned_by(&argument, format!("duplicate completion for `{argument}`"));
        } else {
            completers.push(Completer { argument, function });
        }
        Ok(())
    })?;
    Ok(completers)
}

/// Reads `key = value, ...`: each key is looked up in `K` (an unknown one is an error
/// spanned on it) and `read` takes its value. After an error, the rest of that key's value
/// is skipped, so the keys after it are still read.
fn parse_keys<K: Words>(
    errors: &Errors,
    tokens: TokenStream,
    mut read: impl FnMut(K, &ParseNestedMeta<'_>) -> syn::Result<()>,
) {
    let parser = syn::meta::parser(|meta| {
        let key = meta
            .path
            .get_ident()
            .and_then(|ident| K::from_word(&ident.to_string()));
        let read = match key {
            Some(key) => read(key, &meta),
            None => Err(meta.error(K::unknown(&key_name(&meta)))),
        };
        if let Err(error) = read {
            errors.syn_error(error);
            skip_value(&meta)?;
        }
        Ok(())
    });
    if let Err(error) = parser.parse2(tokens) {
        errors.syn_error(error);
    }
}

fn key_name(meta: &ParseNestedMeta<'_>) -> String {
    meta.path.to_token_stream().to_string()
}

/// `key = "value"`.
fn string_value(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
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
fn string_list(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<LitStr>> {
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
fn flag(meta: &ParseNestedMeta<'_>) -> syn::Result<Span> {
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

/// `priority = 10`: an integer literal; its range is checked with the other values.
fn priority(meta: &ParseNestedMeta<'_>) -> syn::Result<LitInt> {
    if !meta.input.peek(Token![=]) {
        return Err(meta.error("expected `priority = <integer>`"));
    }
    match meta.value()?.parse::<syn::Expr>()? {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(int),
            ..
        }) => Ok(int),
        value @ syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            ..
        }) => Err(syn::Error::new_spanned(
            value,
            "`priority` is 0 or more: higher is suggested first",
        )),
        other => Err(syn::Error::new_spanned(
            other,
            "expected an integer: `priority = 10`",
        )),
    }
}

/// `execution_time = "slow"`: one of the classes, the error on the literal otherwise.
fn execution_time(meta: &ParseNestedMeta<'_>) -> syn::Result<ExecutionTime> {
    let lit = string_value(meta)?;
    let word = lit.value();
    ExecutionTime::from_word(&word)
        .ok_or_else(|| syn::Error::new_spanned(&lit, ExecutionTime::unknown(&word)))
}

/// `task = "optional"`, `task_start = "handler"`: one of the words, the error on the
/// literal otherwise.
fn word<W: Words>(meta: &ParseNestedMeta<'_>) -> syn::Result<W> {
    let lit = string_value(meta)?;
    let word = lit.value();
    W::from_word(&word).ok_or_else(|| syn::Error::new_spanned(&lit, W::unknown(&word)))
}

/// `crate = "my_afd"`: the path of the runtime crate for a user who renamed the
/// dependency, as in `#[serde(crate = "...")]`. A module path (`crate::rt` works too);
/// the error is on the literal.
fn crate_path(meta: &ParseNestedMeta<'_>) -> syn::Result<syn::Path> {
    let lit = string_value(meta)?;
    lit.parse_with(syn::Path::parse_mod_style).map_err(|_| {
        syn::Error::new_spanned(
            &lit,
            "expected the path of the runtime crate: `crate = \"my_afd\"`",
        )
    })
}

/// `expose(mcp = false, cli = true)`.
fn surfaces(errors: &Errors, meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<Exposed>> {
    let mut surfaces: Vec<Exposed> = Vec::new();
    meta.parse_nested_meta(|inner| {
        let Some(ident) = inner.path.get_ident().cloned() else {
            return Err(inner.error("expected a surface name"));
        };
        // Read the value first, so an unknown surface does not derail the rest.
        let on = inner.value()?.parse::<LitBool>()?;
        let Some(surface) = Surface::from_word(&ident.to_string()) else {
            errors.error_spanned_by(&ident, Surface::unknown(&ident.to_string()));
            return Ok(());
        };
        if surfaces.iter().any(|seen| seen.surface == surface) {
            errors.error_spanned_by(&ident, format!("duplicate `{ident}`"));
        } else {
            surfaces.push(Exposed { surface, ident, on });
        }
        Ok(())
    })?;
    Ok(surfaces)
}

/// After an error, consumes the rest of the key's value so the next keys are still read.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
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
