//! Discount coupons.

use afd_runtime::prelude::*;
use rusqlite::{Connection, Row, params};

use super::store::{Db, NOW, ShopStore, all, conflict, no_changes, not_found, one, scalar};
use super::{Page, PageQuery, percent_of, string_enum};

string_enum! {
    /// How a coupon discounts: `percent` off the subtotal or a `fixed` amount in cents.
    pub enum CouponKind { Percent => "percent", Fixed => "fixed" }
}

/// A discount coupon.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Coupon {
    /// The code customers enter (case-insensitive).
    pub code: String,
    /// Percent or fixed.
    pub kind: CouponKind,
    /// Percent off (1-100) or cents off.
    pub value: i64,
    /// Smallest subtotal it applies to, in cents.
    pub min_subtotal_cents: i64,
    /// How many times it may be used in all (absent: unlimited).
    pub max_redemptions: Option<i64>,
    /// How many times it was used.
    pub times_redeemed: i64,
    /// Last day it is valid (YYYY-MM-DD; absent: no end).
    pub expires_at: Option<String>,
    /// Whether it is switched on.
    pub active: bool,
    /// Whether it can be used today: active, not expired, redemptions left.
    pub usable: bool,
    /// When it was created (ISO 8601).
    pub created_at: String,
}

const COUPON_SELECT: &str = "SELECT code, kind, value, min_subtotal_cents, max_redemptions,
    times_redeemed, expires_at, active, created_at,
    (active = 1 AND (expires_at IS NULL OR expires_at >= date('now'))
     AND (max_redemptions IS NULL OR times_redeemed < max_redemptions)) AS usable
    FROM coupons";

fn coupon_from_row(row: &Row<'_>) -> rusqlite::Result<Coupon> {
    Ok(Coupon {
        code: row.get("code")?,
        kind: row.get("kind")?,
        value: row.get("value")?,
        min_subtotal_cents: row.get("min_subtotal_cents")?,
        max_redemptions: row.get("max_redemptions")?,
        times_redeemed: row.get("times_redeemed")?,
        expires_at: row.get("expires_at")?,
        active: row.get("active")?,
        usable: row.get("usable")?,
        created_at: row.get("created_at")?,
    })
}

fn find(conn: &Connection, code: &str) -> Result<Option<Coupon>, CommandError> {
    one(
        conn,
        &format!("{COUPON_SELECT} WHERE code = ?1"),
        [code],
        coupon_from_row,
    )
}

fn require_coupon(conn: &Connection, code: &str) -> Result<Coupon, CommandError> {
    find(conn, code)?.ok_or_else(|| not_found("Coupon", code, "coupon-list"))
}

/// The discount `code` gives on `subtotal`, or why it does not apply.
fn discount(
    conn: &Connection,
    code: &str,
    subtotal: i64,
) -> Result<Result<(Coupon, i64), String>, CommandError> {
    let Some(coupon) = find(conn, code)? else {
        return Ok(Err(format!("No coupon has the code '{code}'")));
    };
    let today: String = scalar(conn, "SELECT date('now')", [])?;
    if !coupon.active {
        return Ok(Err(format!("Coupon {} is switched off", coupon.code)));
    }
    if let Some(expiry) = coupon
        .expires_at
        .as_deref()
        .filter(|expiry| *expiry < today.as_str())
    {
        return Ok(Err(format!("Coupon {} expired on {expiry}", coupon.code)));
    }
    if coupon
        .max_redemptions
        .is_some_and(|max| coupon.times_redeemed >= max)
    {
        return Ok(Err(format!("Coupon {} has been used up", coupon.code)));
    }
    if subtotal < coupon.min_subtotal_cents {
        return Ok(Err(format!(
            "Coupon {} needs a subtotal of at least {} cents",
            coupon.code, coupon.min_subtotal_cents
        )));
    }
    let amount = match coupon.kind {
        CouponKind::Percent => percent_of(subtotal, coupon.value as f64),
        CouponKind::Fixed => coupon.value,
    }
    .min(subtotal);
    Ok(Ok((coupon, amount)))
}

/// Applies `code` to an order of `subtotal` and counts the use: (canonical code, discount).
pub(crate) fn redeem(
    conn: &Connection,
    code: &str,
    subtotal: i64,
) -> Result<(String, i64), CommandError> {
    match discount(conn, code, subtotal)? {
        Ok((coupon, amount)) => {
            conn.execute(
                "UPDATE coupons SET times_redeemed = times_redeemed + 1 WHERE code = ?1",
                [&coupon.code],
            )
            .db()?;
            Ok((coupon.code, amount))
        }
        Err(reason) => Err(CommandError::new("COUPON_INVALID", reason)
            .with_suggestion("Leave the coupon out, or call coupon-list to find a usable one.")
            .with_retryable(false)),
    }
}

