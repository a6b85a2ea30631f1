//! `AFD_TOOL_STRATEGY`, or `TOOL_LOADING` (`eager` or `lazy`), overrides the strategy at
//! start-up, `AFD_OUTPUT_SCHEMAS` turns output schemas on or off, `AFD_COMPACT_SCHEMAS`
//! the compaction of input schemas, and `AFD_BLOCKING_POOL` / `AFD_BLOCKING_LIMIT` where
//! blocking handlers run and how many at once, `AFD_REQUEST_STATE_KEYS` the keys that sign
//! the state of a call that asks its client something. Alone in its test binary, with one test,
//! because the environment is process-wide.

use afd_runtime::Registry;
use afd_runtime::mcp::{
    BLOCKING_LIMIT_ENV, BLOCKING_POOL_ENV, COMPACT_SCHEMAS_ENV, LOADING_ENV, McpServer,
    OUTPUT_SCHEMAS_ENV, REQUEST_STATE_KEYS_ENV, STRATEGY_ENV, Strategy,
};

fn build() -> Result<McpServer, afd_runtime::mcp::BuildError> {
    McpServer::builder(Registry::global())
        .strategy(Strategy::Individual)
        .build()
}

// SAFETY (every `set_var`/`remove_var` below): this test binary has one test, so no other
// thread reads the environment.
#[test]
fn the_environment_overrides_the_strategy() {
    blocking_variables();
    request_state_keys_variable();
    strategy_variable();
    loading_variable();
    seen_by_a_client();
    output_schemas_variable();
    compact_schemas_variable();
}

/// What a real MCP client lists under `TOOL_LOADING`: every command as its own tool
/// (eager), or the meta-tools (lazy).
fn seen_by_a_client() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let listed = |loading: &str| -> Vec<String> {
        unsafe { std::env::set_var(LOADING_ENV, loading) };
        let server = McpServer::builder(Registry::global())
            .strategy(Strategy::Grouped)
            .build()
            .unwrap();
        unsafe { std::env::remove_var(LOADING_ENV) };
        runtime.block_on(async {
            let client = afd_tests::mcp::Client::connect(server).await;
            let tools = client.tools().await;
            tools.iter().map(|tool| tool.name.to_string()).collect()
        })
    };
    let eager = listed("eager");
    assert!(eager.contains(&"afd-call".to_owned()), "{eager:?}");
    assert!(!eager.contains(&"afd-discover".to_owned()), "{eager:?}");
    let lazy = listed("lazy");
    assert_eq!(
        lazy,
        [
            "afd-discover",
            "afd-detail",
            "afd-call",
            "afd-batch",
            "afd-pipe"
        ]
    );
}

fn output_schemas_variable() {
    let with_schemas = |on: bool| {
        let server = McpServer::builder(Registry::global())
            .strategy(Strategy::Individual)
            .output_schemas(on)
            .dispatch(|d| d.expose_only(afd_examples::todo::COMMANDS.iter().map(|c| c.name())))
            .build()?;
        Ok::<_, afd_runtime::mcp::BuildError>(
            server
                .tools()
                .iter()
                .filter(|tool| tool.output_schema.is_some())
                .count(),
        )
    };
    let on = with_schemas(true).unwrap();
    assert!(on > 0);
    assert_eq!(with_schemas(false).unwrap(), 0);
    unsafe { std::env::set_var(OUTPUT_SCHEMAS_ENV, "off") };
    assert_eq!(with_schemas(true).unwrap(), 0);
    unsafe { std::env::set_var(OUTPUT_SCHEMAS_ENV, " On ") };
    assert_eq!(with_schemas(false).unwrap(), on);
    unsafe { std::env::set_var(OUTPUT_SCHEMAS_ENV, "maybe") };
    assert_eq!(
        with_schemas(true).unwrap_err().to_string(),
        "AFD_OUTPUT_SCHEMAS: expected on or off, not 'maybe'"
    );
    unsafe { std::env::remove_var(OUTPUT_SCHEMAS_ENV) };
    assert_eq!(with_schemas(true).unwrap(), on);
}

