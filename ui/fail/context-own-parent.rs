afd_runtime::context! {
    /// Printing the document.
    name = "print",
    parent = "print",
}

fn main() {}
