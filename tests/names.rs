//! Command names as MCP allows them: an explicit `name` may be any valid tool name
//! (snake_case as existing servers use, dots), listed, called and found under it on
//! every strategy; a name derived from the function stays kebab-case.

use afd_runtime::mcp::{McpServer, Strategy};
use afd_runtime::prelude::*;
use afd_tests::mcp::Client;

#[derive(Deserialize, JsonSchema)]
struct PullRequest {
    /// The pull request's title.
    title: String,
}

/// Opens a pull request with a title.
#[command(
    name = "create_pull_request",
    category = "repos",
    mutation,
    aliases("pulls.create")
)]
fn open_pull_request(input: PullRequest) -> String {
    format!("opened '{}'", input.title)
}

/// Lists the repository's pull requests.
#[command(category = "repos")]
fn list_pull_requests() -> Vec<String> {
    Vec::new()
}

fn server(strategy: Strategy) -> McpServer {
    McpServer::builder(Registry::global())
        .name("names")
        .strategy(strategy)
        .build()
        .unwrap()
}

#[test]
fn explicit_names_are_kept_and_derived_ones_are_kebab_case() {
    assert_eq!(open_pull_request::COMMAND.name(), "create_pull_request");
    assert_eq!(open_pull_request::COMMAND.aliases(), ["pulls.create"]);
    assert_eq!(list_pull_requests::COMMAND.name(), "list-pull-requests");
}

#[tokio::test]
async fn a_snake_case_command_is_listed_and_called_under_its_name() {
    let client = Client::connect(server(Strategy::Individual)).await;
    let names: Vec<String> = client
        .tools()
        .await
        .iter()
        .map(|tool| tool.name.to_string())
        .collect();
    assert!(
        names.contains(&"create_pull_request".to_owned()),
        "{names:?}"
    );
    let result = client
        .call("create_pull_request", json!({"title": "Fix it"}))
        .await;
    assert_eq!(result["data"], "opened 'Fix it'", "{result}");
    let result = client
        .call("pulls.create", json!({"title": "By alias"}))
        .await;
    assert_eq!(result["data"], "opened 'By alias'", "{result}");
}

#[tokio::test]
async fn lazy_search_finds_a_snake_case_name_by_its_words() {
    let client = Client::connect(server(Strategy::Lazy)).await;
    let found = client
        .call("afd-discover", json!({"search": "create pull request"}))
        .await;
    assert_eq!(
        found["data"]["commands"][0]["name"], "create_pull_request",
        "{found}"
    );
    let result = client
        .call(
            "afd-call",
            json!({"command": "create_pull_request", "input": {"title": "Lazy"}}),
        )
        .await;
    assert_eq!(result["data"], "opened 'Lazy'", "{result}");
}
