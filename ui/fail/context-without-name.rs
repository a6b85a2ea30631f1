afd_runtime::context! {
    /// Printing the document.
    triggers("print"),
    read_only,
}

fn main() {}
