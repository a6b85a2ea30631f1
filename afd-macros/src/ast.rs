//! What each macro is given, as the later stages see it: the handler function of
//! `#[command]` (its parameters and return type, borrowed from the syn input so every
//! error keeps the user's span), the function of `#[resource]` or `#[prompt]` (its named
//! parameters and return type), and the declaration of `context!` (its doc comments and
//! keys).

use proc_macro2::TokenStream;
use syn::parse::{ParseStream, Parser};
use syn::{Attribute, FnArg, GenericParam, ItemFn, Pat, ReturnType, Type};

use crate::attr::ContextAttrs;
use crate::errors::Errors;

/// A `context! { /// doc  name = "...", ... }` declaration.
pub struct Declaration {
    /// The attributes before the keys: doc comments, which `valid` insists on.
    pub docs: Vec<Attribute>,
    pub attrs: ContextAttrs,
}

impl Declaration {
    /// Reads the doc comments, then the keys, recording every mistake in `errors`.
    pub fn parse(errors: &Errors, input: TokenStream) -> Declaration {
        let mut docs = Vec::new();
        let mut keys = TokenStream::new();
        let split = |stream: ParseStream<'_>| -> syn::Result<()> {
            docs = stream.call(Attribute::parse_outer)?;
            keys = stream.parse()?;
            Ok(())
        };
        if let Err(error) = split.parse2(input) {
            errors.syn_error(error);
        }
        Declaration {
            docs,
            attrs: ContextAttrs::parse(errors, keys),
        }
    }

    /// The description: the doc comments' lines joined into one paragraph.
    pub fn description(&self) -> String {
        let lines: Vec<String> = doc_strings(&self.docs)
            .map(|text| text.trim().to_owned())
            .collect();
        lines.join(" ").trim().to_owned()
    }
}

/// A parameter of the handler.
pub enum Param<'a> {
    /// The command's input, deserialised from JSON.
    Input(&'a Type),
    /// The context, by reference (`&CommandContext`) or by value (`CommandContext`).
    Context { by_ref: bool },
}

/// What the handler returns.
pub enum Output<'a> {
    /// Nothing (`()`): the data is `null`.
    Unit,
    /// Plain data `T`.
    Plain(&'a Type),
    /// `Result<T, E>` (any type whose last path segment is `Result`), with `T` and `E` as
    /// written, when they are.
    Result {
        ty: &'a Type,
        data: Option<&'a Type>,
        error: Option<&'a Type>,
    },
    /// `CommandResult<T>`, with `T` as written.
    CommandResult {
        ty: &'a Type,
        data: Option<&'a Type>,
    },
}

/// The parsed handler.
pub struct Handler<'a> {
    pub item: &'a ItemFn,
    pub params: Vec<Param<'a>>,
    pub output: Output<'a>,
    pub docs: Vec<String>,
}

