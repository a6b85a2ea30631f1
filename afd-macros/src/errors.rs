//! `Errors`: every mistake found while expanding one macro call, collected so that all of
//! them are reported together instead of one per build.

use std::cell::RefCell;
use std::fmt::Display;

use quote::ToTokens;

/// The errors found so far. Shared by reference between the stages, which record into it
/// and carry on; `check` ends the collection.
#[derive(Default)]
pub struct Errors {
    errors: RefCell<Vec<syn::Error>>,
}

impl Errors {
    /// Records an error spanned on `tokens`.
    pub fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.errors
            .borrow_mut()
            .push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error spanned on a span.
    pub fn error_at<M: Display>(&self, span: proc_macro2::Span, message: M) {
        self.errors
            .borrow_mut()
            .push(syn::Error::new(span, message));
    }

    /// Records a parse error.
    pub fn syn_error(&self, error: syn::Error) {
        self.errors.borrow_mut().push(error);
    }

    /// All errors combined into one, in the order they were found, or `Ok` when there
    /// were none.
    pub fn check(self) -> syn::Result<()> {
        let mut errors = self.errors.into_inner().into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}
