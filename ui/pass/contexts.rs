use afd_runtime::prelude::*;
use afd_runtime::{Dispatcher, Scope};

afd_runtime::context! {
    /// Editing the document's text.
    name = "document-editing",
    priority = 10,
    triggers("edit", "write"),
}

afd_runtime::context! {
    /// Reviewing the document without changing it.
    name = "document-review",
    parent = "document-editing",
    triggers("review"),
    read_only,
}

/// Makes the selected text bold.
#[command(contexts("document-editing"), mutation)]
fn format_bold() -> &'static str {
    "bold"
}

/// Counts the words of the document.
#[command(contexts("document-editing", "document-review"))]
fn word_count() -> u32 {
    42
}

/// Shows help.
#[command]
fn show_help() -> &'static str {
    "help"
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = Registry::global();
    assert_eq!(registry.contexts().len(), 2);
    assert_eq!(registry.get("format-bold").unwrap().def().contexts(), ["document-editing"]);
    assert!(registry.get("show-help").unwrap().def().is_universal());
    let review = registry.contexts().get("document-review").unwrap();
    assert_eq!(review.parent(), Some("document-editing"));
    assert!(review.is_read_only());
    assert_eq!(review.description(), "Reviewing the document without changing it.");

    let dispatcher = Dispatcher::builder(registry).build().unwrap();
    let session = dispatcher.open_session().await.unwrap();
    dispatcher
        .set_default_context(&session, Some("document-review"), Scope::Full)
        .await
        .unwrap();
    let ctx = CommandContext::new().with_session(session.as_str());
    let counted = dispatcher.call("word-count", json!({}), ctx.clone()).await;
    assert!(counted.success);
    let bold = dispatcher.call("format-bold", json!({}), ctx).await;
    assert_eq!(bold.error.unwrap().code, codes::FORBIDDEN);
}
