//! Orders: placing them, listing them, and calling off pending ones.
//!
//! An order reserves its stock while pending or paid; shipping takes the stock out (see
//! `shipping`), payments move it from pending to paid (see `payment`).

use afd_runtime::prelude::*;
use rusqlite::{Connection, Row, params};

use super::store::{
    Db, ShopStore, all, config_f64, config_i64, invalid_state, next_id, not_found, now, one, scalar,
};
use super::{DateRange, Page, PageQuery, SortOrder, coupon, percent_of, string_enum, user};

string_enum! {
    /// Where an order is in its life: `pending` (placed, not paid), `paid`, `shipped`,
    /// `delivered`, `cancelled` or `refunded`.
    pub enum OrderStatus {
        Pending => "pending",
        Paid => "paid",
        Shipped => "shipped",
        Delivered => "delivered",
        Cancelled => "cancelled",
        Refunded => "refunded",
    }
}

/// One line of an order.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderItem {
    /// The product's id.
    pub product_id: i64,
    /// The product's SKU.
    pub sku: String,
    /// The product's name.
    pub name: String,
    /// Units ordered.
    pub quantity: i64,
    /// Price of one unit when the order was placed, in cents.
    pub unit_price_cents: i64,
    /// quantity x unitPriceCents.
    pub line_total_cents: i64,
}

/// An order.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Order {
    /// Unique identifier, like ord-1001.
    pub id: String,
    /// The customer (absent once their account was deleted).
    pub user_id: Option<i64>,
    /// Where the order is in its life.
    pub status: OrderStatus,
    /// The lines.
    pub items: Vec<OrderItem>,
    /// Sum of the lines, in cents.
    pub subtotal_cents: i64,
    /// Coupon discount, in cents.
    pub discount_cents: i64,
    /// Shipping charged, in cents.
    pub shipping_cents: i64,
    /// Sales tax, in cents.
    pub tax_cents: i64,
    /// What the customer pays, in cents.
    pub total_cents: i64,
    /// The coupon applied, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coupon_code: Option<String>,
    /// The customer's note.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// When it was placed (ISO 8601).
    pub created_at: String,
    /// When it last changed (ISO 8601).
    pub updated_at: String,
}

const ORDER_COLUMNS: &str = "id, user_id, status, subtotal_cents, discount_cents, shipping_cents,
    tax_cents, total_cents, coupon_code, note, created_at, updated_at";

fn order_from_row(row: &Row<'_>) -> rusqlite::Result<Order> {
    Ok(Order {
        id: row.get("id")?,
        user_id: row.get("user_id")?,
        status: row.get("status")?,
        items: Vec::new(),
        subtotal_cents: row.get("subtotal_cents")?,
        discount_cents: row.get("discount_cents")?,
        shipping_cents: row.get("shipping_cents")?,
        tax_cents: row.get("tax_cents")?,
        total_cents: row.get("total_cents")?,
        coupon_code: row.get("coupon_code")?,
        note: row.get("note")?,
        created_at: row.get("created_at")?,
        updated_at: row.get("updated_at")?,
    })
}

fn with_items(conn: &Connection, mut order: Order) -> Result<Order, CommandError> {
    order.items = all(
        conn,
        "SELECT i.product_id, p.sku, p.name, i.quantity, i.unit_price_cents
         FROM order_items i JOIN products p ON p.id = i.product_id
         WHERE i.order_id = ?1 ORDER BY i.rowid",
        [&order.id],
        |row| {
            let quantity: i64 = row.get(3)?;
            let unit_price_cents: i64 = row.get(4)?;
            Ok(OrderItem {
                product_id: row.get(0)?,
                sku: row.get(1)?,
                name: row.get(2)?,
                quantity,
                unit_price_cents,
                line_total_cents: quantity * unit_price_cents,
            })
        },
    )?;
    Ok(order)
}

/// The order with this id and its lines, or `NOT_FOUND`.
pub(crate) fn require_order(conn: &Connection, id: &str) -> Result<Order, CommandError> {
    let order = one(
        conn,
        &format!("SELECT {ORDER_COLUMNS} FROM orders WHERE id = ?1"),
        [id],
        order_from_row,
    )?
    .ok_or_else(|| not_found("Order", id, "order-list"))?;
    with_items(conn, order)
}

