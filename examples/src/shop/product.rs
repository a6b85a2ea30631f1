//! The product catalog.

use afd_runtime::prelude::*;
use rusqlite::{Connection, Row, params};

use super::store::{
    Db, ShopStore, all, config_i64, conflict, invalid_state, no_changes, not_found, now, one,
    scalar,
};
use super::{Page, PageQuery, SortOrder, string_enum};

/// A product for sale.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Product {
    /// Unique identifier.
    pub id: i64,
    /// Stock keeping unit (unique).
    pub sku: String,
    /// Name shown to customers.
    pub name: String,
    /// Longer description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Catalog category: apparel, home, outdoor, ...
    pub category: String,
    /// Price of one unit, in cents.
    pub price_cents: i64,
    /// Shipping weight of one unit, in grams.
    pub weight_grams: i64,
    /// Whether it is for sale (archived products are not).
    pub active: bool,
    /// When it was created (ISO 8601).
    pub created_at: String,
    /// When it last changed (ISO 8601).
    pub updated_at: String,
}

const PRODUCT_COLUMNS: &str = "id, sku, name, description, category, price_cents, weight_grams,
    active, created_at, updated_at";

fn product_from_row(row: &Row<'_>) -> rusqlite::Result<Product> {
    Ok(Product {
        id: row.get("id")?,
        sku: row.get("sku")?,
        name: row.get("name")?,
        description: row.get("description")?,
        category: row.get("category")?,
        price_cents: row.get("price_cents")?,
        weight_grams: row.get("weight_grams")?,
        active: row.get("active")?,
        created_at: row.get("created_at")?,
        updated_at: row.get("updated_at")?,
    })
}

/// The product with this id, or `NOT_FOUND`.
pub(crate) fn require_product(conn: &Connection, id: i64) -> Result<Product, CommandError> {
    one(
        conn,
        &format!("SELECT {PRODUCT_COLUMNS} FROM products WHERE id = ?1"),
        [id],
        product_from_row,
    )?
    .ok_or_else(|| not_found("Product", id, "product-list"))
}

/// Input of `product-create`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateProduct {
    /// Stock keeping unit: capital letters, digits and dashes, unique.
    #[schemars(regex(pattern = r"^[A-Z0-9][A-Z0-9-]{2,19}$"))]
    pub sku: String,
    /// Name shown to customers.
    #[schemars(length(min = 1, max = 120))]
    pub name: String,
    /// Longer description.
    #[schemars(length(max = 2000))]
    pub description: Option<String>,
    /// Catalog category: apparel, home, outdoor, ...
    #[schemars(length(min = 1, max = 40))]
    pub category: String,
    /// Price of one unit, in cents.
    #[schemars(range(min = 0))]
    pub price_cents: i64,
    /// Shipping weight of one unit, in grams (default 0).
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub weight_grams: i64,
    /// Units in stock from the start (default 0).
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub initial_stock: i64,
}

/// Create a product, with its stock record.
#[command(
    blocking,
    title = "Create product",
    scopes("shop:write"),
    contexts("storefront"),
    tags("crud", "catalog", "mutation"),
    mutation,
    errors("CONFLICT")
)]
pub fn product_create(input: CreateProduct, ctx: &CommandContext) -> Result<Product, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let existing: Option<i64> = one(
            conn,
            "SELECT id FROM products WHERE sku = ?1",
            [&input.sku],
            |row| row.get(0),
        )?;
        if let Some(id) = existing {
            return Err(conflict(
                format!("SKU {} is already used by product {id}", input.sku),
                format!("Pick another SKU, or change product {id} with product-update."),
            ));
        }
        let at = now(conn)?;
        let id: i64 = scalar(
            conn,
            "INSERT INTO products (sku, name, description, category, price_cents, weight_grams,
                 created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7) RETURNING id",
            params![
                input.sku,
                input.name,
                input.description,
                input.category,
                input.price_cents,
                input.weight_grams,
                at
            ],
        )?;
        let reorder_level = config_i64(conn, "inventory.default_reorder_level")?;
        conn.execute(
            "INSERT INTO inventory (product_id, on_hand, reorder_level, updated_at)
             VALUES (?1, ?2, ?3, ?4)",
            params![id, input.initial_stock, reorder_level, at],
        )
        .db()?;
        if input.initial_stock > 0 {
            conn.execute(
                "INSERT INTO stock_movements (product_id, delta, reason, reference, created_at)
                 VALUES (?1, ?2, 'restock', 'initial stock', ?3)",
                params![id, input.initial_stock, at],
            )
            .db()?;
        }
        require_product(conn, id)
    })
}

