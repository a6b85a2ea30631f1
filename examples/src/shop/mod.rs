//! A realistic shop server's command library: users, orders, payments, products, inventory,
//! subscriptions, shipping, reviews, coupons, carts, configuration, reports and invoices,
//! as `#[command(scopes("shop:read"))]` functions over a SQLite store.
//!
//! The store reaches the handlers as context state: [`context`]`(ShopStore::in_memory()?)`.
//! Every shop command is in [`COMMANDS`] (and its name in [`COMMAND_NAMES`]), so a server can
//! expose exactly the shop (`Dispatcher::builder(..).expose_only(COMMAND_NAMES)`).
//!
//! The everyday lookups that need no context (product-list, product-get, plan-list) are
//! marked `eager`: the hybrid strategy lists them as their own tools beside the
//! meta-tools.

mod store;

pub mod cart;
pub mod config;
pub mod contexts;
pub mod coupon;
pub mod inventory;
pub mod invoice;
pub mod order;
pub mod payment;
pub mod product;
pub mod report;
pub mod review;
pub mod shipping;
pub mod subscription;
pub mod user;

use afd_runtime::prelude::*;

pub use store::ShopStore;

/// Declares a closed set of string values: a serde/schemars enum stored as text in SQLite.
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident { $($variant:ident => $text:literal),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
        pub enum $name {
            $(
                #[allow(missing_docs)]
                #[serde(rename = $text)]
                $variant,
            )+
        }

        impl $name {
            /// The value as stored and serialised.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl rusqlite::types::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(rusqlite::types::ToSqlOutput::from(self.as_str()))
            }
        }

        impl rusqlite::types::FromSql for $name {
            fn column_result(
                value: rusqlite::types::ValueRef<'_>,
            ) -> rusqlite::types::FromSqlResult<Self> {
                match value.as_str()? {
                    $($text => Ok($name::$variant),)+
                    other => Err(rusqlite::types::FromSqlError::Other(
                        format!("unknown {} '{other}'", stringify!($name)).into(),
                    )),
                }
            }
        }
    };
}
pub(crate) use string_enum;

fn default_limit() -> u32 {
    20
}

/// Pagination of a list command.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PageQuery {
    /// Page size, 1 to 100 (default 20).
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: u32,
    /// Items to skip (default 0).
    #[serde(default)]
    pub offset: u32,
}

impl Default for PageQuery {
    fn default() -> Self {
        PageQuery {
            limit: default_limit(),
            offset: 0,
        }
    }
}

/// One page of a list.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Page<T> {
    /// The items on this page.
    pub items: Vec<T>,
    /// How many items match the filters.
    pub total: u64,
    /// Whether more pages follow.
    pub has_more: bool,
    /// The offset of the next page, while there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u32>,
}

impl<T> Page<T> {
    fn new(items: Vec<T>, total: u64, query: PageQuery) -> Self {
        let end = u64::from(query.offset) + items.len() as u64;
        let has_more = end < total;
        Page {
            items,
            total,
            has_more,
            next_offset: has_more.then(|| u32::try_from(end).unwrap_or(u32::MAX)),
        }
    }
}

/// A range of days, both ends included; either end may be left open.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct DateRange {
    /// First day included (YYYY-MM-DD).
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"))]
    pub from: Option<String>,
    /// Last day included (YYYY-MM-DD).
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"))]
    pub to: Option<String>,
}

string_enum! {
    /// Sort direction: `asc` or `desc`.
    pub enum SortOrder { Asc => "asc", Desc => "desc" }
}

impl SortOrder {
    fn sql(self) -> &'static str {
        match self {
            SortOrder::Asc => "ASC",
            SortOrder::Desc => "DESC",
        }
    }
}

/// `round(base * percent / 100)`, in cents.
fn percent_of(base: i64, percent: f64) -> i64 {
    (base as f64 * percent / 100.0).round() as i64
}

