//! Payments of orders: authorize, capture, void and refund.

use afd_runtime::prelude::*;
use rusqlite::{Connection, Row, params};

use super::order::{OrderStatus, move_order_stock, require_order, set_order_status};
use super::store::{Db, ShopStore, all, invalid_state, next_id, not_found, now, one, scalar};
use super::{Page, PageQuery, string_enum};

string_enum! {
    /// How the customer pays: `card`, `paypal` or `bank_transfer`.
    pub enum PaymentMethod { Card => "card", Paypal => "paypal", BankTransfer => "bank_transfer" }
}

string_enum! {
    /// Where a payment is: `authorized` (funds held), `captured` (funds taken), `voided`
    /// (hold released), `partially_refunded` or `refunded`.
    pub enum PaymentStatus {
        Authorized => "authorized",
        Captured => "captured",
        Voided => "voided",
        PartiallyRefunded => "partially_refunded",
        Refunded => "refunded",
    }
}

/// A payment of an order.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Payment {
    /// Unique identifier, like pay-3001.
    pub id: String,
    /// The order paid.
    pub order_id: String,
    /// How the customer pays.
    pub method: PaymentMethod,
    /// Amount authorized or captured, in cents.
    pub amount_cents: i64,
    /// Amount refunded so far, in cents.
    pub refunded_cents: i64,
    /// Where the payment is.
    pub status: PaymentStatus,
    /// When it was authorized (ISO 8601).
    pub created_at: String,
    /// When it was captured (ISO 8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub captured_at: Option<String>,
}

const PAYMENT_COLUMNS: &str =
    "id, order_id, method, amount_cents, refunded_cents, status, created_at, captured_at";

fn payment_from_row(row: &Row<'_>) -> rusqlite::Result<Payment> {
    Ok(Payment {
        id: row.get("id")?,
        order_id: row.get("order_id")?,
        method: row.get("method")?,
        amount_cents: row.get("amount_cents")?,
        refunded_cents: row.get("refunded_cents")?,
        status: row.get("status")?,
        created_at: row.get("created_at")?,
        captured_at: row.get("captured_at")?,
    })
}

fn require_payment(conn: &Connection, id: &str) -> Result<Payment, CommandError> {
    one(
        conn,
        &format!("SELECT {PAYMENT_COLUMNS} FROM payments WHERE id = ?1"),
        [id],
        payment_from_row,
    )?
    .ok_or_else(|| not_found("Payment", id, "payment-list"))
}

/// A refund of (part of) a payment.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Refund {
    /// Unique identifier, like ref-5001.
    pub id: String,
    /// The payment refunded.
    pub payment_id: String,
    /// The order of that payment.
    pub order_id: String,
    /// Amount returned to the customer, in cents.
    pub amount_cents: i64,
    /// Why.
    pub reason: String,
    /// When (ISO 8601).
    pub created_at: String,
}

const REFUND_SELECT: &str = "SELECT r.id, r.payment_id, p.order_id, r.amount_cents, r.reason,
    r.created_at FROM refunds r JOIN payments p ON p.id = r.payment_id";

fn refund_from_row(row: &Row<'_>) -> rusqlite::Result<Refund> {
    Ok(Refund {
        id: row.get(0)?,
        payment_id: row.get(1)?,
        order_id: row.get(2)?,
        amount_cents: row.get(3)?,
        reason: row.get(4)?,
        created_at: row.get(5)?,
    })
}

/// Net money held or taken for an order: authorized + captured - refunded, in cents.
fn committed(conn: &Connection, order_id: &str) -> Result<i64, CommandError> {
    scalar(
        conn,
        "SELECT coalesce(sum(amount_cents - refunded_cents), 0) FROM payments
         WHERE order_id = ?1 AND status IN ('authorized', 'captured', 'partially_refunded')",
        [order_id],
    )
}

/// Net money taken for an order: captured - refunded, in cents.
pub(crate) fn paid(conn: &Connection, order_id: &str) -> Result<i64, CommandError> {
    scalar(
        conn,
        "SELECT coalesce(sum(amount_cents - refunded_cents), 0) FROM payments
         WHERE order_id = ?1 AND status IN ('captured', 'partially_refunded', 'refunded')",
        [order_id],
    )
}