impl<'a> Handler<'a> {
    /// Reads the function, recording every unusable part in `errors`.
    pub fn from_fn(errors: &Errors, item: &'a ItemFn) -> Handler<'a> {
        let sig = &item.sig;
        if let Some(constness) = &sig.constness {
            errors.error_spanned_by(constness, "a command cannot be a `const fn`");
        }
        if let Some(unsafety) = &sig.unsafety {
            errors.error_spanned_by(unsafety, "a command cannot be an `unsafe fn`");
        }
        if let Some(abi) = &sig.abi {
            errors.error_spanned_by(abi, "a command cannot have an `extern` ABI");
        }
        if let Some(variadic) = &sig.variadic {
            errors.error_spanned_by(variadic, "a command cannot be variadic");
        }
        if !sig.generics.params.is_empty() {
            let kind = if sig
                .generics
                .params
                .iter()
                .all(|p| matches!(p, GenericParam::Lifetime(_)))
            {
                "lifetime parameters"
            } else {
                "generic parameters"
            };
            errors.error_spanned_by(
                &sig.generics,
                format!("a command cannot have {kind}: the catalog needs one concrete input and output type"),
            );
        } else if let Some(where_clause) = &sig.generics.where_clause {
            errors.error_spanned_by(where_clause, "a command cannot have a `where` clause");
        }

        // Without `self`, only a use of `Self` shows that the function sits in an `impl`.
        if !sig
            .inputs
            .iter()
            .any(|arg| matches!(arg, FnArg::Receiver(_)))
            && let Some(self_type) = find_self_type(quote::quote!(#sig))
        {
            errors.error_spanned_by(
                self_type,
                "a command must be a free function, not an associated function: move it out of the `impl` block",
            );
        }

        let mut params = Vec::new();
        let mut input_seen = false;
        for arg in &sig.inputs {
            match arg {
                FnArg::Receiver(receiver) => errors.error_spanned_by(
                    receiver,
                    "a command must be a free function, not a method: move it out of the `impl` block",
                ),
                FnArg::Typed(typed) => {
                    if let Pat::Ident(ident) = &*typed.pat
                        && ident.by_ref.is_some()
                    {
                        errors.error_spanned_by(&typed.pat, "a command parameter cannot bind by `ref`");
                    }
                    match classify_param(&typed.ty) {
                        ParamKind::Context { by_ref } => params.push(Param::Context { by_ref }),
                        ParamKind::MutContext(reference) => errors.error_spanned_by(
                            borrow_tokens(reference),
                            "the context cannot be borrowed mutably: take `&CommandContext` or `CommandContext`",
                        ),
                        ParamKind::Other if contains_impl_trait(&typed.ty) => errors.error_spanned_by(
                            &typed.ty,
                            "a command input cannot be `impl Trait`: name a concrete type",
                        ),
                        ParamKind::Other if input_seen => errors.error_spanned_by(
                            typed,
                            "a command takes at most one input parameter: gather the fields into one struct",
                        ),
                        ParamKind::Other => {
                            if let Type::Reference(reference) = &*typed.ty {
                                errors.error_spanned_by(
                                    borrow_tokens(reference),
                                    "a command input is taken by value: remove the `&`",
                                );
                            }
                            input_seen = true;
                            params.push(Param::Input(&typed.ty));
                        }
                    }
                }
            }
        }

        let output = match &sig.output {
            ReturnType::Default => Output::Unit,
            ReturnType::Type(_, ty) => classify_output(errors, ty),
        };

        Handler {
            item,
            params,
            output,
            docs: doc_lines(item),
        }
    }

    /// The input type, if the handler takes one.
    pub fn input(&self) -> Option<&'a Type> {
        self.params.iter().find_map(|param| match param {
            Param::Input(ty) => Some(*ty),
            Param::Context { .. } => None,
        })
    }

    /// The span of `fn name`, for errors about the function as a whole.
    pub fn ident_span(&self) -> proc_macro2::Span {
        self.item.sig.ident.span()
    }

    /// The description: doc lines joined into paragraphs.
    pub fn description(&self) -> String {
        paragraphs(&self.docs)
    }
}

/// A named parameter of a resource's or prompt's function.
pub struct NamedParam<'a> {
    pub ident: &'a syn::Ident,
    pub ty: &'a Type,
}

/// A parameter of a resource's or prompt's function.
pub enum DeclParam<'a> {
    /// A value: a template variable of a resource, the arguments of a prompt.
    Value(NamedParam<'a>),
    /// The context, by reference or by value.
    Context { by_ref: bool },
}

/// The function under `#[resource]` or `#[prompt]`.
pub struct DeclFn<'a> {
    pub item: &'a ItemFn,
    pub params: Vec<DeclParam<'a>>,
    /// The return type; `None` for `()`.
    pub output: Option<&'a Type>,
    pub docs: Vec<String>,
}