/// Every shop command, for explicit registration (`Registry::builder().register_all(...)`).
pub const COMMANDS: [&afd_runtime::CommandDef; 84] = [
    // user
    user::user_create::COMMAND,
    user::user_get::COMMAND,
    user::user_list::COMMAND,
    user::user_update::COMMAND,
    user::user_delete::COMMAND,
    user::user_suspend::COMMAND,
    user::user_reactivate::COMMAND,
    user::user_address_add::COMMAND,
    user::user_address_list::COMMAND,
    user::user_address_remove::COMMAND,
    // order
    order::order_create::COMMAND,
    order::order_list::COMMAND,
    order::order_cancel::COMMAND,
    // payment
    payment::payment_authorize::COMMAND,
    payment::payment_capture::COMMAND,
    payment::payment_void::COMMAND,
    payment::payment_refund::COMMAND,
    payment::payment_get::COMMAND,
    payment::payment_list::COMMAND,
    payment::payment_refund_list::COMMAND,
    // product
    product::product_create::COMMAND,
    product::product_get::COMMAND,
    product::product_list::COMMAND,
    product::product_update::COMMAND,
    product::product_set_price::COMMAND,
    product::product_archive::COMMAND,
    product::product_restore::COMMAND,
    product::product_delete::COMMAND,
    // inventory
    inventory::inventory_get::COMMAND,
    inventory::inventory_list::COMMAND,
    inventory::inventory_adjust::COMMAND,
    inventory::inventory_restock::COMMAND,
    inventory::inventory_set_reorder_level::COMMAND,
    inventory::inventory_movement_list::COMMAND,
    // subscription
    subscription::subscription_create::COMMAND,
    subscription::subscription_get::COMMAND,
    subscription::subscription_list::COMMAND,
    subscription::subscription_cancel::COMMAND,
    subscription::subscription_pause::COMMAND,
    subscription::subscription_resume::COMMAND,
    subscription::subscription_change_plan::COMMAND,
    subscription::plan_list::COMMAND,
    // shipping
    shipping::shipping_quote::COMMAND,
    shipping::shipment_create::COMMAND,
    shipping::shipment_get::COMMAND,
    shipping::shipment_list::COMMAND,
    shipping::shipment_update_status::COMMAND,
    shipping::shipment_void::COMMAND,
    // review
    review::review_create::COMMAND,
    review::review_list::COMMAND,
    review::review_approve::COMMAND,
    review::review_reject::COMMAND,
    review::review_delete::COMMAND,
    review::review_summary::COMMAND,
    // coupon
    coupon::coupon_create::COMMAND,
    coupon::coupon_get::COMMAND,
    coupon::coupon_list::COMMAND,
    coupon::coupon_update::COMMAND,
    coupon::coupon_validate::COMMAND,
    coupon::coupon_deactivate::COMMAND,
    coupon::coupon_delete::COMMAND,
    // cart
    cart::cart_get::COMMAND,
    cart::cart_add_item::COMMAND,
    cart::cart_update_item::COMMAND,
    cart::cart_remove_item::COMMAND,
    cart::cart_clear::COMMAND,
    cart::cart_checkout::COMMAND,
    // config
    config::config_get::COMMAND,
    config::config_list::COMMAND,
    config::config_set::COMMAND,
    config::config_restore::COMMAND,
    config::config_reset::COMMAND,
    // report
    report::report_sales_summary::COMMAND,
    report::report_revenue_by_day::COMMAND,
    report::report_top_products::COMMAND,
    report::report_top_customers::COMMAND,
    report::report_order_status::COMMAND,
    report::report_subscription_metrics::COMMAND,
    report::report_inventory_value::COMMAND,
    report::report_abandoned_carts::COMMAND,
    report::report_refund_rate::COMMAND,
    report::report_orders_export::COMMAND,
    // invoice
    invoice::invoice_get::COMMAND,
    invoice::invoice_list::COMMAND,
];

/// The name of every shop command, in the order of [`COMMANDS`].
pub const COMMAND_NAMES: [&str; COMMANDS.len()] = {
    let mut names = [""; COMMANDS.len()];
    let mut index = 0;
    while index < COMMANDS.len() {
        names[index] = COMMANDS[index].name();
        index += 1;
    }
    names
};

/// A context carrying `store`, ready for `Registry::call`.
pub fn context(store: ShopStore) -> CommandContext {
    CommandContext::new().with_state(store)
}