/// Input naming one product.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ProductId {
    /// The product's id.
    #[schemars(range(min = 1))]
    pub id: i64,
}

/// A product with its stock and rating.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProductDetail {
    /// The product.
    #[serde(flatten)]
    pub product: Product,
    /// Units that can be sold now (on hand minus reserved).
    pub available: i64,
    /// Average approved review rating, 1 to 5.
    pub average_rating: Option<f64>,
    /// Approved reviews.
    pub review_count: i64,
}

/// Get a product with its available stock and review rating.
#[command(
    title = "Get product",
    scopes("shop:read"),
    tags("crud", "catalog", "read"),
    errors("NOT_FOUND"),
    eager
)]
pub fn product_get(input: ProductId, ctx: &CommandContext) -> Result<ProductDetail, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let product = require_product(&conn, input.id)?;
    let (available, average_rating, review_count) = conn
        .query_row(
            "SELECT
                (SELECT coalesce(on_hand - reserved, 0) FROM inventory WHERE product_id = ?1),
                (SELECT round(avg(rating), 2) FROM reviews WHERE product_id = ?1 AND status = 'approved'),
                (SELECT count(*) FROM reviews WHERE product_id = ?1 AND status = 'approved')",
            [input.id],
            |row| {
                Ok((
                    row.get::<_, Option<i64>>(0)?.unwrap_or(0),
                    row.get(1)?,
                    row.get(2)?,
                ))
            },
        )
        .db()?;
    Ok(ProductDetail {
        product,
        available,
        average_rating,
        review_count,
    })
}

string_enum! {
    /// Field to sort products by: `name`, `price` or `createdAt`.
    pub enum ProductSort { Name => "name", Price => "price", CreatedAt => "createdAt" }
}

/// Input of `product-list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListProducts {
    /// Only this catalog category.
    pub category: Option<String>,
    /// Only products for sale (true) or archived (false).
    pub active: Option<bool>,
    /// Lowest unit price, in cents.
    #[schemars(range(min = 0))]
    pub min_price_cents: Option<i64>,
    /// Highest unit price, in cents.
    #[schemars(range(min = 0))]
    pub max_price_cents: Option<i64>,
    /// Text to find in the name, SKU or description.
    pub search: Option<String>,
    /// Sort field (default: name).
    pub sort_by: Option<ProductSort>,
    /// Sort direction (default: asc).
    pub sort_order: Option<SortOrder>,
    /// Pagination.
    #[serde(flatten)]
    pub page: PageQuery,
}

