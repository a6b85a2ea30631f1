//! The fuzz targets' checks (`targets`), and what they share: a few commands with the input
//! shapes real apps declare (nested structs, enums of each serde representation, options,
//! vectors, maps, flattened paging, schema bounds), each echoing its decoded input, and a
//! runtime to call them on.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::LazyLock;

use afd_runtime::prelude::*;

pub mod targets;

/// The commands of this crate, by name (the seed corpora and the dictionary use them).
pub const COMMANDS: &[&str] = &[
    "order-create",
    "inventory-adjust",
    "product-search",
    "shipment-plan",
    "settings-update",
    "value-echo",
];

/// Runs `future` to completion on a runtime shared by every fuzz input.
pub fn block_on<F: Future>(future: F) -> F::Output {
    static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a current-thread runtime")
    });
    RUNTIME.block_on(future)
}

/// One order line.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LineInput {
    /// The product's id.
    #[schemars(range(min = 1))]
    pub product_id: i64,
    /// Units to order.
    #[schemars(range(min = 1, max = 1000))]
    pub quantity: i64,
}

/// Input of `order-create`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
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

/// Create an order.
#[command(mutation)]
fn order_create(input: CreateOrder) -> CreateOrder {
    input
}

/// Why stock changed by hand.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AdjustReason {
    /// Broken.
    Damaged,
    /// Missing.
    Lost,
    /// Found again.
    Found,
    /// A stock count disagreed.
    CountCorrection,
}

/// Input of `inventory-adjust`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdjustStock {
    /// The product's id.
    #[schemars(range(min = 1))]
    pub product_id: u32,
    /// Units to add or take away.
    #[schemars(range(min = -100000, max = 100000))]
    pub delta: i32,
    /// Why.
    pub reason: AdjustReason,
    /// A free-text reference.
    #[schemars(length(max = 100))]
    pub reference: Option<String>,
    /// Per-warehouse counts.
    #[serde(default)]
    pub counts: BTreeMap<String, u16>,
}

/// Adjust stock.
#[command(mutation, idempotent)]
fn inventory_adjust(input: AdjustStock) -> AdjustStock {
    input
}

/// Paging, flattened into list inputs.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct PageQuery {
    /// How many.
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: u8,
    /// From where.
    #[serde(default)]
    pub offset: u64,
}

fn default_limit() -> u8 {
    20
}

/// The sort key.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ProductSort {
    /// By name.
    Name,
    /// By price.
    Price,
    /// Newest first.
    CreatedAt,
}

/// A price filter: an exact price, or a range.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PriceFilter {
    /// Exactly this many cents.
    Exact(u64),
    /// Between.
    Range {
        /// At least.
        min: Option<f64>,
        /// At most.
        max: Option<f64>,
    },
}

/// Input of `product-search`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchProducts {
    /// Words to look for.
    pub query: Option<String>,
    /// Sort order.
    pub sort: Option<ProductSort>,
    /// Price filter.
    pub price: Option<PriceFilter>,
    /// Tags, all required.
    #[serde(default)]
    pub tags: Vec<Option<String>>,
    /// Paging.
    #[serde(flatten)]
    pub page: PageQuery,
}

/// Search products.
#[command]
fn product_search(input: SearchProducts) -> SearchProducts {
    input
}

/// Where a parcel goes.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Destination {
    /// A street address.
    Address {
        /// Lines.
        #[schemars(length(min = 1, max = 4))]
        lines: Vec<String>,
        /// The country code.
        #[schemars(length(min = 2, max = 2))]
        country: String,
    },
    /// A pickup point.
    Pickup {
        /// Its id.
        point_id: String,
    },
    /// Collected at the store.
    Store,
}

/// One parcel.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Parcel {
    /// Weight in grams.
    #[schemars(range(min = 1))]
    pub grams: u32,
    /// Size in centimetres.
    pub size: Option<(u16, u16, u16)>,
    /// Fragile.
    #[serde(default)]
    pub fragile: bool,
}

/// Input of `shipment-plan`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanShipment {
    /// Where.
    pub destination: Destination,
    /// What.
    pub parcels: Vec<Parcel>,
    /// Insurance by parcel index.
    pub insurance: Option<Vec<Option<f32>>>,
    /// A label character.
    pub mark: Option<char>,
}

/// Plan a shipment.
#[command]
fn shipment_plan(input: PlanShipment) -> PlanShipment {
    input
}

/// A setting's value.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SettingValue {
    /// On or off.
    Flag(bool),
    /// A number.
    Number(i64),
    /// Text.
    Text(String),
    /// Several values.
    List(Vec<SettingValue>),
    /// Nothing.
    Unset,
}

/// Input of `settings-update`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct UpdateSettings {
    /// The values by key.
    pub values: BTreeMap<String, SettingValue>,
    /// Free-form metadata.
    pub meta: Option<Value>,
    /// Whose settings.
    pub owner: Option<Box<UpdateSettings>>,
}

/// Update settings.
#[command(mutation)]
fn settings_update(input: UpdateSettings) -> UpdateSettings {
    input
}

/// Input of `value-echo`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Echo {
    /// Any JSON value.
    pub value: Value,
}

/// Return the value given: what pipelines refer to.
#[command]
fn value_echo(input: Echo) -> Value {
    input.value
}
