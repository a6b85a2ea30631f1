afd_runtime::context! {
    name = "print",
    triggers("print"),
}

fn main() {}