impl<'a> DeclFn<'a> {
    /// Reads the function, recording every unusable part in `errors`; `what` is "a
    /// resource" or "a prompt", for messages.
    pub fn from_fn(errors: &Errors, item: &'a ItemFn, what: &str) -> DeclFn<'a> {
        let sig = &item.sig;
        if let Some(constness) = &sig.constness {
            errors.error_spanned_by(constness, format!("{what} cannot be a `const fn`"));
        }
        if let Some(unsafety) = &sig.unsafety {
            errors.error_spanned_by(unsafety, format!("{what} cannot be an `unsafe fn`"));
        }
        if let Some(abi) = &sig.abi {
            errors.error_spanned_by(abi, format!("{what} cannot have an `extern` ABI"));
        }
        if let Some(variadic) = &sig.variadic {
            errors.error_spanned_by(variadic, format!("{what} cannot be variadic"));
        }
        if !sig.generics.params.is_empty() {
            errors.error_spanned_by(
                &sig.generics,
                format!("{what} cannot have generic or lifetime parameters"),
            );
        } else if let Some(where_clause) = &sig.generics.where_clause {
            errors.error_spanned_by(where_clause, format!("{what} cannot have a `where` clause"));
        }
        if !sig
            .inputs
            .iter()
            .any(|arg| matches!(arg, FnArg::Receiver(_)))
            && let Some(self_type) = find_self_type(quote::quote!(#sig))
        {
            errors.error_spanned_by(
                self_type,
                format!("{what} must be a free function, not an associated function: move it out of the `impl` block"),
            );
        }
        let mut params = Vec::new();
        for arg in &sig.inputs {
            match arg {
                FnArg::Receiver(receiver) => errors.error_spanned_by(
                    receiver,
                    format!("{what} must be a free function, not a method: move it out of the `impl` block"),
                ),
                FnArg::Typed(typed) => match classify_param(&typed.ty) {
                    ParamKind::Context { by_ref } => params.push(DeclParam::Context { by_ref }),
                    ParamKind::MutContext(reference) => errors.error_spanned_by(
                        borrow_tokens(reference),
                        "the context cannot be borrowed mutably: take `&CommandContext` or `CommandContext`",
                    ),
                    ParamKind::Other if contains_impl_trait(&typed.ty) => errors.error_spanned_by(
                        &typed.ty,
                        format!("a parameter of {what} cannot be `impl Trait`: name a concrete type"),
                    ),
                    ParamKind::Other => match &*typed.pat {
                        Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                            params.push(DeclParam::Value(NamedParam {
                                ident: &ident.ident,
                                ty: &typed.ty,
                            }));
                        }
                        pattern => errors.error_spanned_by(
                            pattern,
                            format!("a parameter of {what} is a plain name: its name is what it binds"),
                        ),
                    },
                },
            }
        }
        let output = match &sig.output {
            ReturnType::Type(_, ty) if !matches!(&**ty, Type::Tuple(tuple) if tuple.elems.is_empty()) => {
                Some(&**ty)
            }
            _ => None,
        };
        DeclFn {
            item,
            params,
            output,
            docs: doc_lines(item),
        }
    }

    /// The value parameters, in order.
    pub fn values(&self) -> impl Iterator<Item = &NamedParam<'a>> {
        self.params.iter().filter_map(|param| match param {
            DeclParam::Value(named) => Some(named),
            DeclParam::Context { .. } => None,
        })
    }

    /// The doc comment as one paragraph per blank-line-separated block.
    pub fn description(&self) -> String {
        paragraphs(&self.docs)
    }
}

/// Doc lines joined into paragraphs (a blank line between two).
fn paragraphs(docs: &[String]) -> String {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in docs {
        let line = line.trim();
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(line);
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    paragraphs.join("\n\n")
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        Type::Paren(paren) => last_segment(&paren.elem),
        Type::Group(group) => last_segment(&group.elem),
        _ => None,
    }
}

/// What a parameter's type says it is.
enum ParamKind<'a> {
    /// `&CommandContext` or `CommandContext`.
    Context { by_ref: bool },
    /// `&mut CommandContext`: a mistake.
    MutContext(&'a syn::TypeReference),
    /// Anything else: the input.
    Other,
}

/// Recognises the context by the last path segment of the type: `CommandContext`.
fn classify_param(ty: &Type) -> ParamKind<'_> {
    let is_context = |ty: &Type| {
        last_segment(ty)
            .is_some_and(|segment| segment.ident == "CommandContext" && segment.arguments.is_none())
    };
    match ty {
        Type::Reference(reference) if is_context(&reference.elem) => {
            if reference.mutability.is_some() {
                ParamKind::MutContext(reference)
            } else {
                ParamKind::Context { by_ref: true }
            }
        }
        ty if is_context(ty) => ParamKind::Context { by_ref: false },
        _ => ParamKind::Other,
    }
}

