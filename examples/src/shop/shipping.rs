//! Shipping: rate quotes, labels, tracking.
//!
//! Creating a shipment takes the order's units out of stock and marks it shipped; voiding
//! an unused label puts them back.

use afd_runtime::prelude::*;
use rusqlite::{Connection, Row, params};

use super::order::{Order, OrderStatus, move_order_stock, require_order, set_order_status};
use super::store::{
    Db, ShopStore, all, config_i64, conflict, invalid_state, next_id, not_found, now, one, scalar,
};
use super::{Page, PageQuery, string_enum};

string_enum! {
    /// A carrier: `usps`, `ups`, `fedex` or `dhl`.
    pub enum Carrier { Usps => "usps", Ups => "ups", Fedex => "fedex", Dhl => "dhl" }
}

string_enum! {
    /// A delivery speed: `standard` or `express`.
    pub enum Service { Standard => "standard", Express => "express" }
}

string_enum! {
    /// Where a shipment is: `label_created`, `in_transit`, `delivered` or `voided`.
    pub enum ShipmentStatus {
        LabelCreated => "label_created",
        InTransit => "in_transit",
        Delivered => "delivered",
        Voided => "voided",
    }
}

/// The services each carrier offers: (carrier, service, cents per started kg, days).
const SERVICES: [(Carrier, Service, i64, i64); 5] = [
    (Carrier::Usps, Service::Standard, 0, 5),
    (Carrier::Ups, Service::Standard, 100, 4),
    (Carrier::Ups, Service::Express, 150, 2),
    (Carrier::Fedex, Service::Express, 150, 2),
    (Carrier::Dhl, Service::Express, 250, 1),
];

/// One way to ship an order.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RateOption {
    /// The carrier.
    pub carrier: Carrier,
    /// The delivery speed.
    pub service: Service,
    /// Label price, in cents.
    pub cost_cents: i64,
    /// Business days to deliver.
    pub estimated_days: i64,
}

fn order_weight(conn: &Connection, order_id: &str) -> Result<i64, CommandError> {
    scalar(
        conn,
        "SELECT coalesce(sum(i.quantity * p.weight_grams), 0)
         FROM order_items i JOIN products p ON p.id = i.product_id WHERE i.order_id = ?1",
        [order_id],
    )
}

/// Every rate for an order of `weight` grams.
fn rates(conn: &Connection, order: &Order, weight: i64) -> Result<Vec<RateOption>, CommandError> {
    let flat = config_i64(conn, "shipping.flat_rate_cents")?;
    let surcharge = config_i64(conn, "shipping.express_surcharge_cents")?;
    let free_from = config_i64(conn, "shipping.free_threshold_cents")?;
    let kilos = (weight + 999) / 1000;
    let free = order.subtotal_cents - order.discount_cents >= free_from;
    Ok(SERVICES
        .iter()
        .map(|&(carrier, service, per_kg, days)| {
            let base = match service {
                Service::Standard if free => 0,
                Service::Standard => flat,
                Service::Express => flat + surcharge,
            };
            RateOption {
                carrier,
                service,
                cost_cents: base + per_kg * kilos,
                estimated_days: days,
            }
        })
        .collect())
}

/// Input naming one order.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderRef {
    /// The order's id, like ord-1001.
    pub order_id: String,
}

/// Rates for an order.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Quote {
    /// The order quoted.
    pub order_id: String,
    /// Its shipping weight, in grams.
    pub weight_grams: i64,
    /// Every carrier and service, cheapest first.
    pub options: Vec<RateOption>,
}

/// Quote shipping rates for an order from every carrier. Rates follow the order's weight
/// and the shipping configuration.
#[command(
    title = "Quote shipping",
    scopes("shop:read"),
    contexts("fulfilment", "audit"),
    tags("shipping", "read"),
    errors("NOT_FOUND", "INVALID_STATE")
)]
pub fn shipping_quote(input: OrderRef, ctx: &CommandContext) -> Result<Quote, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let order = require_order(&conn, &input.order_id)?;
    if !matches!(order.status, OrderStatus::Pending | OrderStatus::Paid) {
        return Err(invalid_state(
            format!(
                "Order {} is {} and ships no more",
                order.id,
                order.status.as_str()
            ),
            "Quote pending or paid orders; shipment-list shows how this one shipped.",
        ));
    }
    let weight = order_weight(&conn, &order.id)?;
    let mut options = rates(&conn, &order, weight)?;
    options.sort_by_key(|option| (option.cost_cents, option.estimated_days));
    Ok(Quote {
        order_id: order.id,
        weight_grams: weight,
        options,
    })
}

/// A parcel on its way to a customer.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Shipment {
    /// Unique identifier, like shp-4001.
    pub id: String,
    /// The order shipped.
    pub order_id: String,
    /// The carrier.
    pub carrier: Carrier,
    /// The delivery speed.
    pub service: Service,
    /// The carrier's tracking number.
    pub tracking_number: String,
    /// Label price, in cents.
    pub cost_cents: i64,
    /// Where it is.
    pub status: ShipmentStatus,
    /// When the label was created (ISO 8601).
    pub created_at: String,
    /// When it was delivered (ISO 8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivered_at: Option<String>,
}