fn exceeds(amount: i64, limit: i64, what: &str) -> CommandError {
    CommandError::new(
        "AMOUNT_EXCEEDS_BALANCE",
        format!("{amount} cents exceed the {limit} cents {what}"),
    )
    .with_suggestion(format!(
        "Pass amountCents of at most {limit}, or leave it out."
    ))
    .with_details(json!({"requested": amount, "limit": limit}))
    .with_retryable(false)
}

/// Input of `payment-authorize`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizePayment {
    /// The order to pay, like ord-1001.
    pub order_id: String,
    /// How the customer pays.
    pub method: PaymentMethod,
    /// Amount to hold, in cents (default: the order's unpaid balance).
    #[schemars(range(min = 1))]
    pub amount_cents: Option<i64>,
}

/// Authorize a payment for a pending order. The funds are held until captured or voided.
#[command(
    blocking,
    title = "Authorize payment",
    scopes("shop:write"),
    contexts("billing"),
    tags("billing", "mutation"),
    mutation,
    errors("NOT_FOUND", "INVALID_STATE", "AMOUNT_EXCEEDS_BALANCE")
)]
pub fn payment_authorize(
    input: AuthorizePayment,
    ctx: &CommandContext,
) -> Result<Payment, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let order = require_order(conn, &input.order_id)?;
        if order.status != OrderStatus::Pending {
            return Err(invalid_state(
                format!("Order {} is {}, not awaiting payment", order.id, order.status.as_str()),
                "Only pending orders take payments; payment-list shows this order's payments.",
            ));
        }
        let balance = order.total_cents - committed(conn, &order.id)?;
        if balance <= 0 {
            return Err(invalid_state(
                format!("Order {} is already fully authorized", order.id),
                format!("Capture the held payment with payment-capture; payment-list with orderId '{}' shows it.", order.id),
            ));
        }
        let amount = input.amount_cents.unwrap_or(balance);
        if amount > balance {
            return Err(exceeds(amount, balance, "left to pay"));
        }
        let id = next_id(conn, "payments", "pay-", 3001)?;
        let at = now(conn)?;
        conn.execute(
            "INSERT INTO payments (id, order_id, method, amount_cents, status, created_at)
             VALUES (?1, ?2, ?3, ?4, 'authorized', ?5)",
            params![id, order.id, input.method, amount, at],
        )
        .db()?;
        require_payment(conn, &id)
    })
}

/// Input naming one payment.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaymentId {
    /// The payment's id, like pay-3001.
    pub payment_id: String,
}

/// Result of `payment-capture`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Captured {
    /// The payment, now captured.
    pub payment: Payment,
    /// The order's status afterwards: paid once fully captured.
    pub order_status: OrderStatus,
}

/// Capture an authorized payment. The order becomes paid once its total is captured.
#[command(
    blocking,
    title = "Capture payment",
    scopes("shop:write"),
    contexts("billing"),
    tags("billing", "mutation"),
    mutation,
    errors("NOT_FOUND", "INVALID_STATE")
)]
pub fn payment_capture(input: PaymentId, ctx: &CommandContext) -> Result<Captured, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let payment = require_payment(conn, &input.payment_id)?;
        if payment.status != PaymentStatus::Authorized {
            return Err(invalid_state(
                format!("Payment {} is {}, not authorized", payment.id, payment.status.as_str()),
                "Only authorized payments can be captured; authorize a new one with payment-authorize.",
            ));
        }
        let at = now(conn)?;
        conn.execute(
            "UPDATE payments SET status = 'captured', captured_at = ?2 WHERE id = ?1",
            params![payment.id, at],
        )
        .db()?;
        let order = require_order(conn, &payment.order_id)?;
        let mut order_status = order.status;
        if order.status == OrderStatus::Pending && paid(conn, &order.id)? >= order.total_cents {
            set_order_status(conn, &order.id, OrderStatus::Paid)?;
            order_status = OrderStatus::Paid;
        }
        Ok(Captured {
            payment: require_payment(conn, &payment.id)?,
            order_status,
        })
    })
}

