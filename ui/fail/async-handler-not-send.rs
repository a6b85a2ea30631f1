use afd_runtime::prelude::*;

async fn yield_now() {}

/// Does a thing.
#[command]
async fn thing() -> u8 {
    let shared = std::rc::Rc::new(1);
    yield_now().await;
    *shared
}

fn main() {}
