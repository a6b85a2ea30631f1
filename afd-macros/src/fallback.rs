//! What to emit when the attribute has errors: the user's function, untouched, beside the
//! errors, so one mistake does not cascade into "cannot find function" errors elsewhere.

use proc_macro2::TokenStream;
use quote::quote;

/// The function plus `compile_error!`s.
pub fn expand(item: &syn::ItemFn, error: syn::Error) -> TokenStream {
    let errors = error.into_compile_error();
    quote! {
        #errors
        #item
    }
}