/// Void an authorized payment, releasing the held funds. A voided payment cannot be captured.
#[command(
    blocking,
    title = "Void payment",
    scopes("shop:admin"),
    contexts("billing", "returns"),
    tags("billing", "mutation", "destructive"),
    mutation,
    destructive,
    confirm_prompt = "This will void payment {paymentId}; it can no longer be captured. Continue?",
    errors("NOT_FOUND", "INVALID_STATE")
)]
pub fn payment_void(input: PaymentId, ctx: &CommandContext) -> Result<Payment, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let payment = require_payment(conn, &input.payment_id)?;
        if payment.status != PaymentStatus::Authorized {
            return Err(invalid_state(
                format!(
                    "Payment {} is {}, not authorized",
                    payment.id,
                    payment.status.as_str()
                ),
                "Captured payments are returned with payment-refund.",
            ));
        }
        conn.execute(
            "UPDATE payments SET status = 'voided' WHERE id = ?1",
            [&payment.id],
        )
        .db()?;
        require_payment(conn, &payment.id)
    })
}

/// Input of `payment-refund`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefundPayment {
    /// The payment's id, like pay-3001.
    pub payment_id: String,
    /// Amount to return, in cents (default: everything not yet refunded).
    #[schemars(range(min = 1))]
    pub amount_cents: Option<i64>,
    /// Why the money goes back.
    #[schemars(length(min = 1, max = 200))]
    pub reason: String,
    /// Put shipped goods back in stock (they were returned).
    #[serde(default)]
    pub restock: bool,
}

/// Result of `payment-refund`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Refunded {
    /// The refund made.
    pub refund: Refund,
    /// The payment afterwards.
    pub payment: Payment,
    /// The order's status afterwards: refunded once nothing paid is left.
    pub order_status: OrderStatus,
}

/// Refund a captured payment in full or in part. A fully refunded order is closed and its
/// unshipped stock released.
#[command(
    blocking,
    title = "Refund payment",
    scopes("shop:admin"),
    contexts("billing", "returns"),
    tags("billing", "mutation", "destructive"),
    mutation,
    destructive,
    confirm_prompt = "This will refund payment {paymentId} to the customer. Continue?",
    errors("NOT_FOUND", "INVALID_STATE", "AMOUNT_EXCEEDS_BALANCE")
)]
pub fn payment_refund(
    input: RefundPayment,
    ctx: &CommandContext,
) -> Result<Refunded, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let payment = require_payment(conn, &input.payment_id)?;
        if !matches!(
            payment.status,
            PaymentStatus::Captured | PaymentStatus::PartiallyRefunded
        ) {
            return Err(invalid_state(
                format!(
                    "Payment {} is {}; only captured payments can be refunded",
                    payment.id,
                    payment.status.as_str()
                ),
                "An authorized payment is released with payment-void.",
            ));
        }
        let left = payment.amount_cents - payment.refunded_cents;
        let amount = input.amount_cents.unwrap_or(left);
        if amount > left {
            return Err(exceeds(amount, left, "not yet refunded"));
        }
        let id = next_id(conn, "refunds", "ref-", 5001)?;
        let at = now(conn)?;
        conn.execute(
            "INSERT INTO refunds (id, payment_id, amount_cents, reason, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![id, payment.id, amount, input.reason, at],
        )
        .db()?;
        let status = if amount == left {
            PaymentStatus::Refunded
        } else {
            PaymentStatus::PartiallyRefunded
        };
        conn.execute(
            "UPDATE payments SET refunded_cents = refunded_cents + ?2, status = ?3 WHERE id = ?1",
            params![payment.id, amount, status],
        )
        .db()?;
        let order = require_order(conn, &payment.order_id)?;
        let mut order_status = order.status;
        if paid(conn, &order.id)? == 0 && order.status != OrderStatus::Refunded {
            match order.status {
                OrderStatus::Paid => {
                    move_order_stock(conn, &order, 0, -1, "release")?;
                }
                OrderStatus::Shipped | OrderStatus::Delivered if input.restock => {
                    move_order_stock(conn, &order, 1, 0, "return")?;
                }
                _ => {}
            }
            set_order_status(conn, &order.id, OrderStatus::Refunded)?;
            order_status = OrderStatus::Refunded;
        }
        let refund = one(
            conn,
            &format!("{REFUND_SELECT} WHERE r.id = ?1"),
            [&id],
            refund_from_row,
        )?
        .ok_or_else(|| not_found("Refund", &id, "payment-refund-list"))?;
        Ok(Refunded {
            refund,
            payment: require_payment(conn, &payment.id)?,
            order_status,
        })
    })
}

