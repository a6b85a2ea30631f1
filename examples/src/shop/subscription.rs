//! Subscription boxes and their plans.

use afd_runtime::prelude::*;
use rusqlite::{Connection, Row, params};

use super::store::{
    Db, ShopStore, all, conflict, invalid_state, next_id, not_found, now, one, scalar,
};
use super::{Page, PageQuery, string_enum, user};

string_enum! {
    /// Where a subscription is: `active`, `paused` or `cancelled`.
    pub enum SubscriptionStatus { Active => "active", Paused => "paused", Cancelled => "cancelled" }
}

string_enum! {
    /// How often a plan bills: every `month` or every `year`.
    pub enum BillingInterval { Month => "month", Year => "year" }
}

/// A customer's subscription to a plan.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Subscription {
    /// Unique identifier, like sub-2001.
    pub id: String,
    /// The subscriber.
    pub user_id: i64,
    /// The plan's id.
    pub plan_id: String,
    /// The plan's name.
    pub plan_name: String,
    /// Price per interval, in cents.
    pub price_cents: i64,
    /// How often it bills.
    pub interval: BillingInterval,
    /// Where it is.
    pub status: SubscriptionStatus,
    /// When it started (ISO 8601).
    pub started_at: String,
    /// When the paid period ends and it renews (ISO 8601).
    pub current_period_end: String,
    /// When it ended (ISO 8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
}

const SUBSCRIPTION_SELECT: &str = "SELECT s.id, s.user_id, s.plan_id, p.name AS plan_name,
    p.price_cents, p.interval, s.status, s.started_at, s.current_period_end, s.ended_at
    FROM subscriptions s JOIN plans p ON p.id = s.plan_id";

fn subscription_from_row(row: &Row<'_>) -> rusqlite::Result<Subscription> {
    Ok(Subscription {
        id: row.get("id")?,
        user_id: row.get("user_id")?,
        plan_id: row.get("plan_id")?,
        plan_name: row.get("plan_name")?,
        price_cents: row.get("price_cents")?,
        interval: row.get("interval")?,
        status: row.get("status")?,
        started_at: row.get("started_at")?,
        current_period_end: row.get("current_period_end")?,
        ended_at: row.get("ended_at")?,
    })
}

fn require_subscription(conn: &Connection, id: &str) -> Result<Subscription, CommandError> {
    one(
        conn,
        &format!("{SUBSCRIPTION_SELECT} WHERE s.id = ?1"),
        [id],
        subscription_from_row,
    )?
    .ok_or_else(|| not_found("Subscription", id, "subscription-list"))
}

fn require_plan(conn: &Connection, id: &str) -> Result<(i64, BillingInterval), CommandError> {
    one(
        conn,
        "SELECT price_cents, interval FROM plans WHERE id = ?1",
        [id],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?
    .ok_or_else(|| not_found("Plan", id, "plan-list"))
}

/// The end of a period of `interval` starting now.
fn period_end(conn: &Connection, interval: BillingInterval) -> Result<String, CommandError> {
    let modifier = match interval {
        BillingInterval::Month => "+1 month",
        BillingInterval::Year => "+1 year",
    };
    scalar(
        conn,
        "SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?1)",
        [modifier],
    )
}

fn set_status(
    conn: &Connection,
    id: &str,
    status: SubscriptionStatus,
) -> Result<Subscription, CommandError> {
    let ended_at = match status {
        SubscriptionStatus::Cancelled => Some(now(conn)?),
        _ => None,
    };
    conn.execute(
        "UPDATE subscriptions SET status = ?2, ended_at = ?3 WHERE id = ?1",
        params![id, status, ended_at],
    )
    .db()?;
    require_subscription(conn, id)
}

/// Input of `subscription-create`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateSubscription {
    /// The subscriber's user id.
    #[schemars(range(min = 1))]
    pub user_id: i64,
    /// The plan, like basic, plus or annual-plus (see plan-list).
    #[schemars(length(min = 1))]
    pub plan_id: String,
}

