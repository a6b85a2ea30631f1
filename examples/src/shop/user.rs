//! User accounts and their addresses.

use afd_runtime::prelude::*;
use rusqlite::{Connection, Row, params};

use super::store::{
    Db, NOW, ShopStore, all, conflict, invalid_state, no_changes, not_found, one, scalar,
};
use super::{Page, PageQuery, string_enum};

string_enum! {
    /// What a user may do: `customer` or `staff`.
    pub enum Role { Customer => "customer", Staff => "staff" }
}

string_enum! {
    /// Whether a user may shop: `active` or `suspended`.
    pub enum UserStatus { Active => "active", Suspended => "suspended" }
}

/// A user account.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct User {
    /// Unique identifier.
    pub id: i64,
    /// Display name.
    pub name: String,
    /// Contact address (unique).
    pub email: String,
    /// Customer or staff.
    pub role: Role,
    /// Active or suspended.
    pub status: UserStatus,
    /// When the account was created (ISO 8601).
    pub created_at: String,
    /// When it last changed (ISO 8601).
    pub updated_at: String,
}

const USER_COLUMNS: &str = "id, name, email, role, status, created_at, updated_at";

fn user_from_row(row: &Row<'_>) -> rusqlite::Result<User> {
    Ok(User {
        id: row.get("id")?,
        name: row.get("name")?,
        email: row.get("email")?,
        role: row.get("role")?,
        status: row.get("status")?,
        created_at: row.get("created_at")?,
        updated_at: row.get("updated_at")?,
    })
}

/// The user with this id, or `NOT_FOUND`.
pub(crate) fn require_user(conn: &Connection, id: i64) -> Result<User, CommandError> {
    one(
        conn,
        &format!("SELECT {USER_COLUMNS} FROM users WHERE id = ?1"),
        [id],
        user_from_row,
    )?
    .ok_or_else(|| not_found("User", id, "user-list"))
}

/// The user with this id, or `NOT_FOUND`, or `INVALID_STATE` while suspended.
pub(crate) fn require_active_user(conn: &Connection, id: i64) -> Result<User, CommandError> {
    let user = require_user(conn, id)?;
    if user.status == UserStatus::Suspended {
        return Err(invalid_state(
            format!("User {id} is suspended"),
            format!("Call user-reactivate with id {id} first, or act for another user."),
        ));
    }
    Ok(user)
}

fn check_email(email: &str) -> Result<(), CommandError> {
    let valid = match email.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !domain.contains('@')
                && !email.contains(char::is_whitespace)
        }
        None => false,
    };
    if valid {
        Ok(())
    } else {
        Err(CommandError::new(
            "INVALID_EMAIL",
            format!("'{email}' is not an email address"),
        )
        .with_suggestion("Pass an address of the form name@example.com.")
        .with_retryable(false))
    }
}

fn email_taken(conn: &Connection, email: &str, except: i64) -> Result<(), CommandError> {
    let owner: Option<i64> = one(
        conn,
        "SELECT id FROM users WHERE email = ?1 AND id != ?2",
        params![email, except],
        |row| row.get(0),
    )?;
    match owner {
        Some(id) => Err(conflict(
            format!("The email '{email}' is already used by user {id}"),
            format!("Use another email, or call user-get with id {id} to see that account."),
        )),
        None => Ok(()),
    }
}

/// Input of `user-create`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateUser {
    /// Display name.
    #[schemars(length(min = 1, max = 100))]
    pub name: String,
    /// Contact address; must be unique.
    #[schemars(email, length(max = 254))]
    pub email: String,
}

/// Create a new user account.
#[command(
    blocking,
    title = "Create user",
    scopes("shop:write"),
    contexts("back-office"),
    tags("crud", "mutation"),
    mutation,
    errors("INVALID_EMAIL", "CONFLICT")
)]
pub fn user_create(input: CreateUser, ctx: &CommandContext) -> CommandResult<User> {
    let created = ctx.state::<ShopStore>().and_then(|store| {
        check_email(&input.email)?;
        store.transaction(|conn| {
            email_taken(conn, &input.email, 0)?;
            let id: i64 = scalar(
                conn,
                &format!(
                    "INSERT INTO users (name, email, created_at, updated_at)
                     VALUES (?1, ?2, {NOW}, {NOW}) RETURNING id"
                ),
                params![input.name, input.email],
            )?;
            require_user(conn, id)
        })
    });
    match created {
        Ok(user) => {
            let reasoning = format!("Created user {} ({})", user.id, user.name);
            CommandResult::success(user).with_reasoning(reasoning)
        }
        Err(error) => CommandResult::failure(error),
    }
}

