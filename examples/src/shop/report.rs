//! Reports computed with SQL aggregates over the live data.
//!
//! Revenue counts orders that were not called off (`cancelled` orders are left out).

use afd_runtime::prelude::*;
use afd_runtime::{Content, ResourceContents, codes};
use rusqlite::params;

use super::store::{Db, ShopStore, all};
use super::{DateRange, string_enum};

/// Orders that count toward revenue, placed in the range `?1`..`?2` (days, both optional).
const COUNTED: &str = "o.status != 'cancelled'
    AND (?1 IS NULL OR substr(o.created_at, 1, 10) >= ?1)
    AND (?2 IS NULL OR substr(o.created_at, 1, 10) <= ?2)";

/// Sales totals.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SalesSummary {
    /// Orders counted.
    pub orders: i64,
    /// Units sold.
    pub units: i64,
    /// Sum of subtotals, in cents.
    pub gross_cents: i64,
    /// Coupon discounts, in cents.
    pub discount_cents: i64,
    /// Shipping charged, in cents.
    pub shipping_cents: i64,
    /// Sales tax, in cents.
    pub tax_cents: i64,
    /// What customers were charged, in cents.
    pub total_cents: i64,
    /// Refunded on these orders, in cents.
    pub refunded_cents: i64,
    /// totalCents - refundedCents.
    pub net_cents: i64,
    /// Average order total, in cents.
    pub average_order_cents: i64,
}

/// Summarise sales in a date range. Orders, units, gross, discounts, tax, refunds and net.
#[command(
    blocking,
    title = "Sales summary",
    scopes("shop:read"),
    contexts("back-office", "audit"),
    tags("report", "billing", "read"),
    execution_time = "fast"
)]
pub fn report_sales_summary(
    input: DateRange,
    ctx: &CommandContext,
) -> Result<SalesSummary, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    conn.query_row(
        &format!(
            "SELECT count(*), coalesce(sum(o.subtotal_cents), 0), coalesce(sum(o.discount_cents), 0),
                coalesce(sum(o.shipping_cents), 0), coalesce(sum(o.tax_cents), 0),
                coalesce(sum(o.total_cents), 0), coalesce(round(avg(o.total_cents)), 0),
                (SELECT coalesce(sum(i.quantity), 0) FROM order_items i JOIN orders o ON o.id = i.order_id
                 WHERE {COUNTED}),
                (SELECT coalesce(sum(p.refunded_cents), 0) FROM payments p JOIN orders o ON o.id = p.order_id
                 WHERE {COUNTED})
             FROM orders o WHERE {COUNTED}"
        ),
        params![input.from, input.to],
        |row| {
            let total_cents: i64 = row.get(5)?;
            let refunded_cents: i64 = row.get(8)?;
            Ok(SalesSummary {
                orders: row.get(0)?,
                gross_cents: row.get(1)?,
                discount_cents: row.get(2)?,
                shipping_cents: row.get(3)?,
                tax_cents: row.get(4)?,
                total_cents,
                average_order_cents: row.get::<_, f64>(6)? as i64,
                units: row.get(7)?,
                refunded_cents,
                net_cents: total_cents - refunded_cents,
            })
        },
    )
    .db()
}

/// Revenue of one day.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DayRevenue {
    /// The day (YYYY-MM-DD).
    pub date: String,
    /// Orders placed.
    pub orders: i64,
    /// What customers were charged, in cents.
    pub total_cents: i64,
}

/// Revenue per day.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RevenueByDay {
    /// Days with orders, oldest first.
    pub days: Vec<DayRevenue>,
}