const SHIPMENT_COLUMNS: &str =
    "id, order_id, carrier, service, tracking_number, cost_cents, status, created_at, delivered_at";

fn shipment_from_row(row: &Row<'_>) -> rusqlite::Result<Shipment> {
    Ok(Shipment {
        id: row.get("id")?,
        order_id: row.get("order_id")?,
        carrier: row.get("carrier")?,
        service: row.get("service")?,
        tracking_number: row.get("tracking_number")?,
        cost_cents: row.get("cost_cents")?,
        status: row.get("status")?,
        created_at: row.get("created_at")?,
        delivered_at: row.get("delivered_at")?,
    })
}

fn require_shipment(conn: &Connection, id: &str) -> Result<Shipment, CommandError> {
    one(
        conn,
        &format!("SELECT {SHIPMENT_COLUMNS} FROM shipments WHERE id = ?1"),
        [id],
        shipment_from_row,
    )?
    .ok_or_else(|| not_found("Shipment", id, "shipment-list"))
}

/// Input of `shipment-create`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateShipment {
    /// The order to ship, like ord-1003; it must be paid.
    pub order_id: String,
    /// The carrier.
    pub carrier: Carrier,
    /// The delivery speed (default: standard).
    pub service: Option<Service>,
}

/// Buy a shipping label for a paid order. Its units leave stock and the order is shipped.
#[command(
    blocking,
    title = "Create shipment",
    scopes("shop:write"),
    contexts("fulfilment"),
    category = "shipping",
    tags("shipping", "mutation"),
    mutation,
    errors("NOT_FOUND", "INVALID_STATE", "CONFLICT", "UNSUPPORTED_SERVICE")
)]
pub fn shipment_create(
    input: CreateShipment,
    ctx: &CommandContext,
) -> Result<Shipment, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let order = require_order(conn, &input.order_id)?;
        if order.status != OrderStatus::Paid {
            let hint = match order.status {
                OrderStatus::Pending => {
                    "Take the payment first with payment-authorize and payment-capture."
                }
                _ => "Only paid orders ship; shipment-list shows existing shipments.",
            };
            return Err(invalid_state(
                format!("Order {} is {}, not paid", order.id, order.status.as_str()),
                hint,
            ));
        }
        let existing: Option<String> = one(
            conn,
            "SELECT id FROM shipments WHERE order_id = ?1 AND status != 'voided'",
            [&order.id],
            |row| row.get(0),
        )?;
        if let Some(existing) = existing {
            return Err(conflict(
                format!("Order {} already has shipment {existing}", order.id),
                format!("Call shipment-get with shipmentId '{existing}'."),
            ));
        }
        let service = input.service.unwrap_or(Service::Standard);
        let weight = order_weight(conn, &order.id)?;
        let rate = rates(conn, &order, weight)?
            .into_iter()
            .find(|rate| rate.carrier == input.carrier && rate.service == service)
            .ok_or_else(|| {
                CommandError::new(
                    "UNSUPPORTED_SERVICE",
                    format!(
                        "{} offers no {} service",
                        input.carrier.as_str(),
                        service.as_str()
                    ),
                )
                .with_suggestion(format!(
                    "Call shipping-quote with orderId '{}' to see every carrier and service.",
                    order.id
                ))
            })?;
        let id = next_id(conn, "shipments", "shp-", 4001)?;
        let tracking: String = scalar(
            conn,
            "SELECT upper(?1 || hex(randomblob(8)))",
            [input.carrier.as_str()],
        )?;
        let at = now(conn)?;
        conn.execute(
            "INSERT INTO shipments (id, order_id, carrier, service, tracking_number, cost_cents,
                 status, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'label_created', ?7)",
            params![
                id,
                order.id,
                input.carrier,
                service,
                tracking,
                rate.cost_cents,
                at
            ],
        )
        .db()?;
        move_order_stock(conn, &order, -1, -1, "shipment")?;
        set_order_status(conn, &order.id, OrderStatus::Shipped)?;
        require_shipment(conn, &id)
    })
}

/// Input naming one shipment.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShipmentId {
    /// The shipment's id, like shp-4001.
    pub shipment_id: String,
}

/// Get a shipment with its tracking number and status.
#[command(
    title = "Get shipment",
    scopes("shop:read"),
    contexts("fulfilment", "audit"),
    category = "shipping",
    tags("shipping", "read"),
    errors("NOT_FOUND")
)]
pub fn shipment_get(input: ShipmentId, ctx: &CommandContext) -> Result<Shipment, CommandError> {
    require_shipment(&ctx.state::<ShopStore>()?.read(), &input.shipment_id)
}

/// Input of `shipment-list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListShipments {
    /// Only shipments of this order.
    pub order_id: Option<String>,
    /// Only shipments in this status.
    pub status: Option<ShipmentStatus>,
    /// Only shipments with this carrier.
    pub carrier: Option<Carrier>,
    /// Pagination.
    #[serde(flatten)]
    pub page: PageQuery,
}