/// Input of `coupon-create`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateCoupon {
    /// The code: 3 to 20 capital letters and digits.
    #[schemars(regex(pattern = r"^[A-Z0-9]{3,20}$"))]
    pub code: String,
    /// Percent or fixed.
    pub kind: CouponKind,
    /// Percent off (1-100) or cents off.
    #[schemars(range(min = 1))]
    pub value: i64,
    /// Smallest subtotal it applies to, in cents (default 0).
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub min_subtotal_cents: i64,
    /// How many times it may be used in all (default: unlimited).
    #[schemars(range(min = 1))]
    pub max_redemptions: Option<i64>,
    /// Last day it is valid (YYYY-MM-DD; default: no end).
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"))]
    pub expires_at: Option<String>,
}

fn check_percent(kind: CouponKind, value: i64) -> Result<(), CommandError> {
    if kind == CouponKind::Percent && value > 100 {
        return Err(CommandError::validation(format!(
            "A percent coupon takes off at most 100%, not {value}%"
        )));
    }
    Ok(())
}

/// Create a discount coupon.
#[command(
    blocking,
    title = "Create coupon",
    scopes("shop:write"),
    contexts("storefront"),
    tags("crud", "billing", "mutation"),
    mutation,
    errors("CONFLICT", "VALIDATION_ERROR")
)]
pub fn coupon_create(input: CreateCoupon, ctx: &CommandContext) -> Result<Coupon, CommandError> {
    check_percent(input.kind, input.value)?;
    ctx.state::<ShopStore>()?.transaction(|conn| {
        if find(conn, &input.code)?.is_some() {
            return Err(conflict(
                format!("Coupon {} already exists", input.code),
                "Pick another code, or change the existing one with coupon-update.",
            ));
        }
        conn.execute(
            &format!(
                "INSERT INTO coupons (code, kind, value, min_subtotal_cents, max_redemptions,
                     expires_at, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, {NOW})"
            ),
            params![
                input.code,
                input.kind,
                input.value,
                input.min_subtotal_cents,
                input.max_redemptions,
                input.expires_at
            ],
        )
        .db()?;
        require_coupon(conn, &input.code)
    })
}

/// Input naming one coupon.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CouponCode {
    /// The coupon's code.
    #[schemars(length(min = 1, max = 20))]
    pub code: String,
}

/// Get a coupon by code.
#[command(
    title = "Get coupon",
    scopes("shop:read"),
    contexts("storefront"),
    tags("crud", "billing", "read"),
    errors("NOT_FOUND")
)]
pub fn coupon_get(input: CouponCode, ctx: &CommandContext) -> Result<Coupon, CommandError> {
    require_coupon(&ctx.state::<ShopStore>()?.read(), &input.code)
}

/// Input of `coupon-list`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListCoupons {
    /// Only coupons that can (true) or cannot (false) be used today.
    pub usable: Option<bool>,
    /// Pagination.
    #[serde(flatten)]
    pub page: PageQuery,
}

/// List coupons, optionally only those usable today.
#[command(
    title = "List coupons",
    scopes("shop:read"),
    contexts("storefront"),
    tags("crud", "billing", "read")
)]
pub fn coupon_list(input: ListCoupons, ctx: &CommandContext) -> Result<Page<Coupon>, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let inner = format!("SELECT * FROM ({COUPON_SELECT}) WHERE (?1 IS NULL OR usable = ?1)");
    let total = scalar(
        &conn,
        &format!("SELECT count(*) FROM ({inner})"),
        params![input.usable],
    )?;
    let coupons = all(
        &conn,
        &format!("{inner} ORDER BY created_at DESC, code LIMIT ?2 OFFSET ?3"),
        params![input.usable, input.page.limit, input.page.offset],
        coupon_from_row,
    )?;
    Ok(Page::new(coupons, total, input.page))
}

/// Input of `coupon-update`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateCoupon {
    /// The coupon's code.
    #[schemars(length(min = 1, max = 20))]
    pub code: String,
    /// New cap on uses in all.
    #[schemars(range(min = 1))]
    pub max_redemptions: Option<i64>,
    /// New last valid day (YYYY-MM-DD).
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"))]
    pub expires_at: Option<String>,
    /// New smallest subtotal, in cents.
    #[schemars(range(min = 0))]
    pub min_subtotal_cents: Option<i64>,
}

