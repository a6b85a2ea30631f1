afd_runtime::context! {
    /// Printing the document.
    name = "Print_Preview",
}

fn main() {}
