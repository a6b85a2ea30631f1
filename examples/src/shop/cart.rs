//! Shopping carts: one per user, turned into an order at checkout.

use afd_runtime::prelude::*;
use rusqlite::{Connection, params};

use super::order::{LineInput, Order, place_order};
use super::store::{Db, ShopStore, all, config_i64, invalid_state, now, one};
use super::{product, user};

/// One line of a cart.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CartLine {
    /// The product's id.
    pub product_id: i64,
    /// The product's SKU.
    pub sku: String,
    /// The product's name.
    pub name: String,
    /// Units wanted.
    pub quantity: i64,
    /// Current price of one unit, in cents.
    pub unit_price_cents: i64,
    /// quantity x unitPriceCents.
    pub line_total_cents: i64,
    /// Whether enough units are available to order now.
    pub in_stock: bool,
    /// When it was added (ISO 8601).
    pub added_at: String,
}

/// A user's cart.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Cart {
    /// The owner.
    pub user_id: i64,
    /// The lines, in the order they were added.
    pub items: Vec<CartLine>,
    /// Units in all.
    pub item_count: i64,
    /// Sum of the lines at current prices, in cents (before coupon, shipping and tax).
    pub subtotal_cents: i64,
}

fn load_cart(conn: &Connection, user_id: i64) -> Result<Cart, CommandError> {
    let items = all(
        conn,
        "SELECT c.product_id, p.sku, p.name, c.quantity, p.price_cents,
            coalesce(i.on_hand - i.reserved, 0) >= c.quantity, c.added_at
         FROM cart_items c JOIN products p ON p.id = c.product_id
         LEFT JOIN inventory i ON i.product_id = c.product_id
         WHERE c.user_id = ?1 ORDER BY c.added_at, c.product_id",
        [user_id],
        |row| {
            let quantity: i64 = row.get(3)?;
            let unit_price_cents: i64 = row.get(4)?;
            Ok(CartLine {
                product_id: row.get(0)?,
                sku: row.get(1)?,
                name: row.get(2)?,
                quantity,
                unit_price_cents,
                line_total_cents: quantity * unit_price_cents,
                in_stock: row.get(5)?,
                added_at: row.get(6)?,
            })
        },
    )?;
    Ok(Cart {
        user_id,
        item_count: items.iter().map(|line| line.quantity).sum(),
        subtotal_cents: items.iter().map(|line| line.line_total_cents).sum(),
        items,
    })
}

fn in_cart(conn: &Connection, user_id: i64, product_id: i64) -> Result<i64, CommandError> {
    one(
        conn,
        "SELECT quantity FROM cart_items WHERE user_id = ?1 AND product_id = ?2",
        params![user_id, product_id],
        |row| row.get(0),
    )?
    .ok_or_else(|| {
        CommandError::new(
            "NOT_FOUND",
            format!("Product {product_id} is not in the cart of user {user_id}"),
        )
        .with_suggestion(format!(
            "Call cart-get with userId {user_id} to see the cart, or cart-add-item to add it."
        ))
        .with_retryable(false)
    })
}

fn check_quantity(conn: &Connection, quantity: i64) -> Result<(), CommandError> {
    let max = config_i64(conn, "orders.max_quantity_per_item")?;
    if quantity > max {
        return Err(CommandError::new(
            "QUANTITY_LIMIT",
            format!("{quantity} units exceed the limit of {max} per product"),
        )
        .with_suggestion(format!(
            "Keep at most {max} units of one product in the cart."
        )));
    }
    Ok(())
}

/// Input naming a user's cart.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CartRef {
    /// The owner's user id.
    #[schemars(range(min = 1))]
    pub user_id: i64,
}

/// Get a user's cart with line totals, stock and subtotal.
#[command(
    title = "Get cart",
    scopes("shop:read"),
    contexts("storefront"),
    tags("read"),
    errors("NOT_FOUND")
)]
pub fn cart_get(input: CartRef, ctx: &CommandContext) -> Result<Cart, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    user::require_user(&conn, input.user_id)?;
    load_cart(&conn, input.user_id)
}

fn default_quantity() -> i64 {
    1
}

/// Input of `cart-add-item`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddItem {
    /// The owner's user id.
    #[schemars(range(min = 1))]
    pub user_id: i64,
    /// The product to add.
    #[schemars(range(min = 1))]
    pub product_id: i64,
    /// Units to add (default 1); added to any already in the cart.
    #[serde(default = "default_quantity")]
    #[schemars(range(min = 1, max = 1000))]
    pub quantity: i64,
}

/// Add a product to a user's cart. Units add to any already there.
#[command(
    blocking,
    title = "Add item to cart",
    scopes("shop:write"),
    contexts("storefront"),
    tags("mutation"),
    mutation,
    errors("NOT_FOUND", "INVALID_STATE", "QUANTITY_LIMIT")
)]
pub fn cart_add_item(input: AddItem, ctx: &CommandContext) -> Result<Cart, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        user::require_active_user(conn, input.user_id)?;
        let product = product::require_product(conn, input.product_id)?;
        if !product.active {
            return Err(invalid_state(
                format!("Product {} ({}) is archived and not for sale", product.id, product.name),
                "Pick another product; product-list with active: true shows what is for sale.",
            ));
        }
        let current: i64 = one(
            conn,
            "SELECT quantity FROM cart_items WHERE user_id = ?1 AND product_id = ?2",
            params![input.user_id, input.product_id],
            |row| row.get(0),
        )?
        .unwrap_or(0);
        check_quantity(conn, current + input.quantity)?;
        let at = now(conn)?;
        conn.execute(
            "INSERT INTO cart_items (user_id, product_id, quantity, added_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (user_id, product_id) DO UPDATE SET quantity = quantity + excluded.quantity",
            params![input.user_id, input.product_id, input.quantity, at],
        )
        .db()?;
        load_cart(conn, input.user_id)
    })
}