/// Sets an order's status.
pub(crate) fn set_order_status(
    conn: &Connection,
    id: &str,
    status: OrderStatus,
) -> Result<(), CommandError> {
    let at = now(conn)?;
    conn.execute(
        "UPDATE orders SET status = ?2, updated_at = ?3 WHERE id = ?1",
        params![id, status, at],
    )
    .db()?;
    Ok(())
}

/// Moves stock of every line of an order: `on_hand += on_hand_sign * qty` and
/// `reserved += reserved_sign * qty`, recording a movement when on-hand stock changes.
pub(crate) fn move_order_stock(
    conn: &Connection,
    order: &Order,
    on_hand_sign: i64,
    reserved_sign: i64,
    reason: &str,
) -> Result<i64, CommandError> {
    let at = now(conn)?;
    let mut units = 0;
    for item in &order.items {
        conn.execute(
            "UPDATE inventory SET on_hand = on_hand + ?2, reserved = max(reserved + ?3, 0),
             updated_at = ?4 WHERE product_id = ?1",
            params![
                item.product_id,
                on_hand_sign * item.quantity,
                reserved_sign * item.quantity,
                at
            ],
        )
        .db()?;
        if on_hand_sign != 0 {
            conn.execute(
                "INSERT INTO stock_movements (product_id, delta, reason, reference, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    item.product_id,
                    on_hand_sign * item.quantity,
                    reason,
                    order.id,
                    at
                ],
            )
            .db()?;
        }
        units += item.quantity;
    }
    Ok(units)
}

/// Shipping and tax for a discounted subtotal: (shipping, tax).
pub(crate) fn shipping_and_tax(
    conn: &Connection,
    discounted: i64,
) -> Result<(i64, i64), CommandError> {
    let free_from = config_i64(conn, "shipping.free_threshold_cents")?;
    let shipping = if discounted >= free_from {
        0
    } else {
        config_i64(conn, "shipping.flat_rate_cents")?
    };
    let tax = percent_of(discounted, config_f64(conn, "tax.rate_percent")?);
    Ok((shipping, tax))
}

/// One line to order.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LineInput {
    /// The product's id.
    #[schemars(range(min = 1))]
    pub product_id: i64,
    /// Units to order.
    #[schemars(range(min = 1, max = 1000))]
    pub quantity: i64,
}