/// Revenue per day in a date range, oldest first.
#[command(
    blocking,
    title = "Revenue by day",
    scopes("shop:read"),
    contexts("back-office", "audit"),
    tags("report", "billing", "read"),
    execution_time = "fast"
)]
pub fn report_revenue_by_day(
    input: DateRange,
    ctx: &CommandContext,
) -> Result<RevenueByDay, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let days = all(
        &conn,
        &format!(
            "SELECT substr(o.created_at, 1, 10) AS day, count(*), sum(o.total_cents)
             FROM orders o WHERE {COUNTED} GROUP BY day ORDER BY day"
        ),
        params![input.from, input.to],
        |row| {
            Ok(DayRevenue {
                date: row.get(0)?,
                orders: row.get(1)?,
                total_cents: row.get(2)?,
            })
        },
    )?;
    Ok(RevenueByDay { days })
}

string_enum! {
    /// What to rank products by: `revenue` or `units`.
    pub enum RankBy { Revenue => "revenue", Units => "units" }
}

fn default_top() -> u32 {
    5
}

/// Input of `report-top-products`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopProducts {
    /// How many products, 1 to 50 (default 5).
    #[serde(default = "default_top")]
    #[schemars(range(min = 1, max = 50))]
    pub limit: u32,
    /// Rank by revenue (default) or units.
    pub rank_by: Option<RankBy>,
    /// Days the orders were placed on.
    #[serde(flatten)]
    pub placed: DateRange,
}

/// A product's sales.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProductSales {
    /// The product's id.
    pub product_id: i64,
    /// The product's name.
    pub name: String,
    /// Units sold.
    pub units: i64,
    /// Line revenue, in cents.
    pub revenue_cents: i64,
    /// Orders it was in.
    pub orders: i64,
}

/// Best-selling products.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TopProductList {
    /// The products, best first.
    pub products: Vec<ProductSales>,
}

/// Rank the best-selling products by revenue or units.
#[command(
    blocking,
    title = "Top products",
    scopes("shop:read"),
    contexts("back-office", "audit"),
    tags("report", "read"),
    execution_time = "fast"
)]
pub fn report_top_products(
    input: TopProducts,
    ctx: &CommandContext,
) -> Result<TopProductList, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let rank = match input.rank_by.unwrap_or(RankBy::Revenue) {
        RankBy::Revenue => "revenue DESC, units DESC",
        RankBy::Units => "units DESC, revenue DESC",
    };
    let products = all(
        &conn,
        &format!(
            "SELECT p.id, p.name, sum(i.quantity) AS units,
                sum(i.quantity * i.unit_price_cents) AS revenue, count(DISTINCT o.id)
             FROM order_items i JOIN orders o ON o.id = i.order_id JOIN products p ON p.id = i.product_id
             WHERE {COUNTED} GROUP BY p.id ORDER BY {rank}, p.id LIMIT ?3"
        ),
        params![input.placed.from, input.placed.to, input.limit],
        |row| {
            Ok(ProductSales {
                product_id: row.get(0)?,
                name: row.get(1)?,
                units: row.get(2)?,
                revenue_cents: row.get(3)?,
                orders: row.get(4)?,
            })
        },
    )?;
    Ok(TopProductList { products })
}

/// Input of `report-top-customers`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopCustomers {
    /// How many customers, 1 to 50 (default 5).
    #[serde(default = "default_top")]
    #[schemars(range(min = 1, max = 50))]
    pub limit: u32,
}

/// A customer's lifetime value.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerValue {
    /// The user's id.
    pub user_id: i64,
    /// The user's name.
    pub name: String,
    /// Orders counted.
    pub orders: i64,
    /// Charged minus refunded, in cents.
    pub lifetime_value_cents: i64,
    /// When they last ordered (ISO 8601).
    pub last_order_at: String,
}

/// The most valuable customers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TopCustomerList {
    /// The customers, most valuable first.
    pub customers: Vec<CustomerValue>,
}