/// Input of `cart-update-item`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateItem {
    /// The owner's user id.
    #[schemars(range(min = 1))]
    pub user_id: i64,
    /// The product in the cart.
    #[schemars(range(min = 1))]
    pub product_id: i64,
    /// The new number of units.
    #[schemars(range(min = 1, max = 1000))]
    pub quantity: i64,
}

/// Set how many units of a product a user's cart holds.
#[command(
    blocking,
    title = "Update cart item",
    scopes("shop:write"),
    contexts("storefront"),
    tags("mutation"),
    mutation,
    idempotent,
    errors("NOT_FOUND", "QUANTITY_LIMIT")
)]
pub fn cart_update_item(input: UpdateItem, ctx: &CommandContext) -> Result<Cart, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        user::require_user(conn, input.user_id)?;
        in_cart(conn, input.user_id, input.product_id)?;
        check_quantity(conn, input.quantity)?;
        conn.execute(
            "UPDATE cart_items SET quantity = ?3 WHERE user_id = ?1 AND product_id = ?2",
            params![input.user_id, input.product_id, input.quantity],
        )
        .db()?;
        load_cart(conn, input.user_id)
    })
}

/// Input naming a product in a user's cart.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemRef {
    /// The owner's user id.
    #[schemars(range(min = 1))]
    pub user_id: i64,
    /// The product in the cart.
    #[schemars(range(min = 1))]
    pub product_id: i64,
}

/// Take a product out of a user's cart.
#[command(
    blocking,
    title = "Remove cart item",
    scopes("shop:write"),
    contexts("storefront"),
    tags("mutation"),
    mutation,
    errors("NOT_FOUND")
)]
pub fn cart_remove_item(input: ItemRef, ctx: &CommandContext) -> Result<Cart, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        user::require_user(conn, input.user_id)?;
        in_cart(conn, input.user_id, input.product_id)?;
        conn.execute(
            "DELETE FROM cart_items WHERE user_id = ?1 AND product_id = ?2",
            params![input.user_id, input.product_id],
        )
        .db()?;
        load_cart(conn, input.user_id)
    })
}

/// Result of `cart-clear`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Emptied {
    /// The owner.
    pub user_id: i64,
    /// Lines removed.
    pub removed_lines: u64,
}

/// Empty a user's cart.
#[command(
    blocking,
    title = "Clear cart",
    scopes("shop:admin"),
    contexts("storefront"),
    tags("mutation", "destructive"),
    mutation,
    destructive,
    confirm_prompt = "This will empty the cart of user {userId}. Continue?",
    errors("NOT_FOUND")
)]
pub fn cart_clear(input: CartRef, ctx: &CommandContext) -> Result<Emptied, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        user::require_user(conn, input.user_id)?;
        let removed_lines = conn
            .execute("DELETE FROM cart_items WHERE user_id = ?1", [input.user_id])
            .db()? as u64;
        Ok(Emptied {
            user_id: input.user_id,
            removed_lines,
        })
    })
}

/// Input of `cart-checkout`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Checkout {
    /// The owner's user id.
    #[schemars(range(min = 1))]
    pub user_id: i64,
    /// A coupon code to apply.
    #[schemars(length(min = 1, max = 20))]
    pub coupon_code: Option<String>,
    /// A note from the customer.
    #[schemars(length(max = 500))]
    pub note: Option<String>,
}

/// Turn a user's cart into a pending order and empty the cart.
#[command(
    blocking,
    title = "Check out cart",
    scopes("shop:write"),
    contexts("storefront"),
    tags("mutation"),
    mutation,
    errors(
        "NOT_FOUND",
        "INVALID_STATE",
        "EMPTY_CART",
        "INSUFFICIENT_STOCK",
        "QUANTITY_LIMIT",
        "COUPON_INVALID"
    )
)]
pub fn cart_checkout(input: Checkout, ctx: &CommandContext) -> CommandResult<Order> {
    let placed = ctx.state::<ShopStore>().and_then(|store| {
        store.transaction(|conn| {
            user::require_user(conn, input.user_id)?;
            let cart = load_cart(conn, input.user_id)?;
            if cart.items.is_empty() {
                return Err(CommandError::new(
                    "EMPTY_CART",
                    format!("The cart of user {} is empty", input.user_id),
                )
                .with_suggestion("Add products with cart-add-item first.")
                .with_retryable(false));
            }
            let lines: Vec<LineInput> = cart
                .items
                .iter()
                .map(|line| LineInput {
                    product_id: line.product_id,
                    quantity: line.quantity,
                })
                .collect();
            let order = place_order(
                conn,
                input.user_id,
                &lines,
                input.coupon_code.as_deref(),
                input.note.as_deref(),
            )?;
            conn.execute("DELETE FROM cart_items WHERE user_id = ?1", [input.user_id])
                .db()?;
            Ok(order)
        })
    });
    match placed {
        Ok(order) => {
            let reasoning = format!(
                "Checked out the cart of user {} as order {} ({} cents), awaiting payment",
                input.user_id, order.id, order.total_cents
            );
            CommandResult::success(order).with_reasoning(reasoning)
        }
        Err(error) => CommandResult::failure(error),
    }
}