/// List shipments by order, status or carrier, newest first.
#[command(
    title = "List shipments",
    scopes("shop:read"),
    contexts("fulfilment", "audit"),
    category = "shipping",
    tags("shipping", "read")
)]
pub fn shipment_list(
    input: ListShipments,
    ctx: &CommandContext,
) -> Result<Page<Shipment>, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let filter = "(?1 IS NULL OR order_id = ?1) AND (?2 IS NULL OR status = ?2)
        AND (?3 IS NULL OR carrier = ?3)";
    let total = scalar(
        &conn,
        &format!("SELECT count(*) FROM shipments WHERE {filter}"),
        params![input.order_id, input.status, input.carrier],
    )?;
    let shipments = all(
        &conn,
        &format!(
            "SELECT {SHIPMENT_COLUMNS} FROM shipments WHERE {filter}
             ORDER BY created_at DESC, id DESC LIMIT ?4 OFFSET ?5"
        ),
        params![
            input.order_id,
            input.status,
            input.carrier,
            input.page.limit,
            input.page.offset
        ],
        shipment_from_row,
    )?;
    Ok(Page::new(shipments, total, input.page))
}

string_enum! {
    /// A tracking update: `in_transit` or `delivered`.
    pub enum TrackingUpdate { InTransit => "in_transit", Delivered => "delivered" }
}

/// Input of `shipment-update-status`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateShipmentStatus {
    /// The shipment's id, like shp-4001.
    pub shipment_id: String,
    /// The new status.
    pub status: TrackingUpdate,
}

/// Record a tracking update. On delivery the order becomes delivered.
#[command(
    blocking,
    title = "Update shipment status",
    scopes("shop:write"),
    contexts("fulfilment"),
    category = "shipping",
    tags("shipping", "mutation"),
    mutation,
    idempotent,
    errors("NOT_FOUND", "INVALID_STATE")
)]
pub fn shipment_update_status(
    input: UpdateShipmentStatus,
    ctx: &CommandContext,
) -> Result<Shipment, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let shipment = require_shipment(conn, &input.shipment_id)?;
        let allowed = match input.status {
            TrackingUpdate::InTransit => matches!(
                shipment.status,
                ShipmentStatus::LabelCreated | ShipmentStatus::InTransit
            ),
            TrackingUpdate::Delivered => shipment.status != ShipmentStatus::Voided,
        };
        if !allowed {
            return Err(invalid_state(
                format!(
                    "Shipment {} is {} and cannot become {}",
                    shipment.id,
                    shipment.status.as_str(),
                    input.status.as_str()
                ),
                "Shipments move label_created -> in_transit -> delivered; voided labels never move.",
            ));
        }
        match input.status {
            TrackingUpdate::InTransit => {
                conn.execute(
                    "UPDATE shipments SET status = 'in_transit' WHERE id = ?1",
                    [&shipment.id],
                )
                .db()?;
            }
            TrackingUpdate::Delivered => {
                if shipment.status != ShipmentStatus::Delivered {
                    let at = now(conn)?;
                    conn.execute(
                        "UPDATE shipments SET status = 'delivered', delivered_at = ?2 WHERE id = ?1",
                        params![shipment.id, at],
                    )
                    .db()?;
                    let order = require_order(conn, &shipment.order_id)?;
                    if order.status == OrderStatus::Shipped {
                        set_order_status(conn, &order.id, OrderStatus::Delivered)?;
                    }
                }
            }
        }
        require_shipment(conn, &shipment.id)
    })
}

/// Void an unused shipping label. The units go back to stock and the order back to paid.
#[command(
    blocking,
    title = "Void shipment",
    scopes("shop:admin"),
    contexts("returns"),
    category = "shipping",
    tags("shipping", "mutation", "destructive"),
    mutation,
    destructive,
    confirm_prompt = "This will void shipping label {shipmentId}; the carrier will not collect it. Continue?",
    errors("NOT_FOUND", "INVALID_STATE")
)]
pub fn shipment_void(input: ShipmentId, ctx: &CommandContext) -> Result<Shipment, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let shipment = require_shipment(conn, &input.shipment_id)?;
        if shipment.status != ShipmentStatus::LabelCreated {
            return Err(invalid_state(
                format!(
                    "Shipment {} is {}; only unused labels can be voided",
                    shipment.id,
                    shipment.status.as_str()
                ),
                "A parcel on its way is refunded with payment-refund once returned.",
            ));
        }
        conn.execute(
            "UPDATE shipments SET status = 'voided' WHERE id = ?1",
            [&shipment.id],
        )
        .db()?;
        let order = require_order(conn, &shipment.order_id)?;
        if order.status == OrderStatus::Shipped {
            move_order_stock(conn, &order, 1, 1, "label_void")?;
            set_order_status(conn, &order.id, OrderStatus::Paid)?;
        }
        require_shipment(conn, &shipment.id)
    })
}