/// Rank customers by lifetime value: charged minus refunded.
#[command(
    blocking,
    title = "Top customers",
    scopes("shop:read"),
    contexts("back-office", "audit"),
    tags("report", "billing", "read"),
    execution_time = "fast"
)]
pub fn report_top_customers(
    input: TopCustomers,
    ctx: &CommandContext,
) -> Result<TopCustomerList, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let customers = all(
        &conn,
        "SELECT u.id, u.name, count(*),
            sum(o.total_cents) - coalesce(sum((SELECT sum(p.refunded_cents) FROM payments p
                                               WHERE p.order_id = o.id)), 0) AS value,
            max(o.created_at)
         FROM orders o JOIN users u ON u.id = o.user_id
         WHERE o.status != 'cancelled'
         GROUP BY u.id ORDER BY value DESC, u.id LIMIT ?1",
        [input.limit],
        |row| {
            Ok(CustomerValue {
                user_id: row.get(0)?,
                name: row.get(1)?,
                orders: row.get(2)?,
                lifetime_value_cents: row.get(3)?,
                last_order_at: row.get(4)?,
            })
        },
    )?;
    Ok(TopCustomerList { customers })
}

/// Orders in one status.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusCount {
    /// The status.
    pub status: String,
    /// Orders in it.
    pub orders: i64,
    /// Their totals, in cents.
    pub total_cents: i64,
}

/// Orders by status.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OrderStatusReport {
    /// One row per status that has orders.
    pub statuses: Vec<StatusCount>,
    /// Every order.
    pub total: i64,
}

/// Count orders and their totals per status.
#[command(
    blocking,
    title = "Orders by status",
    scopes("shop:read"),
    contexts("back-office", "audit"),
    tags("report", "read"),
    execution_time = "fast"
)]
pub fn report_order_status(
    input: DateRange,
    ctx: &CommandContext,
) -> Result<OrderStatusReport, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let statuses = all(
        &conn,
        "SELECT status, count(*), sum(total_cents) FROM orders o
         WHERE (?1 IS NULL OR substr(o.created_at, 1, 10) >= ?1)
           AND (?2 IS NULL OR substr(o.created_at, 1, 10) <= ?2)
         GROUP BY status
         ORDER BY CASE status WHEN 'pending' THEN 0 WHEN 'paid' THEN 1 WHEN 'shipped' THEN 2
                  WHEN 'delivered' THEN 3 WHEN 'refunded' THEN 4 ELSE 5 END",
        params![input.from, input.to],
        |row| {
            Ok(StatusCount {
                status: row.get(0)?,
                orders: row.get(1)?,
                total_cents: row.get(2)?,
            })
        },
    )?;
    let total = statuses.iter().map(|status| status.orders).sum();
    Ok(OrderStatusReport { statuses, total })
}

/// Subscriptions on one plan.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanMetrics {
    /// The plan's id.
    pub plan_id: String,
    /// Active subscriptions.
    pub active: i64,
    /// Paused subscriptions.
    pub paused: i64,
    /// Monthly recurring revenue of the active ones, in cents.
    pub mrr_cents: i64,
}

/// Subscription metrics.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionMetrics {
    /// Active subscriptions.
    pub active: i64,
    /// Paused subscriptions.
    pub paused: i64,
    /// Ended subscriptions.
    pub ended: i64,
    /// Monthly recurring revenue, in cents (yearly plans count a twelfth).
    pub mrr_cents: i64,
    /// Ended / all, 0 to 1.
    pub churn_rate: f64,
    /// Per plan.
    pub plans: Vec<PlanMetrics>,
}