/// Places an order for `user_id`: checks the user, products, stock and coupon, prices the
/// order, reserves the stock and redeems the coupon.
pub(crate) fn place_order(
    conn: &Connection,
    user_id: i64,
    lines: &[LineInput],
    coupon_code: Option<&str>,
    note: Option<&str>,
) -> Result<Order, CommandError> {
    user::require_active_user(conn, user_id)?;
    // Merge repeated products into one line.
    let mut merged: Vec<LineInput> = Vec::new();
    for line in lines {
        match merged.iter_mut().find(|m| m.product_id == line.product_id) {
            Some(existing) => existing.quantity += line.quantity,
            None => merged.push(line.clone()),
        }
    }
    if merged.is_empty() {
        return Err(
            CommandError::new("EMPTY_ORDER", "An order needs at least one item").with_suggestion(
                "Pass items: [{productId, quantity}]; product-list shows what is for sale.",
            ),
        );
    }
    let max_per_item = config_i64(conn, "orders.max_quantity_per_item")?;
    let mut priced = Vec::new();
    let mut subtotal = 0;
    for line in &merged {
        if line.quantity > max_per_item {
            return Err(CommandError::new(
                "QUANTITY_LIMIT",
                format!(
                    "{} units of product {} exceed the limit of {max_per_item} per order",
                    line.quantity, line.product_id
                ),
            )
            .with_suggestion(format!(
                "Order at most {max_per_item} units, or raise orders.max_quantity_per_item with config-set."
            )));
        }
        let (name, price, active, available): (String, i64, bool, i64) = one(
            conn,
            "SELECT p.name, p.price_cents, p.active, coalesce(i.on_hand - i.reserved, 0)
             FROM products p LEFT JOIN inventory i ON i.product_id = p.id WHERE p.id = ?1",
            [line.product_id],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
        )?
        .ok_or_else(|| not_found("Product", line.product_id, "product-list"))?;
        if !active {
            return Err(invalid_state(
                format!(
                    "Product {} ({name}) is archived and not for sale",
                    line.product_id
                ),
                "Remove it from the order; product-list with active: true shows what is for sale.",
            ));
        }
        if available < line.quantity {
            return Err(CommandError::new(
                "INSUFFICIENT_STOCK",
                format!(
                    "Only {available} units of product {} ({name}) are available, {} requested",
                    line.product_id, line.quantity
                ),
            )
            .with_suggestion(format!(
                "Order at most {available} units, or restock first with inventory-restock."
            ))
            .with_details(json!({"productId": line.product_id, "available": available})));
        }
        subtotal += price * line.quantity;
        priced.push((line.product_id, line.quantity, price));
    }
    let (coupon, discount) = match coupon_code {
        Some(code) => {
            let (code, discount) = coupon::redeem(conn, code, subtotal)?;
            (Some(code), discount)
        }
        None => (None, 0),
    };
    let discounted = subtotal - discount;
    let (shipping, tax) = shipping_and_tax(conn, discounted)?;
    let total = discounted + shipping + tax;
    let id = next_id(conn, "orders", "ord-", 1001)?;
    let at = now(conn)?;
    conn.execute(
        "INSERT INTO orders (id, user_id, status, subtotal_cents, discount_cents, shipping_cents,
             tax_cents, total_cents, coupon_code, note, created_at, updated_at)
         VALUES (?1, ?2, 'pending', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)",
        params![
            id, user_id, subtotal, discount, shipping, tax, total, coupon, note, at
        ],
    )
    .db()?;
    for (product_id, quantity, price) in priced {
        conn.execute(
            "INSERT INTO order_items (order_id, product_id, quantity, unit_price_cents)
             VALUES (?1, ?2, ?3, ?4)",
            params![id, product_id, quantity, price],
        )
        .db()?;
        conn.execute(
            "UPDATE inventory SET reserved = reserved + ?2, updated_at = ?3 WHERE product_id = ?1",
            params![product_id, quantity, at],
        )
        .db()?;
    }
    require_order(conn, &id)
}

/// Input of `order-create`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateOrder {
    /// The customer's user id.
    #[schemars(range(min = 1))]
    pub user_id: i64,
    /// The lines to order.
    #[schemars(length(min = 1, max = 50))]
    pub items: Vec<LineInput>,
    /// A coupon code to apply.
    #[schemars(length(min = 1, max = 20))]
    pub coupon_code: Option<String>,
    /// A note from the customer.
    #[schemars(length(max = 500))]
    pub note: Option<String>,
}

/// Create a new order. The stock is reserved and the order waits for payment.
#[command(
    blocking,
    title = "Create order",
    scopes("shop:write"),
    contexts("fulfilment"),
    tags("crud", "mutation"),
    mutation,
    errors(
        "NOT_FOUND",
        "INVALID_STATE",
        "INSUFFICIENT_STOCK",
        "QUANTITY_LIMIT",
        "COUPON_INVALID",
        "EMPTY_ORDER"
    )
)]
pub fn order_create(input: CreateOrder, ctx: &CommandContext) -> CommandResult<Order> {
    let placed = ctx.state::<ShopStore>().and_then(|store| {
        store.transaction(|conn| {
            place_order(
                conn,
                input.user_id,
                &input.items,
                input.coupon_code.as_deref(),
                input.note.as_deref(),
            )
        })
    });
    match placed {
        Ok(order) => {
            let reasoning = format!(
                "Placed order {} for user {}: {} line(s), total {} cents, awaiting payment",
                order.id,
                input.user_id,
                order.items.len(),
                order.total_cents
            );
            CommandResult::success(order).with_reasoning(reasoning)
        }
        Err(error) => CommandResult::failure(error),
    }
}

/// Input of `order-list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListOrders {
    /// Only this customer's orders.
    pub user_id: Option<i64>,
    /// Only orders in this status.
    pub status: Option<OrderStatus>,
    /// Only orders of at least this total, in cents.
    #[schemars(range(min = 0))]
    pub min_total_cents: Option<i64>,
    /// Days the order was placed on.
    #[serde(flatten)]
    pub placed: DateRange,
    /// By placement time: desc (newest first, the default) or asc.
    pub sort_order: Option<SortOrder>,
    /// Pagination.
    #[serde(flatten)]
    pub page: PageQuery,
}

