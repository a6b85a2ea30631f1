//! What to emit when a macro call has errors. For `#[command]`, `#[resource]` and
//! `#[prompt]`, the user's function,
//! untouched, beside the errors, so one mistake does not cascade into "cannot find
//! function" errors elsewhere; for `context!`, which defines nothing the user's code names,
//! the errors alone.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};

/// The function plus `compile_error!`s (for every attribute that goes on a function).
pub fn command(item: &syn::ItemFn, error: syn::Error) -> TokenStream {
    let errors = error.into_compile_error();
    quote! {
        #errors
        #item
    }
}

/// The `compile_error!`s of a context declaration.
pub fn context(error: syn::Error) -> TokenStream {
    error.into_compile_error()
}

/// The item the attribute was put on, unchanged, with an error on what it is instead of a
/// function: `struct Thing` in "`#[command]` goes on a free function, not a struct";
/// `attribute` is the attribute's name.
pub fn not_a_function(attribute: &str, item: TokenStream) -> TokenStream {
    let (what, head) = match syn::parse2::<syn::Item>(item.clone()) {
        Ok(parsed) => describe(&parsed),
        Err(_) => (None, item.clone()),
    };
    let message = match what {
        Some(what) => format!("`#[{attribute}]` goes on a free function, not {what}"),
        None => format!("`#[{attribute}]` goes on a free function"),
    };
    let error = syn::Error::new_spanned(head, message).into_compile_error();
    quote! {
        #error
        #item
    }
}

/// What an item is, and the tokens that say so (`struct Thing`), for the error's span.
fn describe(item: &syn::Item) -> (Option<&'static str>, TokenStream) {
    fn head(keyword: impl ToTokens, name: impl ToTokens) -> TokenStream {
        quote!(#keyword #name)
    }
    match item {
        syn::Item::Struct(item) => (Some("a struct"), head(item.struct_token, &item.ident)),
        syn::Item::Enum(item) => (Some("an enum"), head(item.enum_token, &item.ident)),
        syn::Item::Union(item) => (Some("a union"), head(item.union_token, &item.ident)),
        syn::Item::Trait(item) => (Some("a trait"), head(item.trait_token, &item.ident)),
        syn::Item::Impl(item) => (
            Some("an `impl` block"),
            head(item.impl_token, &item.self_ty),
        ),
        syn::Item::Mod(item) => (Some("a module"), head(item.mod_token, &item.ident)),
        syn::Item::Const(item) => (Some("a constant"), head(item.const_token, &item.ident)),
        syn::Item::Static(item) => (Some("a static"), head(item.static_token, &item.ident)),
        syn::Item::Type(item) => (Some("a type alias"), head(item.type_token, &item.ident)),
        syn::Item::Use(item) => (Some("a `use`"), head(item.use_token, &item.tree)),
        other => (None, other.to_token_stream()),
    }
}