/// Report subscription metrics. Active, paused and ended counts, monthly recurring revenue and churn.
#[command(
    blocking,
    title = "Subscription metrics",
    scopes("shop:read"),
    contexts("back-office", "audit"),
    tags("report", "billing", "read"),
    execution_time = "fast"
)]
pub fn report_subscription_metrics(
    ctx: &CommandContext,
) -> Result<SubscriptionMetrics, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    const MRR: &str = "CASE WHEN s.status = 'active' THEN
        CASE p.interval WHEN 'year' THEN p.price_cents / 12.0 ELSE p.price_cents END ELSE 0 END";
    let plans = all(
        &conn,
        &format!(
            "SELECT p.id, count(s.id) FILTER (WHERE s.status = 'active'),
                count(s.id) FILTER (WHERE s.status = 'paused'), round(coalesce(sum({MRR}), 0))
             FROM plans p LEFT JOIN subscriptions s ON s.plan_id = p.id
             GROUP BY p.id ORDER BY p.price_cents, p.id"
        ),
        [],
        |row| {
            Ok(PlanMetrics {
                plan_id: row.get(0)?,
                active: row.get(1)?,
                paused: row.get(2)?,
                mrr_cents: row.get::<_, f64>(3)? as i64,
            })
        },
    )?;
    let (active, paused, ended): (i64, i64, i64) = conn
        .query_row(
            "SELECT count(*) FILTER (WHERE status = 'active'),
                count(*) FILTER (WHERE status = 'paused'),
                count(*) FILTER (WHERE status = 'cancelled') FROM subscriptions",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .db()?;
    let every = active + paused + ended;
    Ok(SubscriptionMetrics {
        active,
        paused,
        ended,
        mrr_cents: plans.iter().map(|plan| plan.mrr_cents).sum(),
        churn_rate: if every == 0 {
            0.0
        } else {
            ended as f64 / every as f64
        },
        plans,
    })
}

/// Stock value of one catalog category.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CategoryStock {
    /// The catalog category.
    pub category: String,
    /// Products in it.
    pub products: i64,
    /// Units on hand.
    pub units: i64,
    /// Units on hand x price, in cents.
    pub value_cents: i64,
}

/// Stock value.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InventoryValue {
    /// Units on hand in all.
    pub units: i64,
    /// Their value at current prices, in cents.
    pub value_cents: i64,
    /// Products at or below their reorder level.
    pub low_stock_products: i64,
    /// Products with nothing available.
    pub out_of_stock_products: i64,
    /// Per catalog category, most valuable first.
    pub categories: Vec<CategoryStock>,
}

/// Value the stock on hand at current prices, per catalog category.
#[command(
    blocking,
    title = "Inventory value",
    scopes("shop:read"),
    contexts("back-office", "audit"),
    tags("report", "inventory", "read"),
    execution_time = "fast"
)]
pub fn report_inventory_value(ctx: &CommandContext) -> Result<InventoryValue, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let categories = all(
        &conn,
        "SELECT p.category, count(*), sum(i.on_hand), sum(i.on_hand * p.price_cents) AS value
         FROM inventory i JOIN products p ON p.id = i.product_id
         GROUP BY p.category ORDER BY value DESC, p.category",
        [],
        |row| {
            Ok(CategoryStock {
                category: row.get(0)?,
                products: row.get(1)?,
                units: row.get(2)?,
                value_cents: row.get(3)?,
            })
        },
    )?;
    let (low_stock_products, out_of_stock_products): (i64, i64) = conn
        .query_row(
            "SELECT count(*) FILTER (WHERE on_hand - reserved <= reorder_level),
                count(*) FILTER (WHERE on_hand - reserved <= 0)
             FROM inventory i JOIN products p ON p.id = i.product_id WHERE p.active = 1",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .db()?;
    Ok(InventoryValue {
        units: categories.iter().map(|category| category.units).sum(),
        value_cents: categories.iter().map(|category| category.value_cents).sum(),
        low_stock_products,
        out_of_stock_products,
        categories,
    })
}

fn default_idle_days() -> u32 {
    7
}

/// Input of `report-abandoned-carts`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AbandonedCarts {
    /// Carts untouched for at least this many days (default 7).
    #[serde(default = "default_idle_days")]
    #[schemars(range(min = 0, max = 365))]
    pub idle_days: u32,
}

/// A cart left alone.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IdleCart {
    /// The owner.
    pub user_id: i64,
    /// The owner's name.
    pub name: String,
    /// The owner's email, for a reminder.
    pub email: String,
    /// Units in the cart.
    pub units: i64,
    /// Value at current prices, in cents.
    pub value_cents: i64,
    /// When something was last added (ISO 8601).
    pub last_added_at: String,
}

