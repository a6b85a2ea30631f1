//! The `#[command]` attribute and the `context!` declaration of afd-rs. Use them through
//! `afd_runtime::command` (or `afd_runtime::prelude`) and `afd_runtime::context!`; this
//! crate is an implementation detail.
//!
//! Both run the same stages: `attr` reads the keys into typed attributes (`words` holds the
//! sets of keys) and `ast` the rest of the input, `valid` checks the values as a whole,
//! `expand` generates the code. Every stage records its mistakes in one `Errors` and
//! carries on; if there is any, `fallback` emits them all instead of the code.

mod ast;
mod attr;
mod case;
mod errors;
mod expand;
mod fallback;
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
        Err(_) => fallback::not_a_function(item).into(),
    }
}

/// Declares a runtime context: see `afd_runtime::context!`.
#[proc_macro]
pub fn context(input: TokenStream) -> TokenStream {
    expand::context(input.into())
        .unwrap_or_else(fallback::context)
        .into()
}
