afd_runtime::context! {
    /// Printing the document.
    name = "print",
    trigger("print", "printer"),
}

fn main() {}