/// Input naming one user.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct UserId {
    /// The user's id.
    #[schemars(range(min = 1))]
    pub id: i64,
}

/// Get a user account by id.
#[command(
    title = "Get user",
    scopes("shop:read"),
    contexts("back-office", "audit"),
    tags("crud", "read"),
    errors("NOT_FOUND")
)]
pub fn user_get(input: UserId, ctx: &CommandContext) -> Result<User, CommandError> {
    require_user(&ctx.state::<ShopStore>()?.read(), input.id)
}

/// Input of `user-list`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListUsers {
    /// Only users with this status.
    pub status: Option<UserStatus>,
    /// Only users with this role.
    pub role: Option<Role>,
    /// Text to find in the name or email.
    pub search: Option<String>,
    /// Pagination.
    #[serde(flatten)]
    pub page: PageQuery,
}

/// List user accounts with filters and pagination, oldest first.
#[command(
    title = "List users",
    scopes("shop:read"),
    contexts("back-office", "audit"),
    tags("crud", "read")
)]
pub fn user_list(input: ListUsers, ctx: &CommandContext) -> Result<Page<User>, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let pattern = input
        .search
        .map(|text| format!("%{}%", text.to_lowercase()));
    let filter = "(?1 IS NULL OR status = ?1) AND (?2 IS NULL OR role = ?2)
         AND (?3 IS NULL OR lower(name) LIKE ?3 OR lower(email) LIKE ?3)";
    let total = scalar(
        &conn,
        &format!("SELECT count(*) FROM users WHERE {filter}"),
        params![input.status, input.role, pattern],
    )?;
    let users = all(
        &conn,
        &format!("SELECT {USER_COLUMNS} FROM users WHERE {filter} ORDER BY id LIMIT ?4 OFFSET ?5"),
        params![
            input.status,
            input.role,
            pattern,
            input.page.limit,
            input.page.offset
        ],
        user_from_row,
    )?;
    Ok(Page::new(users, total, input.page))
}

/// Input of `user-update`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct UpdateUser {
    /// The user's id.
    #[schemars(range(min = 1))]
    pub id: i64,
    /// New display name.
    #[schemars(length(min = 1, max = 100))]
    pub name: Option<String>,
    /// New contact address; must be unique.
    #[schemars(email, length(max = 254))]
    pub email: Option<String>,
    /// New role.
    pub role: Option<Role>,
}

/// Update a user's name, email or role. Fields left out keep their value.
#[command(
    blocking,
    title = "Update user",
    scopes("shop:write"),
    contexts("back-office"),
    tags("crud", "mutation"),
    mutation,
    idempotent,
    errors("NOT_FOUND", "NO_CHANGES", "INVALID_EMAIL", "CONFLICT")
)]
pub fn user_update(input: UpdateUser, ctx: &CommandContext) -> Result<User, CommandError> {
    if input.name.is_none() && input.email.is_none() && input.role.is_none() {
        return Err(no_changes("name, email or role"));
    }
    if let Some(email) = &input.email {
        check_email(email)?;
    }
    ctx.state::<ShopStore>()?.transaction(|conn| {
        require_user(conn, input.id)?;
        if let Some(email) = &input.email {
            email_taken(conn, email, input.id)?;
        }
        conn.execute(
            &format!(
                "UPDATE users SET name = coalesce(?2, name), email = coalesce(?3, email),
                 role = coalesce(?4, role), updated_at = {NOW} WHERE id = ?1"
            ),
            params![input.id, input.name, input.email, input.role],
        )
        .db()?;
        require_user(conn, input.id)
    })
}

/// Result of `user-delete`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserDeleted {
    /// Always true on success.
    pub deleted: bool,
    /// The deleted user's id.
    pub id: i64,
    /// The deleted user's name.
    pub name: String,
    /// Past orders kept for accounting, now without a customer.
    pub orders_detached: u64,
}

