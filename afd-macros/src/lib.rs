//! The `#[command]`, `#[resource]` and `#[prompt]` attributes and the `context!`
//! declaration of afd-rs. Use them through `afd_runtime` (or `afd_runtime::prelude`); this
//! crate is an implementation detail.
//!
//! All run the same stages: `attr` reads the keys into typed attributes (`words` holds the
//! sets of keys) and `ast` the rest of the input, `valid` checks the values as a whole,
//! `expand` generates the code. Every stage records its mistakes in one `Errors` and
//! carries on; if there is any, `fallback` emits them all instead of the code.

#![warn(missing_docs)]

mod ast;
mod attr;
mod case;
mod errors;
mod expand;
mod fallback;
mod uri;
mod valid;
mod words;

use proc_macro::TokenStream;

/// Turns a function into a registered command: see `afd_runtime`'s documentation.
#[proc_macro_attribute]
pub fn command(args: TokenStream, item: TokenStream) -> TokenStream {
    let item: proc_macro2::TokenStream = item.into();
    match syn::parse2::<syn::ItemFn>(item.clone()) {
        Ok(function) => expand::command(args.into(), &function)
            .unwrap_or_else(|error| fallback::command(&function, error))
            .into(),
        Err(_) => fallback::not_a_function("command", item).into(),
    }
}

/// Declares a resource at a fixed URI or a URI template: see `afd_runtime::resource`.
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    let item: proc_macro2::TokenStream = item.into();
    match syn::parse2::<syn::ItemFn>(item.clone()) {
        Ok(function) => expand::resource(args.into(), &function)
            .unwrap_or_else(|error| fallback::command(&function, error))
            .into(),
        Err(_) => fallback::not_a_function("resource", item).into(),
    }
}

/// Declares a prompt: see `afd_runtime::prompt`.
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    let item: proc_macro2::TokenStream = item.into();
    match syn::parse2::<syn::ItemFn>(item.clone()) {
        Ok(function) => expand::prompt(args.into(), &function)
            .unwrap_or_else(|error| fallback::command(&function, error))
            .into(),
        Err(_) => fallback::not_a_function("prompt", item).into(),
    }
}

/// Declares a runtime context: see `afd_runtime::context!`.
#[proc_macro]
pub fn context(input: TokenStream) -> TokenStream {
    expand::context(input.into())
        .unwrap_or_else(fallback::context)
        .into()
}
