use afd_runtime::prelude::*;

struct Service;

impl Service {
    /// Does a thing.
    #[command]
    fn thing(&self) -> u8 {
        1
    }
}

fn main() {}