/// Carts left alone.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AbandonedCartList {
    /// The carts, most valuable first.
    pub carts: Vec<IdleCart>,
    /// Their value in all, in cents.
    pub value_cents: i64,
}

/// Find carts untouched for some days, with their value. Useful for reminder emails.
#[command(
    blocking,
    title = "Abandoned carts",
    scopes("shop:read"),
    contexts("back-office", "audit"),
    tags("report", "read"),
    execution_time = "fast"
)]
pub fn report_abandoned_carts(
    input: AbandonedCarts,
    ctx: &CommandContext,
) -> Result<AbandonedCartList, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let carts = all(
        &conn,
        "SELECT u.id, u.name, u.email, sum(c.quantity), sum(c.quantity * p.price_cents) AS value,
            max(c.added_at) AS last_added
         FROM cart_items c JOIN users u ON u.id = c.user_id JOIN products p ON p.id = c.product_id
         GROUP BY u.id
         HAVING julianday('now') - julianday(last_added) >= ?1
         ORDER BY value DESC, u.id",
        [input.idle_days],
        |row| {
            Ok(IdleCart {
                user_id: row.get(0)?,
                name: row.get(1)?,
                email: row.get(2)?,
                units: row.get(3)?,
                value_cents: row.get(4)?,
                last_added_at: row.get(5)?,
            })
        },
    )?;
    Ok(AbandonedCartList {
        value_cents: carts.iter().map(|cart| cart.value_cents).sum(),
        carts,
    })
}

/// Refunds against captured payments.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefundRate {
    /// Captured payments.
    pub payments: i64,
    /// Captured, in cents.
    pub captured_cents: i64,
    /// Refunds made.
    pub refunds: i64,
    /// Refunded, in cents.
    pub refunded_cents: i64,
    /// refundedCents / capturedCents, 0 to 1.
    pub rate: f64,
}

/// Compare refunds with captured payments in a date range. Counts, amounts and the rate.
#[command(
    blocking,
    title = "Refund rate",
    scopes("shop:read"),
    contexts("back-office", "audit"),
    tags("report", "billing", "read"),
    execution_time = "fast"
)]
pub fn report_refund_rate(
    input: DateRange,
    ctx: &CommandContext,
) -> Result<RefundRate, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    conn.query_row(
        "SELECT count(*), coalesce(sum(amount_cents), 0),
            (SELECT count(*) FROM refunds r JOIN payments p ON p.id = r.payment_id
             WHERE p.captured_at IS NOT NULL
               AND (?1 IS NULL OR substr(p.captured_at, 1, 10) >= ?1)
               AND (?2 IS NULL OR substr(p.captured_at, 1, 10) <= ?2)),
            coalesce(sum(refunded_cents), 0)
         FROM payments
         WHERE captured_at IS NOT NULL
           AND (?1 IS NULL OR substr(captured_at, 1, 10) >= ?1)
           AND (?2 IS NULL OR substr(captured_at, 1, 10) <= ?2)",
        params![input.from, input.to],
        |row| {
            let captured_cents: i64 = row.get(1)?;
            let refunded_cents: i64 = row.get(3)?;
            Ok(RefundRate {
                payments: row.get(0)?,
                captured_cents,
                refunds: row.get(2)?,
                refunded_cents,
                rate: if captured_cents == 0 {
                    0.0
                } else {
                    refunded_cents as f64 / captured_cents as f64
                },
            })
        },
    )
    .db()
}

/// What `report-orders-export` wrote.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrdersExport {
    /// Orders exported.
    pub orders: i64,
    /// Order lines (one CSV row each).
    pub lines: i64,
    /// The months walked, oldest first (YYYY-MM).
    pub months: Vec<String>,
    /// The URI of the CSV, embedded in the result.
    pub uri: String,
}

/// The CSV's header row.
const EXPORT_HEADER: &str =
    "order_id,placed_at,status,user_id,product_id,quantity,unit_price_cents,line_cents\n";

