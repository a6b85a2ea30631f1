//! Product reviews and their moderation.

use afd_runtime::prelude::*;
use rusqlite::{Connection, Row, params};

use super::store::{
    Db, NOW, ShopStore, all, config_bool, conflict, invalid_state, not_found, one, scalar,
};
use super::{Page, PageQuery, product, string_enum, user};

string_enum! {
    /// Moderation state of a review: `pending`, `approved` (published) or `rejected`.
    pub enum ReviewStatus { Pending => "pending", Approved => "approved", Rejected => "rejected" }
}

/// A customer's review of a product.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Review {
    /// Unique identifier.
    pub id: i64,
    /// The product reviewed.
    pub product_id: i64,
    /// The reviewer.
    pub user_id: i64,
    /// Stars, 1 to 5.
    pub rating: i64,
    /// Headline.
    pub title: String,
    /// Text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Moderation state.
    pub status: ReviewStatus,
    /// Why a moderator rejected it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moderation_note: Option<String>,
    /// Whether the reviewer received the product in a delivered order.
    pub verified_purchase: bool,
    /// When it was written (ISO 8601).
    pub created_at: String,
}

const REVIEW_COLUMNS: &str = "id, product_id, user_id, rating, title, body, status,
    moderation_note, verified_purchase, created_at";

fn review_from_row(row: &Row<'_>) -> rusqlite::Result<Review> {
    Ok(Review {
        id: row.get("id")?,
        product_id: row.get("product_id")?,
        user_id: row.get("user_id")?,
        rating: row.get("rating")?,
        title: row.get("title")?,
        body: row.get("body")?,
        status: row.get("status")?,
        moderation_note: row.get("moderation_note")?,
        verified_purchase: row.get("verified_purchase")?,
        created_at: row.get("created_at")?,
    })
}

fn require_review(conn: &Connection, id: i64) -> Result<Review, CommandError> {
    one(
        conn,
        &format!("SELECT {REVIEW_COLUMNS} FROM reviews WHERE id = ?1"),
        [id],
        review_from_row,
    )?
    .ok_or_else(|| not_found("Review", id, "review-list"))
}

/// Input of `review-create`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateReview {
    /// The product reviewed.
    #[schemars(range(min = 1))]
    pub product_id: i64,
    /// The reviewer's user id.
    #[schemars(range(min = 1))]
    pub user_id: i64,
    /// Stars, 1 to 5.
    #[schemars(range(min = 1, max = 5))]
    pub rating: i64,
    /// Headline.
    #[schemars(length(min = 1, max = 120))]
    pub title: String,
    /// Text.
    #[schemars(length(max = 2000))]
    pub body: Option<String>,
}

/// Write a product review. It waits for moderation unless reviews.auto_approve is on.
#[command(
    blocking,
    title = "Write review",
    scopes("shop:write"),
    contexts("storefront"),
    tags("crud", "mutation"),
    mutation,
    errors("NOT_FOUND", "INVALID_STATE", "CONFLICT")
)]
pub fn review_create(input: CreateReview, ctx: &CommandContext) -> Result<Review, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        user::require_active_user(conn, input.user_id)?;
        product::require_product(conn, input.product_id)?;
        let existing: Option<i64> = one(
            conn,
            "SELECT id FROM reviews WHERE product_id = ?1 AND user_id = ?2",
            params![input.product_id, input.user_id],
            |row| row.get(0),
        )?;
        if let Some(id) = existing {
            return Err(conflict(
                format!(
                    "User {} already reviewed product {} (review {id})",
                    input.user_id, input.product_id
                ),
                format!("A user reviews a product once; delete review {id} with review-delete to write it again."),
            ));
        }
        let verified: bool = scalar(
            conn,
            "SELECT EXISTS (SELECT 1 FROM orders o JOIN order_items i ON i.order_id = o.id
             WHERE o.user_id = ?1 AND i.product_id = ?2 AND o.status = 'delivered')",
            params![input.user_id, input.product_id],
        )?;
        let status = if config_bool(conn, "reviews.auto_approve")? {
            ReviewStatus::Approved
        } else {
            ReviewStatus::Pending
        };
        let id: i64 = scalar(
            conn,
            &format!(
                "INSERT INTO reviews (product_id, user_id, rating, title, body, status,
                     verified_purchase, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, {NOW}) RETURNING id"
            ),
            params![
                input.product_id,
                input.user_id,
                input.rating,
                input.title,
                input.body,
                status,
                verified
            ],
        )?;
        require_review(conn, id)
    })
}

/// Input of `review-list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListReviews {
    /// Only reviews of this product.
    pub product_id: Option<i64>,
    /// Only reviews by this user.
    pub user_id: Option<i64>,
    /// Only reviews in this moderation state.
    pub status: Option<ReviewStatus>,
    /// Only reviews with at least this many stars.
    #[schemars(range(min = 1, max = 5))]
    pub min_rating: Option<i64>,
    /// Pagination.
    #[serde(flatten)]
    pub page: PageQuery,
}

/// List reviews by product, user, state or rating, newest first.
#[command(
    title = "List reviews",
    scopes("shop:read"),
    contexts("storefront"),
    tags("crud", "read")
)]
pub fn review_list(input: ListReviews, ctx: &CommandContext) -> Result<Page<Review>, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let filter = "(?1 IS NULL OR product_id = ?1) AND (?2 IS NULL OR user_id = ?2)
        AND (?3 IS NULL OR status = ?3) AND (?4 IS NULL OR rating >= ?4)";
    let total = scalar(
        &conn,
        &format!("SELECT count(*) FROM reviews WHERE {filter}"),
        params![
            input.product_id,
            input.user_id,
            input.status,
            input.min_rating
        ],
    )?;
    let reviews = all(
        &conn,
        &format!(
            "SELECT {REVIEW_COLUMNS} FROM reviews WHERE {filter}
             ORDER BY created_at DESC, id DESC LIMIT ?5 OFFSET ?6"
        ),
        params![
            input.product_id,
            input.user_id,
            input.status,
            input.min_rating,
            input.page.limit,
            input.page.offset
        ],
        review_from_row,
    )?;
    Ok(Page::new(reviews, total, input.page))
}

