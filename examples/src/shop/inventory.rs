//! Stock levels and their history.

use afd_runtime::prelude::*;
use rusqlite::{Connection, Row, params};

use super::store::{Db, ShopStore, all, not_found, now, one, scalar};
use super::{Page, PageQuery, string_enum};

/// The stock of one product.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StockLevel {
    /// The product's id.
    pub product_id: i64,
    /// The product's SKU.
    pub sku: String,
    /// The product's name.
    pub name: String,
    /// Units in the warehouse.
    pub on_hand: i64,
    /// Units held for pending and paid orders.
    pub reserved: i64,
    /// Units that can be sold: on hand minus reserved.
    pub available: i64,
    /// Restock when available stock falls to this level.
    pub reorder_level: i64,
    /// Whether available stock is at or below the reorder level.
    pub low_stock: bool,
    /// When the stock last changed (ISO 8601).
    pub updated_at: String,
}

const STOCK_SELECT: &str = "SELECT i.product_id, p.sku, p.name, i.on_hand, i.reserved,
    i.on_hand - i.reserved AS available, i.reorder_level,
    (i.on_hand - i.reserved <= i.reorder_level) AS low_stock, i.updated_at
    FROM inventory i JOIN products p ON p.id = i.product_id";

fn stock_from_row(row: &Row<'_>) -> rusqlite::Result<StockLevel> {
    Ok(StockLevel {
        product_id: row.get("product_id")?,
        sku: row.get("sku")?,
        name: row.get("name")?,
        on_hand: row.get("on_hand")?,
        reserved: row.get("reserved")?,
        available: row.get("available")?,
        reorder_level: row.get("reorder_level")?,
        low_stock: row.get("low_stock")?,
        updated_at: row.get("updated_at")?,
    })
}

fn require_stock(conn: &Connection, product_id: i64) -> Result<StockLevel, CommandError> {
    one(
        conn,
        &format!("{STOCK_SELECT} WHERE i.product_id = ?1"),
        [product_id],
        stock_from_row,
    )?
    .ok_or_else(|| not_found("Product", product_id, "inventory-list"))
}

fn record(
    conn: &Connection,
    product_id: i64,
    delta: i64,
    reason: &str,
    reference: Option<&str>,
) -> Result<(), CommandError> {
    let at = now(conn)?;
    conn.execute(
        "UPDATE inventory SET on_hand = on_hand + ?2, updated_at = ?3 WHERE product_id = ?1",
        params![product_id, delta, at],
    )
    .db()?;
    conn.execute(
        "INSERT INTO stock_movements (product_id, delta, reason, reference, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![product_id, delta, reason, reference, at],
    )
    .db()?;
    Ok(())
}

/// Input naming one product's stock.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProductRef {
    /// The product's id.
    #[schemars(range(min = 1))]
    pub product_id: i64,
}

/// Get the stock of one product: on hand, reserved, available.
#[command(
    title = "Get stock",
    scopes("shop:read"),
    contexts("fulfilment", "audit"),
    tags("inventory", "read"),
    errors("NOT_FOUND")
)]
pub fn inventory_get(input: ProductRef, ctx: &CommandContext) -> Result<StockLevel, CommandError> {
    require_stock(&ctx.state::<ShopStore>()?.read(), input.product_id)
}

/// Input of `inventory-list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListStock {
    /// Only products at or below their reorder level.
    #[serde(default)]
    pub low_stock_only: bool,
    /// Only products of this catalog category.
    pub category: Option<String>,
    /// Pagination.
    #[serde(flatten)]
    pub page: PageQuery,
}

/// List stock levels, the scarcest first. Optionally only products that need restocking.
#[command(
    title = "List stock",
    scopes("shop:read"),
    contexts("fulfilment", "audit"),
    tags("inventory", "read")
)]
pub fn inventory_list(
    input: ListStock,
    ctx: &CommandContext,
) -> Result<Page<StockLevel>, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let filter = "(?1 = 0 OR i.on_hand - i.reserved <= i.reorder_level)
        AND (?2 IS NULL OR p.category = ?2)";
    let total = scalar(
        &conn,
        &format!(
            "SELECT count(*) FROM inventory i JOIN products p ON p.id = i.product_id WHERE {filter}"
        ),
        params![input.low_stock_only, input.category],
    )?;
    let levels = all(
        &conn,
        &format!(
            "{STOCK_SELECT} WHERE {filter}
             ORDER BY (i.on_hand - i.reserved) - i.reorder_level, i.product_id LIMIT ?3 OFFSET ?4"
        ),
        params![
            input.low_stock_only,
            input.category,
            input.page.limit,
            input.page.offset
        ],
        stock_from_row,
    )?;
    Ok(Page::new(levels, total, input.page))
}

string_enum! {
    /// Why stock changed by hand: `damaged`, `lost`, `found` or `count_correction`.
    pub enum AdjustReason {
        Damaged => "damaged",
        Lost => "lost",
        Found => "found",
        CountCorrection => "count_correction",
    }
}

/// Input of `inventory-adjust`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdjustStock {
    /// The product's id.
    #[schemars(range(min = 1))]
    pub product_id: i64,
    /// Units to add (positive) or take away (negative); not 0.
    #[schemars(range(min = -100000, max = 100000))]
    pub delta: i64,
    /// Why.
    pub reason: AdjustReason,
    /// A free-text reference, like a stock count id.
    #[schemars(length(max = 100))]
    pub reference: Option<String>,
}

