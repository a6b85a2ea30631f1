//! The `#[command]` attribute of afd-rs. Use it through `afd_runtime::command` (or
//! `afd_runtime::prelude`); this crate is an implementation detail.

mod ast;
mod attr;
mod case;
mod context;
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
            .unwrap_or_else(|error| fallback::expand(&function, error))
            .into(),
        Err(_) => fallback::not_a_function(item).into(),
    }
}

/// Declares a runtime context: see `afd_runtime::context!`.
#[proc_macro]
pub fn context(input: TokenStream) -> TokenStream {
    context::context(input.into()).into()
}