/// Subscribe a user to a plan, starting now. A user has one running subscription at most.
#[command(
    blocking,
    title = "Subscribe",
    scopes("shop:write"),
    contexts("billing"),
    tags("billing", "mutation"),
    mutation,
    errors("NOT_FOUND", "INVALID_STATE", "CONFLICT")
)]
pub fn subscription_create(
    input: CreateSubscription,
    ctx: &CommandContext,
) -> Result<Subscription, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        user::require_active_user(conn, input.user_id)?;
        let (_, interval) = require_plan(conn, &input.plan_id)?;
        let running: Option<String> = one(
            conn,
            "SELECT id FROM subscriptions WHERE user_id = ?1 AND status != 'cancelled'",
            [input.user_id],
            |row| row.get(0),
        )?;
        if let Some(existing) = running {
            return Err(conflict(
                format!("User {} already has subscription {existing}", input.user_id),
                format!(
                    "Call subscription-change-plan with subscriptionId '{existing}' to switch plans."
                ),
            ));
        }
        let id = next_id(conn, "subscriptions", "sub-", 2001)?;
        let started = now(conn)?;
        let end = period_end(conn, interval)?;
        conn.execute(
            "INSERT INTO subscriptions (id, user_id, plan_id, status, started_at, current_period_end)
             VALUES (?1, ?2, ?3, 'active', ?4, ?5)",
            params![id, input.user_id, input.plan_id, started, end],
        )
        .db()?;
        require_subscription(conn, &id)
    })
}

/// Input naming one subscription.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionId {
    /// The subscription's id, like sub-2001.
    pub subscription_id: String,
}

/// Get a subscription by id.
#[command(
    title = "Get subscription",
    scopes("shop:read"),
    contexts("billing", "audit"),
    tags("billing", "read"),
    errors("NOT_FOUND")
)]
pub fn subscription_get(
    input: SubscriptionId,
    ctx: &CommandContext,
) -> Result<Subscription, CommandError> {
    require_subscription(&ctx.state::<ShopStore>()?.read(), &input.subscription_id)
}

/// Input of `subscription-list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListSubscriptions {
    /// Only this subscriber's subscriptions.
    pub user_id: Option<i64>,
    /// Only subscriptions in this status.
    pub status: Option<SubscriptionStatus>,
    /// Only subscriptions to this plan.
    pub plan_id: Option<String>,
    /// Pagination.
    #[serde(flatten)]
    pub page: PageQuery,
}

/// List subscriptions by subscriber, status or plan, newest first.
#[command(
    title = "List subscriptions",
    scopes("shop:read"),
    contexts("billing", "audit"),
    tags("billing", "read")
)]
pub fn subscription_list(
    input: ListSubscriptions,
    ctx: &CommandContext,
) -> Result<Page<Subscription>, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let filter = "(?1 IS NULL OR s.user_id = ?1) AND (?2 IS NULL OR s.status = ?2)
        AND (?3 IS NULL OR s.plan_id = ?3)";
    let total = scalar(
        &conn,
        &format!("SELECT count(*) FROM subscriptions s WHERE {filter}"),
        params![input.user_id, input.status, input.plan_id],
    )?;
    let subscriptions = all(
        &conn,
        &format!(
            "{SUBSCRIPTION_SELECT} WHERE {filter} ORDER BY s.started_at DESC, s.id DESC
             LIMIT ?4 OFFSET ?5"
        ),
        params![
            input.user_id,
            input.status,
            input.plan_id,
            input.page.limit,
            input.page.offset
        ],
        subscription_from_row,
    )?;
    Ok(Page::new(subscriptions, total, input.page))
}

/// Cancel a subscription. It stops renewing at once; nothing is refunded.
#[command(
    blocking,
    title = "Cancel subscription",
    scopes("shop:write"),
    contexts("billing"),
    tags("billing", "mutation"),
    mutation,
    errors("NOT_FOUND", "INVALID_STATE")
)]
pub fn subscription_cancel(
    input: SubscriptionId,
    ctx: &CommandContext,
) -> Result<Subscription, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let subscription = require_subscription(conn, &input.subscription_id)?;
        if subscription.status == SubscriptionStatus::Cancelled {
            return Err(invalid_state(
                format!("Subscription {} is already cancelled", subscription.id),
                "Nothing to do; subscription-create starts a new one.",
            ));
        }
        set_status(conn, &subscription.id, SubscriptionStatus::Cancelled)
    })
}

/// Pause an active subscription. It stops billing and shipping until resumed.
#[command(
    blocking,
    title = "Pause subscription",
    scopes("shop:write"),
    contexts("billing"),
    tags("billing", "mutation"),
    mutation,
    errors("NOT_FOUND", "INVALID_STATE")
)]
pub fn subscription_pause(
    input: SubscriptionId,
    ctx: &CommandContext,
) -> Result<Subscription, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let subscription = require_subscription(conn, &input.subscription_id)?;
        if subscription.status != SubscriptionStatus::Active {
            return Err(invalid_state(
                format!(
                    "Subscription {} is {}, not active",
                    subscription.id,
                    subscription.status.as_str()
                ),
                "Only active subscriptions can be paused.",
            ));
        }
        set_status(conn, &subscription.id, SubscriptionStatus::Paused)
    })
}

