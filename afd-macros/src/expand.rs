//! Every macro from end to end (parse, validate, then generate), and the code generation:
//! for a command, its definition, type-erased handler, schemas and `inventory`
//! registration; for a resource or a prompt, its definition, type-erased function
//! (template variables or arguments decoded, the return value converted) and registration;
//! for a context, its definition and registration. Generated code reaches the
//! runtime only through `::afd_runtime::__private` (`<path>::__private` under
//! `crate = "path"`).

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ItemFn, LitStr, Type};

use crate::ast::{DeclFn, DeclParam, Declaration, Handler, Output, Param};
use crate::attr::{CommandAttrs, Completer, PromptAttrs, ResourceAttrs};
use crate::errors::Errors;
use crate::valid;
use crate::words::{ExecutionTime, TaskStart, TaskSupport};

/// Expands `#[command(args)] item`: all of its mistakes, or the command.
pub fn command(args: TokenStream, item: &ItemFn) -> syn::Result<TokenStream> {
    let errors = Errors::default();
    let attrs = CommandAttrs::parse(&errors, args);
    let handler = Handler::from_fn(&errors, item);
    valid::command(&errors, &attrs, &handler);
    errors.check()?;
    Ok(generate_command(&attrs, &handler))
}

/// Expands `#[resource(args)] item`: all of its mistakes, or the resource.
pub fn resource(args: TokenStream, item: &ItemFn) -> syn::Result<TokenStream> {
    let errors = Errors::default();
    let attrs = ResourceAttrs::parse(&errors, args);
    let decl = DeclFn::from_fn(&errors, item, "a resource");
    valid::resource(&errors, &attrs, &decl);
    errors.check()?;
    Ok(generate_resource(&attrs, &decl))
}

/// Expands `#[prompt(args)] item`: all of its mistakes, or the prompt.
pub fn prompt(args: TokenStream, item: &ItemFn) -> syn::Result<TokenStream> {
    let errors = Errors::default();
    let attrs = PromptAttrs::parse(&errors, args);
    let decl = DeclFn::from_fn(&errors, item, "a prompt");
    valid::prompt(&errors, &attrs, &decl);
    errors.check()?;
    Ok(generate_prompt(&attrs, &decl))
}

/// Expands `context! { input }`: all of its mistakes, or the context's registration.
pub fn context(input: TokenStream) -> syn::Result<TokenStream> {
    let errors = Errors::default();
    let declaration = Declaration::parse(&errors, input);
    valid::context(&errors, &declaration);
    errors.check()?;
    Ok(generate_context(&declaration))
}

fn generate_command(attrs: &CommandAttrs, handler: &Handler<'_>) -> TokenStream {
    let rt = runtime(attrs.crate_path.get());
    let item = handler.item;
    let ident = &item.sig.ident;
    let name = valid::command_name(attrs, handler);
    let description = handler.description();

    let builder = builder_calls(attrs, &rt);
    let input_schema = match handler.input() {
        Some(ty) => quote_spanned!(ty.span()=> #rt::input_schema::<#ty>),
        None => quote!(#rt::no_input_schema),
    };
    let output_schema = output_schema(&handler.output, &rt);
    let handler_fn = handler_fn(handler, attrs.blocking.get().is_some(), &name, &rt);

    let location = source_location(ident.span(), &rt);

    let members = quote! {
        /// The command's definition, for explicit registration.
        #[doc(hidden)]
        pub const COMMAND: &'static #rt::CommandDef = &#rt::CommandDef::new(
            #name,
            #description,
            Self::__afd_handler,
            #input_schema,
            #location,
        )
        #builder
        .with_output_schema(Self::__afd_output_schema);

        #handler_fn

        #[doc(hidden)]
        fn __afd_output_schema() -> #rt::Option<#rt::Value> {
            #output_schema
        }
    };
    companion(
        item,
        &rt,
        members,
        quote!(#rt::Registration::new(#ident::COMMAND)),
    )
}

/// What every declaration expands to around its own `members`: the user's function as
/// written, a hidden struct of the same name (so that `name::COMMAND` and the like resolve),
/// an `impl` of it holding `members`, and the `inventory` registration of `registration`.
fn companion(
    item: &syn::ItemFn,
    rt: &TokenStream,
    members: TokenStream,
    registration: TokenStream,
) -> TokenStream {
    let ident = &item.sig.ident;
    let vis = &item.vis;
    quote! {
        #item

        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}

        #[automatically_derived]
        #[allow(clippy::all)]
        impl #ident {
            #members

            // Inside the `impl` rather than a `const _` beside it: on a function in an `impl`
            // block, rustc then reports the two companion items it cannot hold, nothing more.
            #[doc(hidden)]
            #[allow(dead_code)]
            const __AFD_REGISTRATION: () = {
                #rt::inventory::submit! {
                    #registration
                }
            };
        }
    }
}