/// List products with filters, sorting and pagination.
#[command(
    title = "List products",
    scopes("shop:read"),
    tags("crud", "catalog", "read"),
    eager
)]
pub fn product_list(
    input: ListProducts,
    ctx: &CommandContext,
) -> Result<Page<Product>, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let pattern = input
        .search
        .map(|text| format!("%{}%", text.to_lowercase()));
    let filter = "(?1 IS NULL OR category = ?1) AND (?2 IS NULL OR active = ?2)
        AND (?3 IS NULL OR price_cents >= ?3) AND (?4 IS NULL OR price_cents <= ?4)
        AND (?5 IS NULL OR lower(name) LIKE ?5 OR lower(sku) LIKE ?5
             OR lower(coalesce(description, '')) LIKE ?5)";
    let total = scalar(
        &conn,
        &format!("SELECT count(*) FROM products WHERE {filter}"),
        params![
            input.category,
            input.active,
            input.min_price_cents,
            input.max_price_cents,
            pattern
        ],
    )?;
    let order_by = match input.sort_by.unwrap_or(ProductSort::Name) {
        ProductSort::Name => "lower(name)",
        ProductSort::Price => "price_cents",
        ProductSort::CreatedAt => "created_at",
    };
    let direction = input.sort_order.unwrap_or(SortOrder::Asc).sql();
    let products = all(
        &conn,
        &format!(
            "SELECT {PRODUCT_COLUMNS} FROM products WHERE {filter}
             ORDER BY {order_by} {direction}, id LIMIT ?6 OFFSET ?7"
        ),
        params![
            input.category,
            input.active,
            input.min_price_cents,
            input.max_price_cents,
            pattern,
            input.page.limit,
            input.page.offset
        ],
        product_from_row,
    )?;
    Ok(Page::new(products, total, input.page))
}

/// Input of `product-update`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateProduct {
    /// The product's id.
    #[schemars(range(min = 1))]
    pub id: i64,
    /// New name.
    #[schemars(length(min = 1, max = 120))]
    pub name: Option<String>,
    /// New description.
    #[schemars(length(max = 2000))]
    pub description: Option<String>,
    /// New catalog category.
    #[schemars(length(min = 1, max = 40))]
    pub category: Option<String>,
    /// New shipping weight, in grams.
    #[schemars(range(min = 0))]
    pub weight_grams: Option<i64>,
}

/// Update a product's name, description, category or weight. Prices change with
/// product-set-price.
#[command(
    blocking,
    title = "Update product",
    scopes("shop:write"),
    contexts("storefront"),
    tags("crud", "catalog", "mutation"),
    mutation,
    idempotent,
    errors("NOT_FOUND", "NO_CHANGES")
)]
pub fn product_update(input: UpdateProduct, ctx: &CommandContext) -> Result<Product, CommandError> {
    if input.name.is_none()
        && input.description.is_none()
        && input.category.is_none()
        && input.weight_grams.is_none()
    {
        return Err(no_changes("name, description, category or weightGrams"));
    }
    ctx.state::<ShopStore>()?.transaction(|conn| {
        require_product(conn, input.id)?;
        let at = now(conn)?;
        conn.execute(
            "UPDATE products SET name = coalesce(?2, name),
                 description = coalesce(?3, description), category = coalesce(?4, category),
                 weight_grams = coalesce(?5, weight_grams), updated_at = ?6
             WHERE id = ?1",
            params![
                input.id,
                input.name,
                input.description,
                input.category,
                input.weight_grams,
                at
            ],
        )
        .db()?;
        require_product(conn, input.id)
    })
}

/// Input of `product-set-price`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetPrice {
    /// The product's id.
    #[schemars(range(min = 1))]
    pub id: i64,
    /// New price of one unit, in cents.
    #[schemars(range(min = 0))]
    pub price_cents: i64,
}

/// Result of `product-set-price`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PriceChanged {
    /// The product with its new price.
    pub product: Product,
    /// The price before, in cents.
    pub previous_price_cents: i64,
    /// The change in percent of the old price (absent when the old price was 0).
    pub change_percent: Option<f64>,
}

/// Set a product's price. Orders already placed keep their price.
#[command(
    blocking,
    title = "Set price",
    scopes("shop:write"),
    contexts("storefront"),
    tags("catalog", "billing", "mutation"),
    mutation,
    idempotent,
    errors("NOT_FOUND")
)]
pub fn product_set_price(
    input: SetPrice,
    ctx: &CommandContext,
) -> Result<PriceChanged, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let before = require_product(conn, input.id)?;
        let at = now(conn)?;
        conn.execute(
            "UPDATE products SET price_cents = ?2, updated_at = ?3 WHERE id = ?1",
            params![input.id, input.price_cents, at],
        )
        .db()?;
        let change_percent = (before.price_cents != 0).then(|| {
            let change =
                (input.price_cents - before.price_cents) as f64 * 100.0 / before.price_cents as f64;
            (change * 100.0).round() / 100.0
        });
        Ok(PriceChanged {
            product: require_product(conn, input.id)?,
            previous_price_cents: before.price_cents,
            change_percent,
        })
    })
}