/// Resume a paused subscription. If its period lapsed meanwhile, a new period starts now.
#[command(
    blocking,
    title = "Resume subscription",
    scopes("shop:write"),
    contexts("billing"),
    tags("billing", "mutation"),
    mutation,
    errors("NOT_FOUND", "INVALID_STATE")
)]
pub fn subscription_resume(
    input: SubscriptionId,
    ctx: &CommandContext,
) -> Result<Subscription, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let subscription = require_subscription(conn, &input.subscription_id)?;
        if subscription.status != SubscriptionStatus::Paused {
            return Err(invalid_state(
                format!(
                    "Subscription {} is {}, not paused",
                    subscription.id,
                    subscription.status.as_str()
                ),
                "Only paused subscriptions can be resumed.",
            ));
        }
        if subscription.current_period_end < now(conn)? {
            let end = period_end(conn, subscription.interval)?;
            conn.execute(
                "UPDATE subscriptions SET current_period_end = ?2 WHERE id = ?1",
                params![subscription.id, end],
            )
            .db()?;
        }
        set_status(conn, &subscription.id, SubscriptionStatus::Active)
    })
}

/// Input of `subscription-change-plan`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangePlan {
    /// The subscription's id, like sub-2001.
    pub subscription_id: String,
    /// The new plan's id (see plan-list).
    #[schemars(length(min = 1))]
    pub plan_id: String,
}

/// Result of `subscription-change-plan`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanChanged {
    /// The subscription on its new plan.
    pub subscription: Subscription,
    /// The plan before.
    pub previous_plan_id: String,
    /// New price minus old price per month, in cents (yearly plans count a twelfth).
    pub monthly_difference_cents: i64,
}

fn monthly(price: i64, interval: BillingInterval) -> i64 {
    match interval {
        BillingInterval::Month => price,
        BillingInterval::Year => (price as f64 / 12.0).round() as i64,
    }
}

/// Move a running subscription to another plan, from the next period on.
#[command(
    blocking,
    title = "Change plan",
    scopes("shop:write"),
    contexts("billing"),
    tags("billing", "mutation"),
    mutation,
    errors("NOT_FOUND", "INVALID_STATE", "CONFLICT")
)]
pub fn subscription_change_plan(
    input: ChangePlan,
    ctx: &CommandContext,
) -> Result<PlanChanged, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let subscription = require_subscription(conn, &input.subscription_id)?;
        if subscription.status == SubscriptionStatus::Cancelled {
            return Err(invalid_state(
                format!("Subscription {} has ended", subscription.id),
                "Start a new one on the plan with subscription-create.",
            ));
        }
        if subscription.plan_id == input.plan_id {
            return Err(conflict(
                format!(
                    "Subscription {} is already on plan {}",
                    subscription.id, input.plan_id
                ),
                "Pick another plan; plan-list shows them.",
            ));
        }
        let (price, interval) = require_plan(conn, &input.plan_id)?;
        conn.execute(
            "UPDATE subscriptions SET plan_id = ?2 WHERE id = ?1",
            params![subscription.id, input.plan_id],
        )
        .db()?;
        Ok(PlanChanged {
            subscription: require_subscription(conn, &subscription.id)?,
            monthly_difference_cents: monthly(price, interval)
                - monthly(subscription.price_cents, subscription.interval),
            previous_plan_id: subscription.plan_id,
        })
    })
}

/// A subscription plan.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    /// Unique identifier, like plus.
    pub id: String,
    /// Name shown to customers.
    pub name: String,
    /// Price per interval, in cents.
    pub price_cents: i64,
    /// How often it bills.
    pub interval: BillingInterval,
    /// Subscriptions on it that are active now.
    pub active_subscribers: i64,
}

/// Every plan.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PlanList {
    /// The plans, cheapest first.
    pub plans: Vec<Plan>,
}

/// List subscription plans with prices and active subscriber counts.
#[command(
    title = "List plans",
    scopes("shop:read"),
    category = "subscription",
    tags("billing", "read"),
    eager
)]
pub fn plan_list(ctx: &CommandContext) -> Result<PlanList, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let plans = all(
        &conn,
        "SELECT p.id, p.name, p.price_cents, p.interval,
            (SELECT count(*) FROM subscriptions s WHERE s.plan_id = p.id AND s.status = 'active')
         FROM plans p ORDER BY p.price_cents, p.id",
        [],
        |row| {
            Ok(Plan {
                id: row.get(0)?,
                name: row.get(1)?,
                price_cents: row.get(2)?,
                interval: row.get(3)?,
                active_subscribers: row.get(4)?,
            })
        },
    )?;
    Ok(PlanList { plans })
}
