afd_runtime::context! {
    /// Printing the document.
    name = "print",
    crate = "afd_runtime::",
}

fn main() {}
