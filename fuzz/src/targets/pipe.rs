//! afd-pipe's reference and condition language (`$prev.items[0].id`, `$steps.alias`,
//! `{"$and": [{"$gt": ["$prev.total", 10]}, ...]}`), run the way a client's request runs:
//! the request JSON decoded as a `PipeRequest`, its steps called through a dispatcher over
//! the commands of `afd_fuzz`. Any request is a result (whose JSON serialises) with one
//! entry per step that ran, never a panic or a hang.

use std::sync::LazyLock;

use crate::block_on;
use afd_runtime::{CommandContext, Dispatcher, MetaTools, PipeRequest, Registry, codes};

static DISPATCHER: LazyLock<Dispatcher> = LazyLock::new(|| {
    Dispatcher::builder(Registry::global())
        .build()
        .expect("a dispatcher")
});

/// Checks one input: panics on anything this target forbids.
pub fn run(data: &[u8]) {
    let Ok(request) = serde_json::from_slice::<PipeRequest>(data) else {
        return;
    };
    let steps = request.steps.len();
    let result = block_on(DISPATCHER.pipe(request, CommandContext::new()));
    assert!(result.steps.len() <= steps, "more results than steps");
    serde_json::to_string(&result).expect("a pipe result serialises");
    if let Some(error) = &result.error {
        assert_ne!(error.code, codes::INTERNAL_ERROR, "{error:?}");
    }
    for step in &result.steps {
        if let Some(error) = &step.error {
            assert_ne!(error.code, codes::INTERNAL_ERROR, "{error:?}");
        }
    }
}