/// Input naming one review.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReviewId {
    /// The review's id.
    #[schemars(range(min = 1))]
    pub id: i64,
}

fn moderate(
    conn: &Connection,
    id: i64,
    to: ReviewStatus,
    note: Option<&str>,
) -> Result<Review, CommandError> {
    let review = require_review(conn, id)?;
    if review.status == to {
        return Err(invalid_state(
            format!("Review {id} is already {}", to.as_str()),
            "Nothing to do.",
        ));
    }
    conn.execute(
        "UPDATE reviews SET status = ?2, moderation_note = ?3 WHERE id = ?1",
        params![id, to, note],
    )
    .db()?;
    require_review(conn, id)
}

/// Approve a review. It is published and counts toward the product's rating.
#[command(
    blocking,
    title = "Approve review",
    scopes("shop:write"),
    contexts("storefront"),
    tags("moderation", "mutation"),
    mutation,
    errors("NOT_FOUND", "INVALID_STATE")
)]
pub fn review_approve(input: ReviewId, ctx: &CommandContext) -> Result<Review, CommandError> {
    ctx.state::<ShopStore>()?
        .transaction(|conn| moderate(conn, input.id, ReviewStatus::Approved, None))
}

/// Input of `review-reject`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RejectReview {
    /// The review's id.
    #[schemars(range(min = 1))]
    pub id: i64,
    /// Why it is rejected; shown to the reviewer.
    #[schemars(length(min = 1, max = 500))]
    pub note: String,
}

/// Reject a review with a note; it is hidden but kept.
#[command(
    blocking,
    title = "Reject review",
    scopes("shop:write"),
    contexts("storefront"),
    tags("moderation", "mutation"),
    mutation,
    errors("NOT_FOUND", "INVALID_STATE")
)]
pub fn review_reject(input: RejectReview, ctx: &CommandContext) -> Result<Review, CommandError> {
    ctx.state::<ShopStore>()?
        .transaction(|conn| moderate(conn, input.id, ReviewStatus::Rejected, Some(&input.note)))
}

/// Result of `review-delete`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewDeleted {
    /// Always true on success.
    pub deleted: bool,
    /// The deleted review's id.
    pub id: i64,
    /// The product it was about.
    pub product_id: i64,
}

/// Delete a review permanently.
#[command(
    blocking,
    title = "Delete review",
    scopes("shop:admin"),
    contexts("storefront"),
    tags("crud", "moderation", "mutation", "destructive"),
    mutation,
    destructive,
    confirm_prompt = "This will permanently delete review {id}. Continue?",
    errors("NOT_FOUND")
)]
pub fn review_delete(input: ReviewId, ctx: &CommandContext) -> Result<ReviewDeleted, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let review = require_review(conn, input.id)?;
        conn.execute("DELETE FROM reviews WHERE id = ?1", [input.id])
            .db()?;
        Ok(ReviewDeleted {
            deleted: true,
            id: review.id,
            product_id: review.product_id,
        })
    })
}

/// Input of `review-summary`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProductRef {
    /// The product's id.
    #[schemars(range(min = 1))]
    pub product_id: i64,
}

/// Published ratings of a product.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RatingSummary {
    /// The product's id.
    pub product_id: i64,
    /// Approved reviews.
    pub count: i64,
    /// Average stars (absent without reviews).
    pub average_rating: Option<f64>,
    /// Approved reviews per star count, index 0 = 1 star ... index 4 = 5 stars.
    pub histogram: [i64; 5],
    /// Approved reviews from verified purchases.
    pub verified_count: i64,
    /// Reviews waiting for moderation.
    pub pending_count: i64,
}

/// Summarise a product's published ratings: average, histogram, counts.
#[command(
    title = "Review summary",
    scopes("shop:read"),
    contexts("storefront"),
    tags("read", "report"),
    errors("NOT_FOUND")
)]
pub fn review_summary(
    input: ProductRef,
    ctx: &CommandContext,
) -> Result<RatingSummary, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    product::require_product(&conn, input.product_id)?;
    conn.query_row(
        "SELECT count(*) FILTER (WHERE status = 'approved'),
            round(avg(rating) FILTER (WHERE status = 'approved'), 2),
            count(*) FILTER (WHERE status = 'approved' AND rating = 1),
            count(*) FILTER (WHERE status = 'approved' AND rating = 2),
            count(*) FILTER (WHERE status = 'approved' AND rating = 3),
            count(*) FILTER (WHERE status = 'approved' AND rating = 4),
            count(*) FILTER (WHERE status = 'approved' AND rating = 5),
            count(*) FILTER (WHERE status = 'approved' AND verified_purchase = 1),
            count(*) FILTER (WHERE status = 'pending')
         FROM reviews WHERE product_id = ?1",
        [input.product_id],
        |row| {
            Ok(RatingSummary {
                product_id: input.product_id,
                count: row.get(0)?,
                average_rating: row.get(1)?,
                histogram: [
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                    row.get(5)?,
                    row.get(6)?,
                ],
                verified_count: row.get(7)?,
                pending_count: row.get(8)?,
            })
        },
    )
    .db()
}