fn strategy_variable() {
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

fn loading_variable() {
    assert_eq!(LOADING_ENV, "TOOL_LOADING");
    let builder = || {
        McpServer::builder(Registry::global())
            .strategy(Strategy::Grouped)
            .build()
    };
    unsafe { std::env::set_var(LOADING_ENV, "eager") };
    assert_eq!(builder().unwrap().strategy(), Strategy::Individual);
    unsafe { std::env::set_var(LOADING_ENV, " Lazy ") };
    assert_eq!(builder().unwrap().strategy(), Strategy::Lazy);

    // AFD_TOOL_STRATEGY wins when both are set, even over a TOOL_LOADING it would reject.
    unsafe { std::env::set_var(STRATEGY_ENV, "hybrid") };
    assert_eq!(builder().unwrap().strategy(), Strategy::Hybrid);
    unsafe { std::env::set_var(LOADING_ENV, "sometimes") };
    assert_eq!(builder().unwrap().strategy(), Strategy::Hybrid);
    unsafe { std::env::remove_var(STRATEGY_ENV) };

    // Alone, an unknown value fails the build, naming the variable, as AFD_TOOL_STRATEGY does.
    let error = builder().unwrap_err().to_string();
    assert_eq!(
        error,
        "TOOL_LOADING: unknown tool loading 'sometimes': expected eager or lazy"
    );
    unsafe { std::env::set_var(LOADING_ENV, "hybrid") };
    assert!(builder().is_err(), "only eager and lazy are loading names");

    unsafe { std::env::set_var(LOADING_ENV, "  ") };
    assert_eq!(builder().unwrap().strategy(), Strategy::Grouped);
    unsafe { std::env::remove_var(LOADING_ENV) };
    assert_eq!(builder().unwrap().strategy(), Strategy::Grouped);
}

/// Compaction off advertises every command's input schema exactly as generated (the
/// schema calls are validated against); on, at least one of the todo app's differs.
fn compact_schemas_variable() {
    let verbatim = |compact: bool| {
        let server = McpServer::builder(Registry::global())
            .strategy(Strategy::Individual)
            .compact_schemas(compact)
            .dispatch(|d| d.expose_only(afd_examples::todo::COMMANDS.iter().map(|c| c.name())))
            .build()?;
        let registry = Registry::global();
        let tools = server.tools();
        let todo: Vec<&str> = afd_examples::todo::COMMANDS
            .iter()
            .map(|c| c.name())
            .collect();
        let commands: Vec<_> = tools
            .iter()
            .filter(|tool| todo.contains(&&*tool.name))
            .filter_map(|tool| Some((tool, registry.get(&tool.name)?)))
            .collect();
        assert_eq!(commands.len(), afd_examples::todo::COMMANDS.len());
        Ok::<_, afd_runtime::mcp::BuildError>(
            commands
                .iter()
                .filter(|(tool, entry)| {
                    serde_json::Value::Object((*tool.input_schema).clone()) == *entry.input_schema()
                })
                .count(),
        )
    };
    let all = afd_examples::todo::COMMANDS.len();
    assert!(verbatim(true).unwrap() < all);
    assert_eq!(verbatim(false).unwrap(), all);
    unsafe { std::env::set_var(COMPACT_SCHEMAS_ENV, "off") };
    assert_eq!(verbatim(true).unwrap(), all);
    unsafe { std::env::set_var(COMPACT_SCHEMAS_ENV, "sometimes") };
    assert_eq!(
        verbatim(true).unwrap_err().to_string(),
        "AFD_COMPACT_SCHEMAS: expected on or off, not 'sometimes'"
    );
    unsafe { std::env::remove_var(COMPACT_SCHEMAS_ENV) };
}

/// The blocking pool's switch and bound: read at build, a bad value fails the build naming
/// the variable. First here: the limit is fixed once a blocking handler ran, so the build
/// that sets it comes before any call.
fn blocking_variables() {
    unsafe { std::env::set_var(BLOCKING_POOL_ENV, "sideways") };
    assert_eq!(
        build().unwrap_err().to_string(),
        "AFD_BLOCKING_POOL: expected on or off, not 'sideways'"
    );
    unsafe { std::env::set_var(BLOCKING_POOL_ENV, "off") };
    build().unwrap();
    assert!(!afd_runtime::blocking::pool());
    unsafe { std::env::set_var(BLOCKING_POOL_ENV, "on") };
    unsafe { std::env::set_var(BLOCKING_LIMIT_ENV, "0") };
    assert_eq!(
        build().unwrap_err().to_string(),
        "AFD_BLOCKING_LIMIT: expected a whole number of at least 1, not '0'"
    );
    unsafe { std::env::set_var(BLOCKING_LIMIT_ENV, "3") };
    build().unwrap();
    assert!(afd_runtime::blocking::pool());
    assert_eq!(afd_runtime::blocking::limit(), 3);
    unsafe { std::env::remove_var(BLOCKING_POOL_ENV) };
    unsafe { std::env::remove_var(BLOCKING_LIMIT_ENV) };
}

/// Keys of at least 32 bytes as `id:base64` pairs; anything else stops the build, naming
/// the variable, without echoing a key.
fn request_state_keys_variable() {
    let key = "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE="; // 32 bytes of `A`
    unsafe { std::env::set_var(REQUEST_STATE_KEYS_ENV, format!("new:{key},old:{key}")) };
    build().unwrap();
    unsafe { std::env::set_var(REQUEST_STATE_KEYS_ENV, "short:c2hvcnQ=") };
    let error = build().unwrap_err().to_string();
    assert!(error.starts_with("AFD_REQUEST_STATE_KEYS: "), "{error}");
    assert!(!error.contains("c2hvcnQ"), "{error}");
    unsafe { std::env::set_var(REQUEST_STATE_KEYS_ENV, "no-colon") };
    assert!(build().is_err());
    unsafe { std::env::remove_var(REQUEST_STATE_KEYS_ENV) };
    build().unwrap();
}
