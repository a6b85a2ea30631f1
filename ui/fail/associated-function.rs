use afd_runtime::prelude::*;

#[derive(Serialize)]
struct Service;

impl Service {
    /// Does a thing.
    #[command]
    fn thing() -> Self {
        Service
    }
}

fn main() {}
