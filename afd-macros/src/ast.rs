//! The handler function as the macro sees it: its parameters (input, context) and its
//! return type, borrowed from the syn input so every error keeps the user's span.

use syn::{FnArg, GenericParam, ItemFn, Pat, ReturnType, Type};

use crate::ctxt::Ctxt;

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
    /// `Result<T, E>` (any type whose last path segment is `Result`).
    Result(&'a Type),
    /// `CommandResult<T>`.
    CommandResult(&'a Type),
}

/// The parsed handler.
pub struct Handler<'a> {
    pub item: &'a ItemFn,
    pub params: Vec<Param<'a>>,
    pub output: Output<'a>,
    pub docs: Vec<String>,
}

impl<'a> Handler<'a> {
    /// Reads the function, recording every unusable part in `cx`.
    pub fn from_fn(cx: &Ctxt, item: &'a ItemFn) -> Handler<'a> {
        let sig = &item.sig;
        if let Some(constness) = &sig.constness {
            cx.error_spanned_by(constness, "a command cannot be a `const fn`");
        }
        if let Some(unsafety) = &sig.unsafety {
            cx.error_spanned_by(unsafety, "a command cannot be an `unsafe fn`");
        }
        if let Some(abi) = &sig.abi {
            cx.error_spanned_by(abi, "a command cannot have an `extern` ABI");
        }
        if let Some(variadic) = &sig.variadic {
            cx.error_spanned_by(variadic, "a command cannot be variadic");
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
            cx.error_spanned_by(
                &sig.generics,
                format!("a command cannot have {kind}: the catalog needs one concrete input and output type"),
            );
        } else if let Some(where_clause) = &sig.generics.where_clause {
            cx.error_spanned_by(where_clause, "a command cannot have a `where` clause");
        }

        let mut params = Vec::new();
        let mut input_seen = false;
        for arg in &sig.inputs {
            match arg {
                FnArg::Receiver(receiver) => cx.error_spanned_by(
                    receiver,
                    "a command must be a free function, not a method: move it out of the `impl` block",
                ),
                FnArg::Typed(typed) => {
                    if let Pat::Ident(ident) = &*typed.pat
                        && ident.by_ref.is_some()
                    {
                        cx.error_spanned_by(&typed.pat, "a command parameter cannot bind by `ref`");
                    }
                    match classify_param(&typed.ty) {
                        Some(context) => params.push(context),
                        None if contains_impl_trait(&typed.ty) => cx.error_spanned_by(
                            &typed.ty,
                            "a command input cannot be `impl Trait`: name a concrete type",
                        ),
                        None if input_seen => cx.error_spanned_by(
                            typed,
                            "a command takes at most one input parameter: gather the fields into one struct",
                        ),
                        None => {
                            if matches!(&*typed.ty, Type::Reference(_)) {
                                cx.error_spanned_by(
                                    &typed.ty,
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
            ReturnType::Type(_, ty) => classify_output(cx, ty),
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
        let mut paragraphs: Vec<String> = Vec::new();
        let mut current = String::new();
        for line in &self.docs {
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
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        Type::Paren(paren) => last_segment(&paren.elem),
        Type::Group(group) => last_segment(&group.elem),
        _ => None,
    }
}

/// `&CommandContext` or `CommandContext` (by the last path segment).
fn classify_param(ty: &Type) -> Option<Param<'_>> {
    let (inner, by_ref) = match ty {
        Type::Reference(reference) if reference.mutability.is_none() => (&*reference.elem, true),
        other => (other, false),
    };
    let segment = last_segment(inner)?;
    (segment.ident == "CommandContext" && segment.arguments.is_none())
        .then_some(Param::Context { by_ref })
}

fn classify_output<'a>(cx: &Ctxt, ty: &'a Type) -> Output<'a> {
    match ty {
        Type::Tuple(tuple) if tuple.elems.is_empty() => return Output::Unit,
        Type::ImplTrait(_) => {
            cx.error_spanned_by(
                ty,
                "a command cannot return `impl Trait`: the catalog needs a concrete output type",
            );
            return Output::Plain(ty);
        }
        Type::Never(_) => {
            cx.error_spanned_by(ty, "a command must return: `!` is not a usable output type");
            return Output::Plain(ty);
        }
        _ => {}
    }
    match last_segment(ty) {
        Some(segment) if segment.ident == "CommandResult" => Output::CommandResult(ty),
        Some(segment) if segment.ident == "Result" => Output::Result(ty),
        _ => Output::Plain(ty),
    }
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
    item.attrs
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
        .flat_map(|text| text.lines().map(str::to_owned).collect::<Vec<_>>())
        .collect()
}