/// Delete a user account. Addresses, cart, reviews and past subscriptions go with it; past
/// orders are kept without the customer.
#[command(
    blocking,
    title = "Delete user",
    scopes("shop:admin"),
    contexts("back-office"),
    tags("crud", "admin", "mutation", "destructive"),
    mutation,
    destructive,
    confirm_prompt = "This will permanently delete user {id} and their addresses, cart and reviews. Continue?",
    errors("NOT_FOUND", "CONFLICT")
)]
pub fn user_delete(input: UserId, ctx: &CommandContext) -> Result<UserDeleted, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let user = require_user(conn, input.id)?;
        let open: Option<String> = one(
            conn,
            "SELECT id FROM orders WHERE user_id = ?1 AND status IN ('pending', 'paid', 'shipped')
             ORDER BY id LIMIT 1",
            [input.id],
            |row| row.get(0),
        )?;
        if let Some(order) = open {
            return Err(conflict(
                format!("User {} has open order {order}", input.id),
                format!(
                    "Wait until the order is delivered, or call order-cancel with orderId '{order}' while it is pending."
                ),
            ));
        }
        let subscription: Option<String> = one(
            conn,
            "SELECT id FROM subscriptions WHERE user_id = ?1 AND status != 'cancelled' LIMIT 1",
            [input.id],
            |row| row.get(0),
        )?;
        if let Some(subscription) = subscription {
            return Err(conflict(
                format!("User {} has a running subscription {subscription}", input.id),
                format!(
                    "Call subscription-cancel with subscriptionId '{subscription}' first."
                ),
            ));
        }
        let orders_detached: u64 =
            scalar(conn, "SELECT count(*) FROM orders WHERE user_id = ?1", [input.id])?;
        conn.execute("DELETE FROM users WHERE id = ?1", [input.id]).db()?;
        Ok(UserDeleted {
            deleted: true,
            id: user.id,
            name: user.name,
            orders_detached,
        })
    })
}

fn set_status(
    ctx: &CommandContext,
    id: i64,
    from: UserStatus,
    to: UserStatus,
    hint: &str,
) -> Result<User, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let user = require_user(conn, id)?;
        if user.status != from {
            return Err(invalid_state(
                format!("User {id} is already {}", user.status.as_str()),
                hint.to_owned(),
            ));
        }
        conn.execute(
            &format!("UPDATE users SET status = ?2, updated_at = {NOW} WHERE id = ?1"),
            params![id, to],
        )
        .db()?;
        require_user(conn, id)
    })
}

/// Suspend a user account. It can no longer place orders, fill its cart or subscribe.
#[command(
    blocking,
    title = "Suspend user",
    scopes("shop:write"),
    contexts("back-office"),
    tags("mutation"),
    mutation,
    errors("NOT_FOUND", "INVALID_STATE")
)]
pub fn user_suspend(input: UserId, ctx: &CommandContext) -> Result<User, CommandError> {
    set_status(
        ctx,
        input.id,
        UserStatus::Active,
        UserStatus::Suspended,
        "Nothing to do; call user-reactivate to lift the suspension.",
    )
}

/// Reactivate a suspended user account.
#[command(
    blocking,
    title = "Reactivate user",
    scopes("shop:write"),
    contexts("back-office"),
    tags("mutation"),
    mutation,
    errors("NOT_FOUND", "INVALID_STATE")
)]
pub fn user_reactivate(input: UserId, ctx: &CommandContext) -> Result<User, CommandError> {
    set_status(
        ctx,
        input.id,
        UserStatus::Suspended,
        UserStatus::Active,
        "Nothing to do; the account is active.",
    )
}

/// A postal address of a user.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Address {
    /// Unique identifier.
    pub id: i64,
    /// The owner.
    pub user_id: i64,
    /// A short name: home, work, ...
    pub label: String,
    /// Street and number.
    pub line1: String,
    /// City.
    pub city: String,
    /// Postal code.
    pub postal_code: String,
    /// ISO 3166 country code.
    pub country: String,
    /// Whether orders ship here unless told otherwise.
    pub is_default: bool,
}

const ADDRESS_COLUMNS: &str = "id, user_id, label, line1, city, postal_code, country, is_default";

pub(crate) fn address_from_row(row: &Row<'_>) -> rusqlite::Result<Address> {
    Ok(Address {
        id: row.get("id")?,
        user_id: row.get("user_id")?,
        label: row.get("label")?,
        line1: row.get("line1")?,
        city: row.get("city")?,
        postal_code: row.get("postal_code")?,
        country: row.get("country")?,
        is_default: row.get("is_default")?,
    })
}

/// The default address of a user, if any.
pub(crate) fn default_address(
    conn: &Connection,
    user_id: i64,
) -> Result<Option<Address>, CommandError> {
    one(
        conn,
        &format!("SELECT {ADDRESS_COLUMNS} FROM addresses WHERE user_id = ?1 AND is_default = 1"),
        [user_id],
        address_from_row,
    )
}

/// Input of `user-address-add`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddAddress {
    /// The user's id.
    #[schemars(range(min = 1))]
    pub user_id: i64,
    /// A short name: home, work, ...
    #[schemars(length(min = 1, max = 40))]
    pub label: String,
    /// Street and number.
    #[schemars(length(min = 1, max = 200))]
    pub line1: String,
    /// City.
    #[schemars(length(min = 1, max = 100))]
    pub city: String,
    /// Postal code.
    #[schemars(length(min = 1, max = 20))]
    pub postal_code: String,
    /// ISO 3166 alpha-2 country code, like US.
    #[schemars(regex(pattern = r"^[A-Z]{2}$"))]
    pub country: String,
    /// Make it the default address (a user's first address always is).
    #[serde(default)]
    pub make_default: bool,
}