/// Correct on-hand stock up or down, recording why. Reserved units cannot be taken away.
#[command(
    blocking,
    title = "Adjust stock",
    scopes("shop:write"),
    contexts("fulfilment"),
    tags("inventory", "mutation"),
    mutation,
    errors("NOT_FOUND", "INSUFFICIENT_STOCK", "VALIDATION_ERROR")
)]
pub fn inventory_adjust(
    input: AdjustStock,
    ctx: &CommandContext,
) -> Result<StockLevel, CommandError> {
    if input.delta == 0 {
        return Err(CommandError::validation("delta must not be 0"));
    }
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let stock = require_stock(conn, input.product_id)?;
        if stock.on_hand + input.delta < stock.reserved {
            let most = stock.on_hand - stock.reserved;
            return Err(CommandError::new(
                "INSUFFICIENT_STOCK",
                format!(
                    "Taking {} units would leave fewer than the {} reserved for orders",
                    -input.delta, stock.reserved
                ),
            )
            .with_suggestion(format!("Take away at most {most} units."))
            .with_details(json!({"available": most})));
        }
        record(
            conn,
            input.product_id,
            input.delta,
            input.reason.as_str(),
            input.reference.as_deref(),
        )?;
        require_stock(conn, input.product_id)
    })
}

/// Input of `inventory-restock`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Restock {
    /// The product's id.
    #[schemars(range(min = 1))]
    pub product_id: i64,
    /// Units received.
    #[schemars(range(min = 1, max = 100000))]
    pub quantity: i64,
    /// The purchase order or delivery note, like PO-7781.
    #[schemars(length(max = 100))]
    pub reference: Option<String>,
}

/// Add received units to a product's stock.
#[command(
    blocking,
    title = "Receive stock",
    scopes("shop:write"),
    contexts("fulfilment"),
    tags("inventory", "mutation"),
    mutation,
    errors("NOT_FOUND")
)]
pub fn inventory_restock(input: Restock, ctx: &CommandContext) -> Result<StockLevel, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        require_stock(conn, input.product_id)?;
        record(
            conn,
            input.product_id,
            input.quantity,
            "restock",
            input.reference.as_deref(),
        )?;
        require_stock(conn, input.product_id)
    })
}

/// Input of `inventory-set-reorder-level`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetReorderLevel {
    /// The product's id.
    #[schemars(range(min = 1))]
    pub product_id: i64,
    /// Restock when available stock falls to this level.
    #[schemars(range(min = 0, max = 100000))]
    pub reorder_level: i64,
}

/// Set a product's reorder level. At or below it, stock counts as low.
#[command(
    blocking,
    title = "Set reorder level",
    scopes("shop:write"),
    contexts("fulfilment"),
    tags("inventory", "mutation"),
    mutation,
    idempotent,
    errors("NOT_FOUND")
)]
pub fn inventory_set_reorder_level(
    input: SetReorderLevel,
    ctx: &CommandContext,
) -> Result<StockLevel, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        require_stock(conn, input.product_id)?;
        let at = now(conn)?;
        conn.execute(
            "UPDATE inventory SET reorder_level = ?2, updated_at = ?3 WHERE product_id = ?1",
            params![input.product_id, input.reorder_level, at],
        )
        .db()?;
        require_stock(conn, input.product_id)
    })
}

/// One change of on-hand stock.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StockMovement {
    /// Unique identifier.
    pub id: i64,
    /// The product's id.
    pub product_id: i64,
    /// Units added (positive) or taken (negative).
    pub delta: i64,
    /// Why: restock, shipment, return, damaged, lost, found, count_correction, label_void.
    pub reason: String,
    /// The order, purchase order or note it belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// When (ISO 8601).
    pub created_at: String,
}

/// Input of `inventory-movement-list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListMovements {
    /// Only this product's movements.
    pub product_id: Option<i64>,
    /// Only movements with this reason (restock, shipment, return, damaged, ...).
    pub reason: Option<String>,
    /// Pagination.
    #[serde(flatten)]
    pub page: PageQuery,
}

/// List stock movements: restocks, shipments, returns and corrections.
#[command(
    title = "List stock movements",
    scopes("shop:read"),
    contexts("fulfilment", "audit"),
    tags("inventory", "read")
)]
pub fn inventory_movement_list(
    input: ListMovements,
    ctx: &CommandContext,
) -> Result<Page<StockMovement>, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let filter = "(?1 IS NULL OR product_id = ?1) AND (?2 IS NULL OR reason = ?2)";
    let total = scalar(
        &conn,
        &format!("SELECT count(*) FROM stock_movements WHERE {filter}"),
        params![input.product_id, input.reason],
    )?;
    let movements = all(
        &conn,
        &format!(
            "SELECT id, product_id, delta, reason, reference, created_at FROM stock_movements
             WHERE {filter} ORDER BY created_at DESC, id DESC LIMIT ?3 OFFSET ?4"
        ),
        params![
            input.product_id,
            input.reason,
            input.page.limit,
            input.page.offset
        ],
        |row| {
            Ok(StockMovement {
                id: row.get(0)?,
                product_id: row.get(1)?,
                delta: row.get(2)?,
                reason: row.get(3)?,
                reference: row.get(4)?,
                created_at: row.get(5)?,
            })
        },
    )?;
    Ok(Page::new(movements, total, input.page))
}