/// Change a coupon's usage cap, expiry or minimum subtotal.
#[command(
    blocking,
    title = "Update coupon",
    scopes("shop:write"),
    contexts("storefront"),
    tags("crud", "billing", "mutation"),
    mutation,
    idempotent,
    errors("NOT_FOUND", "NO_CHANGES")
)]
pub fn coupon_update(input: UpdateCoupon, ctx: &CommandContext) -> Result<Coupon, CommandError> {
    if input.max_redemptions.is_none()
        && input.expires_at.is_none()
        && input.min_subtotal_cents.is_none()
    {
        return Err(no_changes("maxRedemptions, expiresAt or minSubtotalCents"));
    }
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let coupon = require_coupon(conn, &input.code)?;
        conn.execute(
            "UPDATE coupons SET max_redemptions = coalesce(?2, max_redemptions),
             expires_at = coalesce(?3, expires_at),
             min_subtotal_cents = coalesce(?4, min_subtotal_cents) WHERE code = ?1",
            params![
                coupon.code,
                input.max_redemptions,
                input.expires_at,
                input.min_subtotal_cents
            ],
        )
        .db()?;
        require_coupon(conn, &coupon.code)
    })
}

/// Input of `coupon-validate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ValidateCoupon {
    /// The code to check.
    #[schemars(length(min = 1, max = 20))]
    pub code: String,
    /// The order subtotal to apply it to, in cents.
    #[schemars(range(min = 0))]
    pub subtotal_cents: i64,
}

/// Whether a coupon applies, and its discount.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CouponCheck {
    /// The code checked.
    pub code: String,
    /// Whether it applies to the subtotal.
    pub valid: bool,
    /// The discount it gives, in cents (0 when not valid).
    pub discount_cents: i64,
    /// Why it does not apply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Check a coupon against a subtotal without using it. Returns whether it applies and its discount.
#[command(
    title = "Validate coupon",
    scopes("shop:read"),
    contexts("storefront"),
    tags("billing", "read")
)]
pub fn coupon_validate(
    input: ValidateCoupon,
    ctx: &CommandContext,
) -> Result<CouponCheck, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    Ok(match discount(&conn, &input.code, input.subtotal_cents)? {
        Ok((coupon, amount)) => CouponCheck {
            code: coupon.code,
            valid: true,
            discount_cents: amount,
            reason: None,
        },
        Err(reason) => CouponCheck {
            code: input.code,
            valid: false,
            discount_cents: 0,
            reason: Some(reason),
        },
    })
}

/// Switch a coupon off so it can no longer be used. Past orders keep their discount.
#[command(
    blocking,
    title = "Deactivate coupon",
    scopes("shop:write"),
    contexts("storefront"),
    tags("billing", "mutation"),
    mutation,
    idempotent,
    errors("NOT_FOUND")
)]
pub fn coupon_deactivate(input: CouponCode, ctx: &CommandContext) -> Result<Coupon, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let coupon = require_coupon(conn, &input.code)?;
        conn.execute(
            "UPDATE coupons SET active = 0 WHERE code = ?1",
            [&coupon.code],
        )
        .db()?;
        require_coupon(conn, &coupon.code)
    })
}

/// Result of `coupon-delete`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CouponDeleted {
    /// Always true on success.
    pub deleted: bool,
    /// The deleted coupon's code.
    pub code: String,
}

/// Delete a coupon that was never used. Used coupons can only be switched off.
#[command(
    blocking,
    title = "Delete coupon",
    scopes("shop:admin"),
    contexts("storefront"),
    tags("crud", "billing", "mutation", "destructive"),
    mutation,
    destructive,
    confirm_prompt = "This will delete coupon {code}. Continue?",
    errors("NOT_FOUND", "CONFLICT")
)]
pub fn coupon_delete(
    input: CouponCode,
    ctx: &CommandContext,
) -> Result<CouponDeleted, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let coupon = require_coupon(conn, &input.code)?;
        let orders: i64 = scalar(
            conn,
            "SELECT count(*) FROM orders WHERE coupon_code = ?1",
            [&coupon.code],
        )?;
        if coupon.times_redeemed > 0 || orders > 0 {
            return Err(conflict(
                format!(
                    "Coupon {} was used {} time(s) and is kept for accounting",
                    coupon.code,
                    coupon.times_redeemed.max(orders)
                ),
                format!(
                    "Call coupon-deactivate with code '{}' instead.",
                    coupon.code
                ),
            ));
        }
        conn.execute("DELETE FROM coupons WHERE code = ?1", [&coupon.code])
            .db()?;
        Ok(CouponDeleted {
            deleted: true,
            code: coupon.code,
        })
    })
}