/// Result of `product-archive`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Archived {
    /// The product, now archived.
    pub product: Product,
    /// Carts it was taken out of.
    pub removed_from_carts: u64,
}

/// Archive a product: it leaves sale and every cart. Undo with product-restore.
#[command(
    blocking,
    title = "Archive product",
    scopes("shop:write"),
    contexts("storefront"),
    tags("catalog", "mutation"),
    mutation,
    errors("NOT_FOUND", "INVALID_STATE")
)]
pub fn product_archive(input: ProductId, ctx: &CommandContext) -> Result<Archived, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let product = require_product(conn, input.id)?;
        if !product.active {
            return Err(invalid_state(
                format!("Product {} is already archived", input.id),
                "Nothing to do; product-restore puts it back on sale.",
            ));
        }
        let at = now(conn)?;
        conn.execute(
            "UPDATE products SET active = 0, updated_at = ?2 WHERE id = ?1",
            params![input.id, at],
        )
        .db()?;
        let removed_from_carts = conn
            .execute("DELETE FROM cart_items WHERE product_id = ?1", [input.id])
            .db()? as u64;
        Ok(Archived {
            product: require_product(conn, input.id)?,
            removed_from_carts,
        })
    })
}

/// Put an archived product back on sale.
#[command(
    blocking,
    title = "Restore product",
    scopes("shop:write"),
    contexts("storefront"),
    tags("catalog", "mutation"),
    mutation,
    errors("NOT_FOUND", "INVALID_STATE")
)]
pub fn product_restore(input: ProductId, ctx: &CommandContext) -> Result<Product, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let product = require_product(conn, input.id)?;
        if product.active {
            return Err(invalid_state(
                format!("Product {} is already for sale", input.id),
                "Nothing to do.",
            ));
        }
        let at = now(conn)?;
        conn.execute(
            "UPDATE products SET active = 1, updated_at = ?2 WHERE id = ?1",
            params![input.id, at],
        )
        .db()?;
        require_product(conn, input.id)
    })
}

/// Result of `product-delete`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ProductDeleted {
    /// Always true on success.
    pub deleted: bool,
    /// The deleted product's id.
    pub id: i64,
    /// Its SKU.
    pub sku: String,
}

/// Delete a product that was never ordered. Its stock, reviews and cart entries go with it.
#[command(
    blocking,
    title = "Delete product",
    scopes("shop:admin"),
    contexts("storefront"),
    tags("crud", "catalog", "mutation", "destructive"),
    mutation,
    destructive,
    confirm_prompt = "This will permanently delete product {id} with its stock history and reviews. Continue?",
    errors("NOT_FOUND", "CONFLICT")
)]
pub fn product_delete(
    input: ProductId,
    ctx: &CommandContext,
) -> Result<ProductDeleted, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let product = require_product(conn, input.id)?;
        let orders: i64 = scalar(
            conn,
            "SELECT count(DISTINCT order_id) FROM order_items WHERE product_id = ?1",
            [input.id],
        )?;
        if orders > 0 {
            return Err(conflict(
                format!(
                    "Product {} appears in {orders} order(s) and is kept for them",
                    input.id
                ),
                format!(
                    "Call product-archive with id {} to take it off sale instead.",
                    input.id
                ),
            ));
        }
        conn.execute("DELETE FROM products WHERE id = ?1", [input.id])
            .db()?;
        Ok(ProductDeleted {
            deleted: true,
            id: product.id,
            sku: product.sku,
        })
    })
}