/// `&`, `&'a` or `&mut` of a reference type, for errors about the borrow itself.
fn borrow_tokens(reference: &syn::TypeReference) -> proc_macro2::TokenStream {
    let and = &reference.and_token;
    let lifetime = &reference.lifetime;
    let mutability = &reference.mutability;
    quote::quote!(#and #lifetime #mutability)
}

/// The first `Self` in a function signature, if any.
fn find_self_type(tokens: proc_macro2::TokenStream) -> Option<proc_macro2::Ident> {
    tokens.into_iter().find_map(|token| match token {
        proc_macro2::TokenTree::Ident(ident) if ident == "Self" => Some(ident),
        proc_macro2::TokenTree::Group(group) => find_self_type(group.stream()),
        _ => None,
    })
}

fn classify_output<'a>(errors: &Errors, ty: &'a Type) -> Output<'a> {
    match ty {
        Type::Tuple(tuple) if tuple.elems.is_empty() => return Output::Unit,
        Type::ImplTrait(_) => {
            errors.error_spanned_by(
                ty,
                "a command cannot return `impl Trait`: the catalog needs a concrete output type",
            );
            return Output::Plain(ty);
        }
        Type::Never(_) => {
            errors.error_spanned_by(ty, "a command must return: `!` is not a usable output type");
            return Output::Plain(ty);
        }
        _ => {}
    }
    match last_segment(ty) {
        Some(segment) if segment.ident == "CommandResult" => Output::CommandResult {
            ty,
            data: type_argument(segment, 0),
        },
        Some(segment) if segment.ident == "Result" => Output::Result {
            ty,
            data: type_argument(segment, 0),
            error: type_argument(segment, 1),
        },
        _ => Output::Plain(ty),
    }
}

/// The `index`-th type argument of a path segment: `T` in `Result<T, E>`.
fn type_argument(segment: &syn::PathSegment, index: usize) -> Option<&Type> {
    let syn::PathArguments::AngleBracketed(arguments) = &segment.arguments else {
        return None;
    };
    arguments
        .args
        .iter()
        .filter_map(|argument| match argument {
            syn::GenericArgument::Type(ty) => Some(ty),
            _ => None,
        })
        .nth(index)
}

fn contains_impl_trait(ty: &Type) -> bool {
    match ty {
        Type::ImplTrait(_) => true,
        Type::Reference(reference) => contains_impl_trait(&reference.elem),
        Type::Paren(paren) => contains_impl_trait(&paren.elem),
        _ => false,
    }
}

fn doc_lines(item: &ItemFn) -> Vec<String> {
    doc_strings(&item.attrs)
        .flat_map(|text| text.lines().map(str::to_owned).collect::<Vec<_>>())
        .collect()
}

/// The text of each `#[doc = "..."]` (each `///` line), in order.
fn doc_strings(attrs: &[Attribute]) -> impl Iterator<Item = String> + '_ {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(text),
                    ..
                }) => Some(text.value()),
                _ => None,
            },
            _ => None,
        })
}