/// List orders with filters. Filter by customer, status, minimum total and days placed;
/// newest first, paginated.
#[command(
    title = "List orders",
    scopes("shop:read"),
    contexts("fulfilment", "audit"),
    tags("crud", "read")
)]
pub fn order_list(input: ListOrders, ctx: &CommandContext) -> Result<Page<Order>, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let filter = "(?1 IS NULL OR user_id = ?1) AND (?2 IS NULL OR status = ?2)
        AND (?3 IS NULL OR total_cents >= ?3)
        AND (?4 IS NULL OR substr(created_at, 1, 10) >= ?4)
        AND (?5 IS NULL OR substr(created_at, 1, 10) <= ?5)";
    let total = scalar(
        &conn,
        &format!("SELECT count(*) FROM orders WHERE {filter}"),
        params![
            input.user_id,
            input.status,
            input.min_total_cents,
            input.placed.from,
            input.placed.to
        ],
    )?;
    let direction = input.sort_order.unwrap_or(SortOrder::Desc).sql();
    let orders = all(
        &conn,
        &format!(
            "SELECT {ORDER_COLUMNS} FROM orders WHERE {filter}
             ORDER BY created_at {direction}, id {direction} LIMIT ?6 OFFSET ?7"
        ),
        params![
            input.user_id,
            input.status,
            input.min_total_cents,
            input.placed.from,
            input.placed.to,
            input.page.limit,
            input.page.offset
        ],
        order_from_row,
    )?;
    let orders = orders
        .into_iter()
        .map(|order| with_items(&conn, order))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Page::new(orders, total, input.page))
}

/// Input naming one order.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderId {
    /// The order's id, like ord-1001.
    pub order_id: String,
}

/// Result of `order-cancel`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CancelledOrder {
    /// The order, now cancelled.
    pub order: Order,
    /// Reserved units put back on sale.
    pub released_units: i64,
    /// Payment authorizations released.
    pub voided_payments: Vec<String>,
}

/// Cancel a pending order. Its reserved stock goes back on sale, payment authorizations are
/// released and the coupon can be used again.
#[command(
    blocking,
    title = "Cancel order",
    scopes("shop:admin"),
    contexts("returns"),
    tags("crud", "mutation", "destructive"),
    mutation,
    destructive,
    confirm_prompt = "This will cancel order {orderId}. Continue?",
    errors("NOT_FOUND", "ORDER_NOT_PENDING")
)]
pub fn order_cancel(input: OrderId, ctx: &CommandContext) -> Result<CancelledOrder, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let order = require_order(conn, &input.order_id)?;
        if order.status != OrderStatus::Pending {
            let next = match order.status {
                OrderStatus::Paid => "It is paid: refund it with payment-refund instead.",
                OrderStatus::Shipped | OrderStatus::Delivered => {
                    "It has shipped: refund it with payment-refund (restock: true) once it is returned."
                }
                _ => "Nothing to do: the order is already closed.",
            };
            return Err(CommandError::new(
                "ORDER_NOT_PENDING",
                format!(
                    "Order {} is {}; only pending orders can be cancelled",
                    order.id,
                    order.status.as_str()
                ),
            )
            .with_suggestion(next)
            .with_details(json!({"orderId": order.id, "status": order.status}))
            .with_retryable(false));
        }
        let released_units = move_order_stock(conn, &order, 0, -1, "release")?;
        let voided_payments = all(
            conn,
            "UPDATE payments SET status = 'voided' WHERE order_id = ?1 AND status = 'authorized'
             RETURNING id",
            [&order.id],
            |row| row.get(0),
        )?;
        if let Some(code) = &order.coupon_code {
            conn.execute(
                "UPDATE coupons SET times_redeemed = max(times_redeemed - 1, 0) WHERE code = ?1",
                [code],
            )
            .db()?;
        }
        set_order_status(conn, &order.id, OrderStatus::Cancelled)?;
        Ok(CancelledOrder {
            order: require_order(conn, &order.id)?,
            released_units,
            voided_payments,
        })
    })
}