/// Export every order line placed in a date range as CSV, month by month. Long-running:
/// a client that takes tasks gets a task to poll; progress is reported per month.
#[command(
    title = "Export orders as CSV",
    scopes("shop:read"),
    contexts("back-office", "audit"),
    tags("report", "export", "read"),
    execution_time = "long-running"
)]
pub async fn report_orders_export(
    input: DateRange,
    ctx: &CommandContext,
) -> CommandResult<OrdersExport> {
    match export_orders(input, ctx).await {
        Ok((export, csv)) => {
            let csv = ResourceContents::text(export.uri.clone(), csv).with_mime_type("text/csv");
            CommandResult::success(export).with_content(Content::resource(csv))
        }
        Err(error) => CommandResult::failure(error),
    }
}

/// The export's summary and its CSV.
async fn export_orders(
    input: DateRange,
    ctx: &CommandContext,
) -> Result<(OrdersExport, String), CommandError> {
    let range = (input.from.clone(), input.to.clone());
    let months = on_store(ctx, move |conn| {
        all(
            conn,
            &format!(
                "SELECT DISTINCT substr(o.created_at, 1, 7) AS month FROM orders o
                 WHERE {COUNTED} ORDER BY month"
            ),
            params![range.0, range.1],
            |row| row.get::<_, String>(0),
        )
    })
    .await?;
    let mut csv = String::from(EXPORT_HEADER);
    let (mut orders, mut lines) = (0_i64, 0_i64);
    for (done, month) in months.iter().enumerate() {
        // Stopped between months when the caller gives up.
        if ctx.is_cancelled() {
            return Err(CommandError::new(
                codes::CANCELLED,
                format!("The export stopped after {done} of {} months", months.len()),
            ));
        }
        let (from, to, this) = (input.from.clone(), input.to.clone(), month.clone());
        let rows = on_store(ctx, move |conn| {
            all(
                conn,
                &format!(
                    "SELECT o.id, o.created_at, o.status, o.user_id, i.product_id, i.quantity,
                        i.unit_price_cents
                     FROM orders o JOIN order_items i ON i.order_id = o.id
                     WHERE {COUNTED} AND substr(o.created_at, 1, 7) = ?3
                     ORDER BY o.created_at, o.id, i.product_id"
                ),
                params![from, to, this],
                |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, String>(2)?,
                        row.get::<_, Option<i64>>(3)?,
                        row.get::<_, i64>(4)?,
                        row.get::<_, i64>(5)?,
                        row.get::<_, i64>(6)?,
                    ))
                },
            )
        })
        .await?;
        let mut last_order = None;
        for (order, placed, status, user, product, quantity, unit) in rows {
            if last_order.as_ref() != Some(&order) {
                orders += 1;
            }
            lines += 1;
            let user = user.map(|id| id.to_string()).unwrap_or_default();
            csv.push_str(&format!(
                "{order},{placed},{status},{user},{product},{quantity},{unit},{}\n",
                quantity * unit
            ));
            last_order = Some(order);
        }
        ctx.report_progress(
            (done + 1) as f64,
            Some(months.len() as f64),
            Some(format!("{month} exported")),
        )
        .await;
    }
    let uri = format!(
        "shop://exports/orders-{}-{}.csv",
        input.from.as_deref().unwrap_or("start"),
        input.to.as_deref().unwrap_or("now")
    );
    let export = OrdersExport {
        orders,
        lines,
        months,
        uri,
    };
    Ok((export, csv))
}

/// Runs `query` on the shop's store off the async workers.
async fn on_store<T: Send + 'static>(
    ctx: &CommandContext,
    query: impl FnOnce(&rusqlite::Connection) -> Result<T, CommandError> + Send + 'static,
) -> Result<T, CommandError> {
    let ctx = ctx.clone();
    tokio::task::spawn_blocking(move || query(&ctx.state::<ShopStore>()?.read()))
        .await
        .map_err(|error| CommandError::internal(format!("the store's query stopped: {error}")))?
}