/// A payment and its refunds.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaymentDetail {
    /// The payment.
    #[serde(flatten)]
    pub payment: Payment,
    /// Its refunds, oldest first.
    pub refunds: Vec<Refund>,
}

/// Get a payment and its refunds.
#[command(
    title = "Get payment",
    scopes("shop:read"),
    contexts("billing", "audit"),
    tags("billing", "read"),
    errors("NOT_FOUND")
)]
pub fn payment_get(input: PaymentId, ctx: &CommandContext) -> Result<PaymentDetail, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let payment = require_payment(&conn, &input.payment_id)?;
    let refunds = all(
        &conn,
        &format!("{REFUND_SELECT} WHERE r.payment_id = ?1 ORDER BY r.created_at, r.id"),
        [&payment.id],
        refund_from_row,
    )?;
    Ok(PaymentDetail { payment, refunds })
}

/// Input of `payment-list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListPayments {
    /// Only payments of this order.
    pub order_id: Option<String>,
    /// Only payments in this status.
    pub status: Option<PaymentStatus>,
    /// Only payments made this way.
    pub method: Option<PaymentMethod>,
    /// Pagination.
    #[serde(flatten)]
    pub page: PageQuery,
}

/// List payments by order, status or method, newest first.
#[command(
    title = "List payments",
    scopes("shop:read"),
    contexts("billing", "audit"),
    tags("billing", "read")
)]
pub fn payment_list(
    input: ListPayments,
    ctx: &CommandContext,
) -> Result<Page<Payment>, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let filter = "(?1 IS NULL OR order_id = ?1) AND (?2 IS NULL OR status = ?2)
        AND (?3 IS NULL OR method = ?3)";
    let total = scalar(
        &conn,
        &format!("SELECT count(*) FROM payments WHERE {filter}"),
        params![input.order_id, input.status, input.method],
    )?;
    let payments = all(
        &conn,
        &format!(
            "SELECT {PAYMENT_COLUMNS} FROM payments WHERE {filter}
             ORDER BY created_at DESC, id DESC LIMIT ?4 OFFSET ?5"
        ),
        params![
            input.order_id,
            input.status,
            input.method,
            input.page.limit,
            input.page.offset
        ],
        payment_from_row,
    )?;
    Ok(Page::new(payments, total, input.page))
}

/// Input of `payment-refund-list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListRefunds {
    /// Only refunds of this payment.
    pub payment_id: Option<String>,
    /// Only refunds of this order's payments.
    pub order_id: Option<String>,
    /// Pagination.
    #[serde(flatten)]
    pub page: PageQuery,
}

/// List refunds by payment or order, newest first.
#[command(
    title = "List refunds",
    scopes("shop:read"),
    contexts("billing", "audit"),
    tags("billing", "read")
)]
pub fn payment_refund_list(
    input: ListRefunds,
    ctx: &CommandContext,
) -> Result<Page<Refund>, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let filter = "(?1 IS NULL OR r.payment_id = ?1) AND (?2 IS NULL OR p.order_id = ?2)";
    let total = scalar(
        &conn,
        &format!(
            "SELECT count(*) FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE {filter}"
        ),
        params![input.payment_id, input.order_id],
    )?;
    let refunds = all(
        &conn,
        &format!(
            "{REFUND_SELECT} WHERE {filter} ORDER BY r.created_at DESC, r.id DESC LIMIT ?3 OFFSET ?4"
        ),
        params![
            input.payment_id,
            input.order_id,
            input.page.limit,
            input.page.offset
        ],
        refund_from_row,
    )?;
    Ok(Page::new(refunds, total, input.page))
}
