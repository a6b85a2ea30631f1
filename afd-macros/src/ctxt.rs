//! Collects every error of one expansion, so all mistakes are reported together.

use std::cell::RefCell;
use std::fmt::Display;

use quote::ToTokens;

/// The errors found so far.
#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Vec<syn::Error>>,
}

impl Ctxt {
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

    /// All errors combined into one, or `Ok` when there were none.
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