/// Add a postal address to a user.
#[command(
    blocking,
    title = "Add address",
    scopes("shop:write"),
    contexts("back-office"),
    tags("crud", "mutation"),
    mutation,
    errors("NOT_FOUND")
)]
pub fn user_address_add(input: AddAddress, ctx: &CommandContext) -> Result<Address, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        require_user(conn, input.user_id)?;
        let existing: u64 = scalar(
            conn,
            "SELECT count(*) FROM addresses WHERE user_id = ?1",
            [input.user_id],
        )?;
        let make_default = input.make_default || existing == 0;
        if make_default {
            conn.execute(
                "UPDATE addresses SET is_default = 0 WHERE user_id = ?1",
                [input.user_id],
            )
            .db()?;
        }
        let id: i64 = scalar(
            conn,
            "INSERT INTO addresses (user_id, label, line1, city, postal_code, country, is_default)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id",
            params![
                input.user_id,
                input.label,
                input.line1,
                input.city,
                input.postal_code,
                input.country,
                make_default
            ],
        )?;
        one(
            conn,
            &format!("SELECT {ADDRESS_COLUMNS} FROM addresses WHERE id = ?1"),
            [id],
            address_from_row,
        )?
        .ok_or_else(|| not_found("Address", id, "user-address-list"))
    })
}

/// Input naming a user by `userId`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserRef {
    /// The user's id.
    #[schemars(range(min = 1))]
    pub user_id: i64,
}

/// A user's addresses.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddressList {
    /// The user's id.
    pub user_id: i64,
    /// The addresses, the default first.
    pub addresses: Vec<Address>,
}

/// List a user's postal addresses, the default first.
#[command(
    title = "List addresses",
    scopes("shop:read"),
    contexts("back-office", "audit"),
    tags("crud", "read"),
    errors("NOT_FOUND")
)]
pub fn user_address_list(
    input: UserRef,
    ctx: &CommandContext,
) -> Result<AddressList, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    require_user(&conn, input.user_id)?;
    let addresses = all(
        &conn,
        &format!(
            "SELECT {ADDRESS_COLUMNS} FROM addresses WHERE user_id = ?1 ORDER BY is_default DESC, id"
        ),
        [input.user_id],
        address_from_row,
    )?;
    Ok(AddressList {
        user_id: input.user_id,
        addresses,
    })
}

/// Input of `user-address-remove`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoveAddress {
    /// The user's id.
    #[schemars(range(min = 1))]
    pub user_id: i64,
    /// The address's id.
    #[schemars(range(min = 1))]
    pub address_id: i64,
}

/// Result of `user-address-remove`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddressRemoved {
    /// Always true on success.
    pub removed: bool,
    /// The removed address's id.
    pub address_id: i64,
    /// The new default address, when the removed one was the default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_default_address_id: Option<i64>,
}

/// Remove a postal address from a user. Another address becomes the default if needed.
#[command(
    blocking,
    title = "Remove address",
    scopes("shop:admin"),
    contexts("back-office"),
    tags("crud", "mutation", "destructive"),
    mutation,
    destructive,
    confirm_prompt = "This will remove address {addressId} from user {userId}. Continue?",
    errors("NOT_FOUND")
)]
pub fn user_address_remove(
    input: RemoveAddress,
    ctx: &CommandContext,
) -> Result<AddressRemoved, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        require_user(conn, input.user_id)?;
        let was_default: bool = one(
            conn,
            "SELECT is_default FROM addresses WHERE id = ?1 AND user_id = ?2",
            params![input.address_id, input.user_id],
            |row| row.get(0),
        )?
        .ok_or_else(|| not_found("Address", input.address_id, "user-address-list"))?;
        conn.execute("DELETE FROM addresses WHERE id = ?1", [input.address_id])
            .db()?;
        let mut new_default_address_id = None;
        if was_default {
            new_default_address_id = one(
                conn,
                "UPDATE addresses SET is_default = 1
                 WHERE id = (SELECT min(id) FROM addresses WHERE user_id = ?1) RETURNING id",
                [input.user_id],
                |row| row.get(0),
            )?;
        }
        Ok(AddressRemoved {
            removed: true,
            address_id: input.address_id,
            new_default_address_id,
        })
    })
}
