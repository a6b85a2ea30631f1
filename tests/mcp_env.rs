//! `AFD_TOOL_STRATEGY` overrides the strategy at start-up. Alone in its test
//! binary because the environment is process-wide.

use afd_runtime::Registry;
use afd_runtime::mcp::{McpServer, STRATEGY_ENV, Strategy};

#[test]
fn the_environment_overrides_the_strategy() {
    let build = || {
        McpServer::builder(Registry::global())
            .strategy(Strategy::Individual)
            .build()
    };
    // SAFETY: this test binary has one test, so no other thread reads the environment.
    unsafe { std::env::set_var(STRATEGY_ENV, "lazy") };
    assert_eq!(build().unwrap().strategy(), Strategy::Lazy);
    unsafe { std::env::set_var(STRATEGY_ENV, "Grouped") };
    assert_eq!(build().unwrap().strategy(), Strategy::Grouped);
    unsafe { std::env::set_var(STRATEGY_ENV, "fancy") };
    let error = build().unwrap_err().to_string();
    assert_eq!(
        error,
        "AFD_TOOL_STRATEGY: unknown tool strategy 'fancy': expected individual, grouped, lazy or hybrid"
    );
    unsafe { std::env::remove_var(STRATEGY_ENV) };
    assert_eq!(build().unwrap().strategy(), Strategy::Individual);
}
