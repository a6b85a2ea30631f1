afd_runtime::context! {
    /// Printing the document.
    name = "print",
    priority = -1,
}

fn main() {}
