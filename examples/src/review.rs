//! A background review agent, scoped by a context: every run it starts
//! a session, asks which context fits its job, enters it read-only, reads what it needs,
//! and, when it tries to fix something itself, is refused: a reviewer reports, it does not
//! change the shop.

use afd_runtime::{CommandContext, CommandError, CommandResult, Dispatcher};
use serde_json::{Value, json};

/// One call the agent made and what came back.
#[derive(Debug, Clone)]
pub struct Step {
    /// The command.
    pub command: &'static str,
    /// Its input.
    pub input: Value,
    /// The result.
    pub result: CommandResult<Value>,
}

impl Step {
    /// `OK`, or the error code.
    pub fn outcome(&self) -> &str {
        self.result.error.as_ref().map_or("OK", |e| e.code.as_ref())
    }
}

/// What one review run did.
#[derive(Debug, Clone, Default)]
pub struct Review {
    /// The session the run used.
    pub session: String,
    /// Every call, in order.
    pub steps: Vec<Step>,
}

impl Review {
    /// The step that called `command` (the first, if several).
    pub fn step(&self, command: &str) -> Option<&Step> {
        self.steps.iter().find(|step| step.command == command)
    }
}

/// Runs one review over the shop behind `dispatcher`; `ctx` carries the shop's store.
///
/// # Errors
///
/// `SESSION_STORE_UNAVAILABLE` when no session can be opened.
pub async fn run(dispatcher: &Dispatcher, ctx: &CommandContext) -> Result<Review, CommandError> {
    let session = dispatcher.open_session().await?;
    let ctx = ctx.clone().with_session(session.as_str());
    let mut review = Review {
        session,
        steps: Vec::new(),
    };
    let plan: [(&'static str, Value); 9] = [
        // Which context fits the job?
        (
            "afd-context-suggest",
            json!({"intent": "audit the shop's orders and refunds"}),
        ),
        // The audit context is read-only by declaration.
        ("afd-context-enter", json!({"context": "audit"})),
        ("report-order-status", json!({})),
        ("report-refund-rate", json!({})),
        ("afd-context-exit", json!({})),
        // Stock: fulfilment, entered read-only, as background agents should.
        (
            "afd-context-enter",
            json!({"context": "fulfilment", "scope": "read-only"}),
        ),
        ("inventory-list", json!({})),
        // The reviewer sees low stock and tries to restock: refused with FORBIDDEN.
        (
            "inventory-restock",
            json!({"productId": 1, "quantity": 50, "reference": "review-bot"}),
        ),
        ("afd-context-exit", json!({})),
    ];
    for (command, input) in plan {
        let result = dispatcher.call(command, input.clone(), ctx.clone()).await;
        review.steps.push(Step {
            command,
            input,
            result,
        });
    }
    Ok(review)
}