fn generate_resource(attrs: &ResourceAttrs, decl: &DeclFn<'_>) -> TokenStream {
    let rt = runtime(attrs.crate_path.get());
    let item = decl.item;
    let ident = &item.sig.ident;
    let name = valid::declared_name(attrs.name.get(), decl);
    let description = valid::declared_description(attrs.description.get(), decl);
    let (constructor, uri) = match (attrs.uri.get(), attrs.uri_template.get()) {
        (Some(uri), _) => (quote!(new), uri),
        (None, Some(template)) => (quote!(template), template),
        (None, None) => unreachable!("validated"),
    };
    let mut calls = TokenStream::new();
    if let Some(title) = attrs.title.get() {
        calls.extend(quote!(.with_title(#title)));
    }
    if let Some(mime) = attrs.mime_type.get() {
        calls.extend(quote!(.with_mime_type(#mime)));
    }
    calls.extend(completions(attrs.complete.get(), &rt));
    let mime = match attrs.mime_type.get() {
        Some(mime) => quote!(#rt::Option::Some(#mime)),
        None => quote!(#rt::Option::None),
    };

    let mut decode = TokenStream::new();
    let mut args = Vec::new();
    for (index, param) in decl.params.iter().enumerate() {
        match param {
            DeclParam::Value(named) => {
                let binding = syn::Ident::new(&format!("__afd_var_{index}"), Span::call_site());
                let ty = named.ty;
                let variable = named.ident.to_string();
                decode.extend(quote_spanned! {ty.span()=>
                    let #binding: #ty = match #rt::template_variable::<#ty>(&__afd_request, #variable) {
                        #rt::Result::Ok(value) => value,
                        #rt::Result::Err(error) => return #rt::Result::Err(error),
                    };
                });
                args.push(quote!(#binding));
            }
            DeclParam::Context { by_ref: true } => args.push(quote!(&__afd_ctx)),
            DeclParam::Context { by_ref: false } => {
                args.push(quote!(::core::clone::Clone::clone(&__afd_ctx)));
            }
        }
    }
    let output = decl.output.expect("validated");
    let await_ = item.sig.asyncness.map(|_| quote!(.await));
    let convert = quote_spanned! {output.span()=>
        #rt::resource_contents::<#output>(__afd_output, &__afd_uri, #mime)
    };
    let body = quote! {
        #decode
        let __afd_uri: ::std::string::String = ::std::borrow::ToOwned::to_owned(__afd_request.uri());
        let __afd_ctx = __afd_request.into_context();
        let __afd_output = #ident(#(#args),*) #await_;
        #convert
    };
    let boxed = boxed_future(decl, &rt, body);
    let location = source_location(ident.span(), &rt);
    let members = quote! {
        /// The resource's definition, for explicit registration.
        #[doc(hidden)]
        pub const RESOURCE: &'static #rt::ResourceDef = &#rt::ResourceDef::#constructor(
            #uri,
            #name,
            #description,
            Self::__afd_read,
            #location,
        )
        #calls;

        #[doc(hidden)]
        #[allow(unused_variables)]
        fn __afd_read(__afd_request: #rt::ResourceRequest) -> #rt::ResourceFuture {
            #boxed
        }
    };
    companion(
        item,
        &rt,
        members,
        quote!(#rt::ResourceRegistration::new(#ident::RESOURCE)),
    )
}

fn generate_prompt(attrs: &PromptAttrs, decl: &DeclFn<'_>) -> TokenStream {
    let rt = runtime(attrs.crate_path.get());
    let item = decl.item;
    let ident = &item.sig.ident;
    let name = valid::declared_name(attrs.name.get(), decl);
    let description = valid::declared_description(attrs.description.get(), decl);
    let mut calls = TokenStream::new();
    if let Some(title) = attrs.title.get() {
        calls.extend(quote!(.with_title(#title)));
    }
    calls.extend(completions(attrs.complete.get(), &rt));

    let input = decl.values().next().map(|named| named.ty);
    let (schema, schema_fn, decode) = match input {
        Some(ty) => (
            quote!(#rt::Option::Some(Self::__afd_arguments_schema as fn() -> #rt::Value)),
            quote_spanned! {ty.span()=>
                #[doc(hidden)]
                fn __afd_arguments_schema() -> #rt::Value {
                    #rt::prompt_arguments_schema::<#ty>()
                }
            },
            quote_spanned! {ty.span()=>
                let __afd_input: #ty = match #rt::prompt_arguments::<#ty>(#name, __afd_arguments) {
                    #rt::Result::Ok(input) => input,
                    #rt::Result::Err(error) => return #rt::Result::Err(error),
                };
            },
        ),
        None => (
            quote!(#rt::Option::None),
            TokenStream::new(),
            quote!(let _ = __afd_arguments;),
        ),
    };
    let args = decl.params.iter().map(|param| match param {
        DeclParam::Value(_) => quote!(__afd_input),
        DeclParam::Context { by_ref: true } => quote!(&__afd_ctx),
        DeclParam::Context { by_ref: false } => quote!(::core::clone::Clone::clone(&__afd_ctx)),
    });
    let output = decl.output.expect("validated");
    let await_ = item.sig.asyncness.map(|_| quote!(.await));
    let convert = quote_spanned! {output.span()=>
        #rt::prompt_messages::<#output>(__afd_output)
    };
    let body = quote! {
        #decode
        let __afd_output = #ident(#(#args),*) #await_;
        #convert
    };
    let boxed = boxed_future(decl, &rt, body);
    let location = source_location(ident.span(), &rt);
    let members = quote! {
        /// The prompt's definition, for explicit registration.
        #[doc(hidden)]
        pub const PROMPT: &'static #rt::PromptDef = &#rt::PromptDef::new(
            #name,
            #description,
            #schema,
            Self::__afd_render,
            #location,
        )
        #calls;

        #schema_fn

        #[doc(hidden)]
        #[allow(unused_variables)]
        fn __afd_render(
            __afd_arguments: #rt::Map<::std::string::String, #rt::Value>,
            __afd_ctx: #rt::CommandContext,
        ) -> #rt::PromptFuture {
            #boxed
        }
    };
    companion(
        item,
        &rt,
        members,
        quote!(#rt::PromptRegistration::new(#ident::PROMPT)),
    )
}

/// `.with_completions(&[("arg", |typed, args| call(path::to_fn, typed, args)), ...])`:
/// each function, of either form the runtime's `Completer` takes, adapted to its stored
/// function type by a closure that captures nothing; the call is spanned at the user's path,
/// so a wrong signature is reported there.
fn completions(completers: Option<&Vec<Completer>>, rt: &TokenStream) -> TokenStream {
    let Some(completers) = completers.filter(|completers| !completers.is_empty()) else {
        return TokenStream::new();
    };
    let entries = completers.iter().map(|completer| {
        let argument = completer.argument.to_string();
        let function = &completer.function;
        let call = quote_spanned! {function.span()=>
            #rt::call_completer(#function, typed, args)
        };
        quote! {
            (#argument, |typed: &str, args: &#rt::CompletionArgs| -> #rt::Vec<#rt::String> { #call })
        }
    });
    quote!(.with_completions(&[#(#entries),*]))
}

/// `Box::pin(async move { body })`, spanned at the user's `async` (or `fn`) so that a
/// future that is not `Send` is reported there.
fn boxed_future(decl: &DeclFn<'_>, rt: &TokenStream, body: TokenStream) -> TokenStream {
    let sig = &decl.item.sig;
    let fn_span = sig
        .asyncness
        .map_or_else(|| sig.fn_token.span(), |a| a.span());
    let rt_at_fn = respan(rt, fn_span);
    quote_spanned! {fn_span=>
        #rt_at_fn::Box::pin(async move {
            #body
        })
    }
}

fn generate_context(declaration: &Declaration) -> TokenStream {
    let attrs = &declaration.attrs;
    let rt = runtime(attrs.crate_path.get());
    let name = attrs.name.get().expect("validated");
    let description = declaration.description();
    let mut calls = TokenStream::new();
    if let Some(parent) = attrs.parent.get() {
        calls.extend(quote!(.with_parent(#parent)));
    }
    if let Some(priority) = attrs.priority.get() {
        calls.extend(quote!(.with_priority(#priority)));
    }
    if let Some(triggers) = attrs.triggers.get() {
        calls.extend(quote!(.with_triggers(&[#(#triggers),*])));
    }
    if attrs.read_only.get().is_some() {
        calls.extend(quote!(.with_read_only()));
    }
    let location = source_location(name.span(), &rt);
    quote! {
        const _: () = {
            #rt::inventory::submit! {
                #rt::ContextDef::new(#name, #description, #location) #calls
            }
        };
    }
}

/// The runtime's hidden re-exports: `::afd_runtime::__private`, or `<path>::__private`
/// under `crate = "path"`. Either way spanned at the call site, so a renamed runtime gives
/// the same diagnostics, at the same places, as the default one.
fn runtime(crate_path: Option<&syn::Path>) -> TokenStream {
    let path = match crate_path {
        Some(path) => quote!(#path),
        None => quote!(::afd_runtime),
    };
    respan(&quote!(#path::__private), Span::call_site())
}

/// `tokens` with every token spanned at `span` (a path has no groups to recurse into).
fn respan(tokens: &TokenStream, span: Span) -> TokenStream {
    tokens
        .clone()
        .into_iter()
        .map(|mut token| {
            token.set_span(span);
            token
        })
        .collect()
}

/// A `SourceLocation` of the token at `span`, as `file!()` and friends give it there.
fn source_location(span: Span, rt: &TokenStream) -> TokenStream {
    quote_spanned! {span=>
        #rt::SourceLocation {
            file: ::core::file!(),
            line: ::core::line!(),
            column: ::core::column!(),
            module_path: ::core::module_path!(),
        }
    }
}

fn builder_calls(attrs: &CommandAttrs, rt: &TokenStream) -> TokenStream {
    let mut calls = TokenStream::new();
    let strings = |list: &Vec<LitStr>| quote!(&[#(#list),*]);
    if let Some(category) = attrs.category.get() {
        calls.extend(quote!(.with_category(#category)));
    }
    if let Some(tags) = attrs.tags.get() {
        let tags = strings(tags);
        calls.extend(quote!(.with_tags(#tags)));
    }
    if attrs.mutation.get().is_some() {
        calls.extend(quote!(.with_mutation()));
    }
    if attrs.destructive.get().is_some() {
        calls.extend(quote!(.with_destructive()));
    }
    if attrs.idempotent.get().is_some() {
        calls.extend(quote!(.with_idempotent()));
    }
    if attrs.open_world.get().is_some() {
        calls.extend(quote!(.with_open_world()));
    }
    if let Some(prompt) = attrs.confirm_prompt.get() {
        calls.extend(quote!(.with_confirm_prompt(#prompt)));
    }
    if let Some(time) = attrs.execution_time.get() {
        let variant = match time {
            ExecutionTime::Instant => quote!(Instant),
            ExecutionTime::Fast => quote!(Fast),
            ExecutionTime::Slow => quote!(Slow),
            ExecutionTime::LongRunning => quote!(LongRunning),
        };
        calls.extend(quote!(.with_execution_time(#rt::ExecutionTime::#variant)));
    }
    if let Some(codes) = attrs.error_codes.get() {
        let codes = strings(codes);
        calls.extend(quote!(.with_errors(#codes)));
    }
    if attrs.handoff.get().is_some() {
        let protocol = match attrs.handoff_protocol.get() {
            Some(protocol) => quote!(#rt::Option::Some(#protocol)),
            None => quote!(#rt::Option::None),
        };
        calls.extend(quote!(.with_handoff(#protocol)));
    }
    if let Some(title) = attrs.title.get() {
        calls.extend(quote!(.with_title(#title)));
    }
    if let Some(version) = attrs.version.get() {
        calls.extend(quote!(.with_version(#version)));
    }
    if let Some(surfaces) = attrs.expose.get() {
        let setters = surfaces.iter().map(|exposed| {
            let (surface, on) = (&exposed.ident, &exposed.on);
            quote!(.#surface(#on))
        });
        calls.extend(quote!(.with_expose(#rt::Expose::ALL #(#setters)*)));
    }
    if let Some(aliases) = attrs.aliases.get() {
        let aliases = strings(aliases);
        calls.extend(quote!(.with_aliases(#aliases)));
    }
    if let Some(aliases) = attrs.deprecated_aliases.get() {
        let aliases = strings(aliases);
        calls.extend(quote!(.with_deprecated_aliases(#aliases)));
    }
    if attrs.eager.get().is_some() {
        calls.extend(quote!(.with_eager()));
    }
    if attrs.blocking.get().is_some() {
        calls.extend(quote!(.with_blocking()));
    }
    if let Some(contexts) = attrs.contexts.get() {
        let contexts = strings(contexts);
        calls.extend(quote!(.with_contexts(#contexts)));
    }
    if let Some(scopes) = attrs.scopes.get() {
        let scopes = strings(scopes);
        calls.extend(quote!(.with_scopes(#scopes)));
    }
    if let Some(needs) = attrs.needs_client.get() {
        let needs = strings(needs);
        calls.extend(quote!(.with_needs_client(#needs)));
    }
    if let Some(support) = attrs.task.get() {
        let variant = match support {
            TaskSupport::Forbidden => quote!(Forbidden),
            TaskSupport::Optional => quote!(Optional),
            TaskSupport::Required => quote!(Required),
        };
        calls.extend(quote!(.with_task_support(#rt::TaskSupport::#variant)));
    }
    if let Some(start) = attrs.task_start.get() {
        let variant = match start {
            TaskStart::Call => quote!(Call),
            TaskStart::Handler => quote!(Handler),
        };
        calls.extend(quote!(.with_task_start(#rt::TaskStart::#variant)));
    }
    calls
}

/// The output schema: the data type's schema when it implements `JsonSchema`.
fn output_schema(output: &Output<'_>, rt: &TokenStream) -> TokenStream {
    let data = match output {
        Output::Unit => return quote!(#rt::Option::None),
        Output::Plain(ty) => quote!(#ty),
        Output::Result { ty, .. } | Output::CommandResult { ty, .. } => {
            quote!(<#ty as #rt::Outcome>::Data)
        }
    };
    quote! {
        #[allow(unused_imports)]
        use #rt::{OutputSchemaFallback as _, OutputSchemaViaJsonSchema as _};
        (&&#rt::OutputProbe::<#data>::new()).output_schema()()
    }
}

/// `<Result<T, E> as Outcome>::Data`, spanned on `T` as the user wrote it (else on the
/// whole type), so a missing trait points at `T` while the type stays exact even through
/// aliases such as `anyhow::Result<T>`.
fn projection(ty: &Type, assoc: &str, written: Option<&Type>, rt: &TokenStream) -> TokenStream {
    let span = written.map_or_else(|| ty.span(), Spanned::span);
    let assoc = syn::Ident::new(assoc, span);
    quote_spanned!(span=> <#ty as #rt::Outcome>::#assoc)
}

/// The type-erased handler: decode the input, call the function, convert its return value.
fn handler_fn(handler: &Handler<'_>, blocking: bool, name: &str, rt: &TokenStream) -> TokenStream {
    let ident = &handler.item.sig.ident;
    let decode = match handler.input() {
        Some(ty) => quote_spanned! {ty.span()=>
            let __afd_input: #ty = match #rt::deserialize_input::<#ty>(#name, __afd_input) {
                #rt::Result::Ok(input) => input,
                #rt::Result::Err(error) => return #rt::CommandResult::failure(error),
            };
        },
        None => quote!(let _ = __afd_input;),
    };
    let args = handler.params.iter().map(|param| match param {
        Param::Input(_) => quote!(__afd_input),
        Param::Context { by_ref: true } => quote!(&__afd_ctx),
        Param::Context { by_ref: false } => quote!(::core::clone::Clone::clone(&__afd_ctx)),
    });
    let await_ = handler.item.sig.asyncness.map(|_| quote!(.await));
    let convert = match &handler.output {
        Output::Unit => quote!(#rt::from_output(__afd_output)),
        Output::Plain(ty) => quote_spanned!(ty.span()=> #rt::from_output::<#ty>(__afd_output)),
        Output::Result { ty, data, error } => {
            let data = projection(ty, "Data", *data, rt);
            let error = projection(ty, "Error", *error, rt);
            quote_spanned!(ty.span()=> #rt::from_result::<#data, #error>(__afd_output))
        }
        Output::CommandResult { ty, data } => {
            let data = projection(ty, "Data", *data, rt);
            quote_spanned!(ty.span()=> #rt::from_command_result::<#data>(__afd_output))
        }
    };
    let call = quote! {
        #decode
        let __afd_output = #ident(#(#args),*) #await_;
        #convert
    };
    // A sync function needs no state machine of its own: its body is a plain function and
    // one shared future type runs it when polled (`sync_handler`), which keeps the code
    // each command adds small (BENCHMARKS.md, "Compile cost"). A `blocking` one runs on
    // the blocking pool instead (`blocking_handler`).
    if handler.item.sig.asyncness.is_none() {
        let run = if blocking {
            quote!(#rt::blocking_handler)
        } else {
            quote!(#rt::sync_handler)
        };
        return quote! {
            #[doc(hidden)]
            fn __afd_handler(
                __afd_input: #rt::Value,
                __afd_ctx: #rt::CommandContext,
            ) -> #rt::HandlerFuture {
                #run(Self::__afd_call, __afd_input, __afd_ctx)
            }

            #[doc(hidden)]
            #[allow(unused_variables)]
            fn __afd_call(
                __afd_input: #rt::Value,
                __afd_ctx: #rt::CommandContext,
            ) -> #rt::CommandResult<#rt::Value> {
                #call
            }
        };
    }
    // A handler future that is not `Send` fails where it is boxed: point there at the
    // user's `async`, not at the attribute.
    let sig = &handler.item.sig;
    let fn_span = sig
        .asyncness
        .map_or_else(|| sig.fn_token.span(), |a| a.span());
    let rt_at_fn = respan(rt, fn_span);
    let boxed = quote_spanned! {fn_span=>
        #rt_at_fn::Box::pin(async move {
            #call
        })
    };
    quote! {
        #[doc(hidden)]
        #[allow(unused_variables)]
        fn __afd_handler(
            __afd_input: #rt::Value,
            __afd_ctx: #rt::CommandContext,
        ) -> #rt::HandlerFuture {
            #boxed
        }
    }
}
