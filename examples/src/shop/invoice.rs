//! Invoices: an order's bill, derived from the order and its payments.

use afd_runtime::prelude::*;
use rusqlite::params;

use super::order::{OrderItem, OrderStatus, require_order};
use super::payment::paid;
use super::store::{ShopStore, all, config_value, scalar};
use super::user::{Address, default_address};
use super::{Page, PageQuery, string_enum};

string_enum! {
    /// An invoice's state: `open` (balance due), `paid`, `void` (order called off) or
    /// `refunded`.
    pub enum InvoiceStatus { Open => "open", Paid => "paid", Void => "void", Refunded => "refunded" }
}

/// Who an invoice is billed to.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BillTo {
    /// The customer's user id.
    pub user_id: i64,
    /// The customer's name.
    pub name: String,
    /// The customer's email.
    pub email: String,
    /// The customer's default address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<Address>,
}

/// An order's invoice.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Invoice {
    /// Invoice number, like INV-1001.
    pub number: String,
    /// The order billed.
    pub order_id: String,
    /// The seller (store.name).
    pub seller: String,
    /// Currency of every amount (store.currency).
    pub currency: String,
    /// The customer (absent once their account was deleted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bill_to: Option<BillTo>,
    /// The lines.
    pub lines: Vec<OrderItem>,
    /// Sum of the lines, in cents.
    pub subtotal_cents: i64,
    /// Coupon discount, in cents.
    pub discount_cents: i64,
    /// Shipping, in cents.
    pub shipping_cents: i64,
    /// Sales tax, in cents.
    pub tax_cents: i64,
    /// Amount billed, in cents.
    pub total_cents: i64,
    /// Captured minus refunded, in cents.
    pub paid_cents: i64,
    /// Still to pay, in cents (0 unless open).
    pub balance_due_cents: i64,
    /// The invoice's state.
    pub status: InvoiceStatus,
    /// When it was issued: when the order was placed (ISO 8601).
    pub issued_at: String,
}

fn number(order_id: &str) -> String {
    format!("INV-{}", order_id.trim_start_matches("ord-"))
}

/// SQL for an invoice's state, from an order `o` and its net paid amount `paid` (as
/// `invoice-get` computes it).
const STATUS_SQL: &str =
    "CASE o.status WHEN 'cancelled' THEN 'void' WHEN 'refunded' THEN 'refunded'
    ELSE CASE WHEN paid >= o.total_cents THEN 'paid' ELSE 'open' END END";

/// Net paid per order.
const PAID_SQL: &str = "(SELECT coalesce(sum(p.amount_cents - p.refunded_cents), 0) FROM payments p
    WHERE p.order_id = o.id AND p.status IN ('captured', 'partially_refunded', 'refunded'))";

/// Input naming one order.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderRef {
    /// The order's id, like ord-1001.
    pub order_id: String,
}

/// Get the invoice of an order. Lines, totals, amount paid and balance due, with seller and customer.
#[command(
    title = "Get invoice",
    scopes("shop:read"),
    contexts("billing", "audit"),
    tags("billing", "read"),
    errors("NOT_FOUND")
)]
pub fn invoice_get(input: OrderRef, ctx: &CommandContext) -> Result<Invoice, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let order = require_order(&conn, &input.order_id)?;
    let paid_cents = paid(&conn, &order.id)?;
    let status = match order.status {
        OrderStatus::Cancelled => InvoiceStatus::Void,
        OrderStatus::Refunded => InvoiceStatus::Refunded,
        _ if paid_cents >= order.total_cents => InvoiceStatus::Paid,
        _ => InvoiceStatus::Open,
    };
    let bill_to = match order.user_id {
        Some(user_id) => {
            let user = super::user::require_user(&conn, user_id)?;
            Some(BillTo {
                user_id,
                name: user.name,
                email: user.email,
                address: default_address(&conn, user_id)?,
            })
        }
        None => None,
    };
    let text = |value: Value| value.as_str().unwrap_or_default().to_owned();
    Ok(Invoice {
        number: number(&order.id),
        seller: text(config_value(&conn, "store.name")?),
        currency: text(config_value(&conn, "store.currency")?),
        bill_to,
        balance_due_cents: if status == InvoiceStatus::Open {
            (order.total_cents - paid_cents).max(0)
        } else {
            0
        },
        paid_cents,
        status,
        subtotal_cents: order.subtotal_cents,
        discount_cents: order.discount_cents,
        shipping_cents: order.shipping_cents,
        tax_cents: order.tax_cents,
        total_cents: order.total_cents,
        issued_at: order.created_at,
        lines: order.items,
        order_id: order.id,
    })
}

/// One invoice in a list.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceSummary {
    /// Invoice number, like INV-1001.
    pub number: String,
    /// The order billed.
    pub order_id: String,
    /// The customer.
    pub user_id: Option<i64>,
    /// Amount billed, in cents.
    pub total_cents: i64,
    /// Captured minus refunded, in cents.
    pub paid_cents: i64,
    /// Still to pay, in cents.
    pub balance_due_cents: i64,
    /// The invoice's state.
    pub status: InvoiceStatus,
    /// When it was issued (ISO 8601).
    pub issued_at: String,
}

/// Input of `invoice-list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListInvoices {
    /// Only this customer's invoices.
    pub user_id: Option<i64>,
    /// Only invoices in this state, like open for unpaid ones.
    pub status: Option<InvoiceStatus>,
    /// Pagination.
    #[serde(flatten)]
    pub page: PageQuery,
}

/// List invoices by customer or state, newest first. Status open finds unpaid ones.
#[command(
    title = "List invoices",
    scopes("shop:read"),
    contexts("billing", "audit"),
    tags("billing", "read")
)]
pub fn invoice_list(
    input: ListInvoices,
    ctx: &CommandContext,
) -> Result<Page<InvoiceSummary>, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let inner = format!(
        "SELECT id, user_id, total_cents, paid, {STATUS_SQL} AS invoice_status, created_at
         FROM (SELECT o.*, {PAID_SQL} AS paid FROM orders o) o
         WHERE (?1 IS NULL OR user_id = ?1)"
    );
    let filtered = format!("SELECT * FROM ({inner}) WHERE (?2 IS NULL OR invoice_status = ?2)");
    let total = scalar(
        &conn,
        &format!("SELECT count(*) FROM ({filtered})"),
        params![input.user_id, input.status],
    )?;
    let invoices = all(
        &conn,
        &format!("{filtered} ORDER BY created_at DESC, id DESC LIMIT ?3 OFFSET ?4"),
        params![
            input.user_id,
            input.status,
            input.page.limit,
            input.page.offset
        ],
        |row| {
            let order_id: String = row.get(0)?;
            let total_cents: i64 = row.get(2)?;
            let paid_cents: i64 = row.get(3)?;
            let status: InvoiceStatus = row.get(4)?;
            Ok(InvoiceSummary {
                number: number(&order_id),
                order_id,
                user_id: row.get(1)?,
                total_cents,
                paid_cents,
                balance_due_cents: if status == InvoiceStatus::Open {
                    (total_cents - paid_cents).max(0)
                } else {
                    0
                },
                status,
                issued_at: row.get(5)?,
            })
        },
    )?;
    Ok(Page::new(invoices, total, input.page))
}
