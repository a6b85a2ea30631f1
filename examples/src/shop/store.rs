//! The shop store: SQLite through rusqlite (bundled), one writer connection and, on a
//! database file, a small pool of read-only connections in WAL mode, with the schema, a
//! small seed data set and the helpers the command modules share.
//!
//! The pattern to copy for a data layer:
//! - reads take a connection of their own ([`ShopStore::read`]): in WAL mode readers run
//!   side by side and never wait for the writer, and there are more of them than async
//!   workers, so a quick read (a lookup, a page of a list: tens of µs) never waits at all
//!   and runs inline, as a plain `fn` command;
//! - writes go through the one writer ([`ShopStore::conn`], [`ShopStore::transaction`]),
//!   serialised in the process rather than retried on `SQLITE_BUSY`; they wait for each
//!   other and for the disk, so they are `#[command(blocking)]` and wait on the blocking
//!   pool, never on an async worker; so are the reports, which scan whole tables;
//! - statements are prepared once per connection and cached (`prepare_cached`, in the
//!   helpers [`one`], [`all`] and [`scalar`]) and kept prepared whatever is bound (QPSG,
//!   see [`sqlite::statements`]): SQLite parses each query once, not per call.
//!
//! Why not every handler on the blocking pool: handing a call to the pool and back costs
//! two thread switches, about 50 µs of CPU a call on the 2-core machine the benchmarks run
//! on, more than a quick read itself (BENCHMARKS.md, "The shop's own commands").

use std::fmt::Display;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use afd_runtime::CommandError;
use rusqlite::{Connection, OptionalExtension, Params, Row};
use serde_json::Value;

use crate::sqlite::{self, Readers, lock};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS users (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL,
    email       TEXT NOT NULL UNIQUE COLLATE NOCASE,
    role        TEXT NOT NULL DEFAULT 'customer' CHECK (role IN ('customer', 'staff')),
    status      TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS addresses (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    label       TEXT NOT NULL,
    line1       TEXT NOT NULL,
    city        TEXT NOT NULL,
    postal_code TEXT NOT NULL,
    country     TEXT NOT NULL,
    is_default  INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS products (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    sku          TEXT NOT NULL UNIQUE COLLATE NOCASE,
    name         TEXT NOT NULL,
    description  TEXT,
    category     TEXT NOT NULL,
    price_cents  INTEGER NOT NULL CHECK (price_cents >= 0),
    weight_grams INTEGER NOT NULL DEFAULT 0 CHECK (weight_grams >= 0),
    active       INTEGER NOT NULL DEFAULT 1,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS inventory (
    product_id    INTEGER PRIMARY KEY REFERENCES products(id) ON DELETE CASCADE,
    on_hand       INTEGER NOT NULL DEFAULT 0 CHECK (on_hand >= 0),
    reserved      INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0),
    reorder_level INTEGER NOT NULL DEFAULT 5 CHECK (reorder_level >= 0),
    updated_at    TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS stock_movements (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    product_id  INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
    delta       INTEGER NOT NULL,
    reason      TEXT NOT NULL,
    reference   TEXT,
    created_at  TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS coupons (
    code             TEXT PRIMARY KEY COLLATE NOCASE,
    kind             TEXT NOT NULL CHECK (kind IN ('percent', 'fixed')),
    value            INTEGER NOT NULL CHECK (value > 0),
    min_subtotal_cents INTEGER NOT NULL DEFAULT 0,
    max_redemptions  INTEGER,
    times_redeemed   INTEGER NOT NULL DEFAULT 0,
    expires_at       TEXT,
    active           INTEGER NOT NULL DEFAULT 1,
    created_at       TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS orders (
    id             TEXT PRIMARY KEY,
    user_id        INTEGER REFERENCES users(id) ON DELETE SET NULL,
    status         TEXT NOT NULL CHECK (status IN
                   ('pending', 'paid', 'shipped', 'delivered', 'cancelled', 'refunded')),
    subtotal_cents INTEGER NOT NULL,
    discount_cents INTEGER NOT NULL DEFAULT 0,
    shipping_cents INTEGER NOT NULL DEFAULT 0,
    tax_cents      INTEGER NOT NULL DEFAULT 0,
    total_cents    INTEGER NOT NULL,
    coupon_code    TEXT,
    note           TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS order_items (
    order_id         TEXT NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
    product_id       INTEGER NOT NULL REFERENCES products(id),
    quantity         INTEGER NOT NULL CHECK (quantity > 0),
    unit_price_cents INTEGER NOT NULL,
    PRIMARY KEY (order_id, product_id)
);

CREATE TABLE IF NOT EXISTS payments (
    id             TEXT PRIMARY KEY,
    order_id       TEXT NOT NULL REFERENCES orders(id),
    method         TEXT NOT NULL CHECK (method IN ('card', 'paypal', 'bank_transfer')),
    amount_cents   INTEGER NOT NULL CHECK (amount_cents > 0),
    refunded_cents INTEGER NOT NULL DEFAULT 0,
    status         TEXT NOT NULL CHECK (status IN
                   ('authorized', 'captured', 'voided', 'partially_refunded', 'refunded')),
    created_at     TEXT NOT NULL,
    captured_at    TEXT
);

CREATE TABLE IF NOT EXISTS refunds (
    id           TEXT PRIMARY KEY,
    payment_id   TEXT NOT NULL REFERENCES payments(id),
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    reason       TEXT NOT NULL,
    created_at   TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS shipments (
    id              TEXT PRIMARY KEY,
    order_id        TEXT NOT NULL REFERENCES orders(id),
    carrier         TEXT NOT NULL,
    service         TEXT NOT NULL,
    tracking_number TEXT NOT NULL,
    cost_cents      INTEGER NOT NULL,
    status          TEXT NOT NULL CHECK (status IN
                    ('label_created', 'in_transit', 'delivered', 'voided')),
    created_at      TEXT NOT NULL,
    delivered_at    TEXT
);

CREATE TABLE IF NOT EXISTS plans (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    price_cents INTEGER NOT NULL,
    interval    TEXT NOT NULL CHECK (interval IN ('month', 'year'))
);

CREATE TABLE IF NOT EXISTS subscriptions (
    id                 TEXT PRIMARY KEY,
    user_id            INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    plan_id            TEXT NOT NULL REFERENCES plans(id),
    status             TEXT NOT NULL CHECK (status IN ('active', 'paused', 'cancelled')),
    started_at         TEXT NOT NULL,
    current_period_end TEXT NOT NULL,
    ended_at           TEXT
);

CREATE TABLE IF NOT EXISTS reviews (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    product_id        INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
    user_id           INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    rating            INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 5),
    title             TEXT NOT NULL,
    body              TEXT,
    status            TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
    moderation_note   TEXT,
    verified_purchase INTEGER NOT NULL DEFAULT 0,
    created_at        TEXT NOT NULL,
    UNIQUE (product_id, user_id)
);

CREATE TABLE IF NOT EXISTS cart_items (
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    product_id INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
    quantity   INTEGER NOT NULL CHECK (quantity > 0),
    added_at   TEXT NOT NULL,
    PRIMARY KEY (user_id, product_id)
);

CREATE TABLE IF NOT EXISTS config (
    key           TEXT PRIMARY KEY,
    value         TEXT NOT NULL,
    default_value TEXT NOT NULL,
    description   TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
";

/// A small, realistic data set: five users (user 42 is Alice), seven products, five orders
/// in every stage, payments, shipments, plans and subscriptions, reviews, coupons, carts and
/// the configuration. History has fixed dates; what must stay current (a coupon's end, the
/// active subscription's period) is relative to now.
const SEED: &str = "
INSERT INTO users (id, name, email, role, status, created_at, updated_at) VALUES
    (40, 'Bob',   'bob@example.com',   'customer', 'active',    '2025-09-02T09:12:00.000Z', '2025-09-02T09:12:00.000Z'),
    (41, 'Priya', 'priya@example.com', 'staff',    'active',    '2025-09-05T14:30:00.000Z', '2025-09-05T14:30:00.000Z'),
    (42, 'Alice', 'alice@example.com', 'customer', 'active',    '2025-10-11T18:45:00.000Z', '2025-10-11T18:45:00.000Z'),
    (43, 'Chen',  'chen@example.com',  'customer', 'active',    '2025-11-20T08:05:00.000Z', '2025-11-20T08:05:00.000Z'),
    (44, 'Dana',  'dana@example.com',  'customer', 'suspended', '2025-12-01T11:00:00.000Z', '2026-01-04T10:00:00.000Z');

INSERT INTO addresses (user_id, label, line1, city, postal_code, country, is_default) VALUES
    (42, 'home', '12 Harbour Street',   'Portland', '97201', 'US', 1),
    (42, 'work', '400 Market Plaza',    'Portland', '97204', 'US', 0),
    (40, 'home', '88 Elm Avenue',       'Austin',   '78701', 'US', 1),
    (43, 'home', '5 Maple Court',       'Toronto',  'M5V 2T6', 'CA', 1);

INSERT INTO products (id, sku, name, description, category, price_cents, weight_grams, active, created_at, updated_at) VALUES
    (1, 'TSH-001', 'Organic Cotton T-Shirt', 'Heavyweight organic cotton tee.',     'apparel',     2400, 180, 1, '2025-08-01T10:00:00.000Z', '2025-08-01T10:00:00.000Z'),
    (2, 'HOD-002', 'Merino Hoodie',          'Midweight merino wool hoodie.',       'apparel',     8900, 600, 1, '2025-08-01T10:00:00.000Z', '2025-08-01T10:00:00.000Z'),
    (3, 'MUG-003', 'Stoneware Mug',          'Hand-glazed 350 ml mug.',             'home',        1800, 400, 1, '2025-08-03T10:00:00.000Z', '2025-08-03T10:00:00.000Z'),
    (4, 'BTL-004', 'Insulated Water Bottle', 'Keeps drinks cold for 24 hours.',     'outdoor',     3200, 350, 1, '2025-08-03T10:00:00.000Z', '2025-08-03T10:00:00.000Z'),
    (5, 'BAG-005', 'Canvas Tote Bag',        'Waxed canvas tote with inner pocket.', 'accessories', 1500, 200, 1, '2025-08-10T10:00:00.000Z', '2025-08-10T10:00:00.000Z'),
    (6, 'CAP-006', 'Retro Cap',              'Six-panel cotton cap.',               'accessories', 2000,  90, 0, '2025-08-10T10:00:00.000Z', '2025-12-15T10:00:00.000Z'),
    (7, 'NTB-007', 'Dotted Notebook',        'A5 notebook, 160 dotted pages.',      'stationery',  1200, 250, 1, '2025-08-12T10:00:00.000Z', '2025-08-12T10:00:00.000Z');

INSERT INTO inventory (product_id, on_hand, reserved, reorder_level, updated_at) VALUES
    (1, 120, 2, 20, '2026-01-10T12:00:00.000Z'),
    (2,   8, 0, 10, '2026-01-02T12:00:00.000Z'),
    (3,  45, 1, 10, '2026-01-10T12:00:00.000Z'),
    (4,   3, 1,  5, '2026-01-12T16:40:00.000Z'),
    (5,  60, 1, 10, '2026-01-12T16:40:00.000Z'),
    (6,   0, 0,  0, '2025-12-15T10:00:00.000Z'),
    (7, 197, 0, 25, '2026-01-08T12:00:00.000Z');

INSERT INTO stock_movements (product_id, delta, reason, reference, created_at) VALUES
    (1, 120, 'restock',  'PO-7781',  '2025-08-01T10:00:00.000Z'),
    (2,   9, 'restock',  'PO-7781',  '2025-08-01T10:00:00.000Z'),
    (3,  45, 'restock',  'PO-7790',  '2025-08-03T10:00:00.000Z'),
    (4,   4, 'restock',  'PO-7790',  '2025-08-03T10:00:00.000Z'),
    (5,  60, 'restock',  'PO-7802',  '2025-08-10T10:00:00.000Z'),
    (7, 200, 'restock',  'PO-7810',  '2025-08-12T10:00:00.000Z'),
    (2,  -1, 'shipment', 'ord-1002', '2026-01-02T12:00:00.000Z'),
    (7,  -3, 'shipment', 'ord-1004', '2026-01-08T12:00:00.000Z'),
    (4,  -1, 'damaged',  NULL,       '2026-01-12T12:00:00.000Z');

INSERT INTO coupons (code, kind, value, min_subtotal_cents, max_redemptions, times_redeemed, expires_at, active, created_at) VALUES
    ('WELCOME10', 'percent', 10,    0, 1000, 1, NULL,                         1, '2025-08-01T10:00:00.000Z'),
    ('SAVE5',     'fixed',  500, 3000,  200, 0, date('now', '+180 days'),   1, '2025-10-01T10:00:00.000Z'),
    ('SUMMER25',  'percent', 25,    0,  100, 37, '2025-09-01',               0, '2025-06-01T10:00:00.000Z');

INSERT INTO orders (id, user_id, status, subtotal_cents, discount_cents, shipping_cents, tax_cents, total_cents, coupon_code, note, created_at, updated_at) VALUES
    ('ord-1001', 42, 'pending',   6600,   0,   0, 528, 7128, NULL,        'Gift wrap, please.', '2026-01-10T12:00:00.000Z', '2026-01-10T12:00:00.000Z'),
    ('ord-1002', 42, 'delivered', 8900, 890,   0, 641, 8651, 'WELCOME10', NULL,                 '2026-01-02T09:30:00.000Z', '2026-01-06T15:20:00.000Z'),
    ('ord-1003', 40, 'paid',      4700,   0, 599, 376, 5675, NULL,        NULL,                 '2026-01-12T16:40:00.000Z', '2026-01-12T16:45:00.000Z'),
    ('ord-1004', 43, 'shipped',   3600,   0, 599, 288, 4487, NULL,        NULL,                 '2026-01-07T10:10:00.000Z', '2026-01-08T12:00:00.000Z'),
    ('ord-1005', 40, 'cancelled', 1800,   0, 599, 144, 2543, NULL,        NULL,                 '2025-12-20T19:00:00.000Z', '2025-12-20T21:00:00.000Z');

INSERT INTO order_items (order_id, product_id, quantity, unit_price_cents) VALUES
    ('ord-1001', 1, 2, 2400),
    ('ord-1001', 3, 1, 1800),
    ('ord-1002', 2, 1, 8900),
    ('ord-1003', 4, 1, 3200),
    ('ord-1003', 5, 1, 1500),
    ('ord-1004', 7, 3, 1200),
    ('ord-1005', 3, 1, 1800);

INSERT INTO payments (id, order_id, method, amount_cents, refunded_cents, status, created_at, captured_at) VALUES
    ('pay-3001', 'ord-1002', 'card',   8651, 0, 'captured', '2026-01-02T09:31:00.000Z', '2026-01-02T09:31:00.000Z'),
    ('pay-3002', 'ord-1003', 'paypal', 5675, 0, 'captured', '2026-01-12T16:45:00.000Z', '2026-01-12T16:45:00.000Z'),
    ('pay-3003', 'ord-1004', 'card',   4487, 0, 'captured', '2026-01-07T10:11:00.000Z', '2026-01-07T10:11:00.000Z');

INSERT INTO shipments (id, order_id, carrier, service, tracking_number, cost_cents, status, created_at, delivered_at) VALUES
    ('shp-4001', 'ord-1002', 'ups',  'standard', '1Z4001US0000000001', 599, 'delivered',  '2026-01-02T12:00:00.000Z', '2026-01-06T15:20:00.000Z'),
    ('shp-4002', 'ord-1004', 'usps', 'standard', '9400400200000000002', 599, 'in_transit', '2026-01-08T12:00:00.000Z', NULL);

INSERT INTO plans (id, name, price_cents, interval) VALUES
    ('basic',       'Basic Box',   1500, 'month'),
    ('plus',        'Plus Box',    2900, 'month'),
    ('annual-plus', 'Annual Plus', 29900, 'year');

INSERT INTO subscriptions (id, user_id, plan_id, status, started_at, current_period_end, ended_at) VALUES
    ('sub-2001', 42, 'plus',        'active',    '2025-11-01T00:00:00.000Z', strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+12 days'), NULL),
    ('sub-2002', 40, 'basic',       'paused',    '2025-09-15T00:00:00.000Z', '2026-01-15T00:00:00.000Z', NULL),
    ('sub-2003', 43, 'annual-plus', 'cancelled', '2024-12-01T00:00:00.000Z', '2025-12-01T00:00:00.000Z', '2025-11-28T09:00:00.000Z');

INSERT INTO reviews (product_id, user_id, rating, title, body, status, verified_purchase, created_at) VALUES
    (2, 42, 5, 'Warm and soft',      'Wore it all winter; no pilling yet.', 'approved', 1, '2026-01-08T20:00:00.000Z'),
    (1, 40, 4, 'Great fit',          'Runs slightly large.',                'approved', 0, '2025-10-02T12:00:00.000Z'),
    (7, 43, 2, 'Pages bleed through', 'Fountain pen ink shows through.',    'pending',  0, '2026-01-11T09:00:00.000Z');

INSERT INTO cart_items (user_id, product_id, quantity, added_at) VALUES
    (40, 2, 1, '2026-01-13T08:00:00.000Z'),
    (40, 7, 2, '2026-01-13T08:02:00.000Z'),
    (43, 3, 1, '2025-12-28T22:15:00.000Z');

INSERT INTO config (key, value, default_value, description, updated_at) VALUES
    ('store.name',                       '\"Northwind Goods\"', '\"My Shop\"', 'Store name on invoices and emails.',                 '2025-08-01T10:00:00.000Z'),
    ('store.currency',                   '\"USD\"',             '\"USD\"',     'ISO 4217 currency of every amount.',                 '2025-08-01T10:00:00.000Z'),
    ('shipping.flat_rate_cents',         '599',                 '599',         'Standard shipping price.',                           '2025-08-01T10:00:00.000Z'),
    ('shipping.free_threshold_cents',    '5000',                '5000',        'Order value from which standard shipping is free.',  '2025-08-01T10:00:00.000Z'),
    ('shipping.express_surcharge_cents', '1200',                '1200',        'Extra charge for express delivery.',                 '2025-08-01T10:00:00.000Z'),
    ('tax.rate_percent',                 '8.0',                 '8.0',         'Sales tax on the discounted subtotal.',              '2025-08-01T10:00:00.000Z'),
    ('orders.max_quantity_per_item',     '10',                  '20',          'Most units of one product in a single order.',       '2025-09-01T10:00:00.000Z'),
    ('inventory.default_reorder_level',  '5',                   '5',           'Reorder level given to new products.',               '2025-08-01T10:00:00.000Z'),
    ('reviews.auto_approve',             'false',               'false',       'Publish new reviews without moderation.',            '2025-08-01T10:00:00.000Z');
";

/// ISO 8601 with milliseconds, in UTC, computed by SQLite.
pub const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

/// Statements each connection keeps prepared: more than the shop's distinct queries.
const STATEMENT_CACHE: usize = 256;

/// The shop store, shared with every command through the context.
pub struct ShopStore {
    /// The one connection that writes.
    conn: Mutex<Connection>,
    /// Read-only connections on a file (none in memory).
    readers: Readers,
}

impl ShopStore {
    /// Opens (or creates) a database file; a new file gets the schema and the seed data.
    ///
    /// # Errors
    ///
    /// The file cannot be opened or initialised.
    pub fn open(path: impl AsRef<Path>) -> rusqlite::Result<Self> {
        // Replicas of the shop may share one file: readers never wait for the writer, and
        // a writer waits its turn rather than fail.
        let mut store = Self::init(sqlite::writer(path.as_ref())?)?;
        store.readers = Readers::open(path.as_ref(), STATEMENT_CACHE)?;
        Ok(store)
    }

    /// A fresh in-memory store with the seed data.
    ///
    /// # Errors
    ///
    /// SQLite could not be initialised.
    pub fn in_memory() -> rusqlite::Result<Self> {
        Self::init(Connection::open_in_memory()?)
    }

    fn init(mut conn: Connection) -> rusqlite::Result<Self> {
        // Outside any transaction (inside one SQLite ignores it).
        conn.execute_batch("PRAGMA foreign_keys = ON")?;
        sqlite::statements(&conn, STATEMENT_CACHE)?;
        // The schema, the check and the seed under the write lock, taken up front: replicas
        // opening a new file at once wait their turn, and only the first seeds it.
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        tx.execute_batch(SCHEMA)?;
        let users: i64 = tx.query_row("SELECT count(*) FROM users", [], |row| row.get(0))?;
        if users == 0 {
            tx.execute_batch(SEED)?;
        }
        tx.commit()?;
        Ok(ShopStore {
            conn: Mutex::new(conn),
            readers: Readers::default(),
        })
    }

    /// The writer connection, locked for the duration of one command: what a command that
    /// changes data uses.
    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        lock(&self.conn)
    }

    /// A connection for a command that only reads: a free one of the read connections
    /// (waiting for one when all are busy), or the writer when there are none (in memory).
    pub(crate) fn read(&self) -> MutexGuard<'_, Connection> {
        self.readers.get(&self.conn)
    }

    /// Runs `work` in a transaction: committed when it returns `Ok`, rolled back otherwise.
    /// It takes the write lock as it begins (`BEGIN IMMEDIATE`), waiting for it up to the
    /// busy timeout: a deferred transaction that reads first and then writes is refused at
    /// once with "database is locked" when a read connection holds the lock for a moment,
    /// as SQLite does not wait on behalf of a transaction that already reads.
    pub(crate) fn transaction<T>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T, CommandError>,
    ) -> Result<T, CommandError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .db()?;
        let value = work(&tx)?;
        tx.commit().db()?;
        Ok(value)
    }
}

/// A storage failure, reported to agents as a retryable `STORAGE_ERROR`.
pub(crate) fn storage(error: rusqlite::Error) -> CommandError {
    CommandError::new("STORAGE_ERROR", format!("the shop store failed: {error}"))
        .with_suggestion("Retry the call; if it keeps failing, check the database file.")
        .with_retryable(true)
}

/// `.db()?`: rusqlite results into command errors.
pub(crate) trait Db<T> {
    fn db(self) -> Result<T, CommandError>;
}

impl<T> Db<T> for rusqlite::Result<T> {
    fn db(self) -> Result<T, CommandError> {
        self.map_err(storage)
    }
}

/// `NOT_FOUND` for a `kind` with `id`, pointing at the command that lists them.
pub(crate) fn not_found(kind: &str, id: impl Display, list_command: &str) -> CommandError {
    CommandError::new("NOT_FOUND", format!("{kind} '{id}' not found"))
        .with_suggestion(format!(
            "Call {list_command} to find a valid {} id.",
            kind.to_lowercase()
        ))
        .with_retryable(false)
}

/// `INVALID_STATE`: the record exists but is in the wrong state for this operation.
pub(crate) fn invalid_state(
    message: impl Into<String>,
    suggestion: impl Into<String>,
) -> CommandError {
    CommandError::new("INVALID_STATE", message)
        .with_suggestion(suggestion)
        .with_retryable(false)
}

/// `CONFLICT`: the operation clashes with existing data.
pub(crate) fn conflict(message: impl Into<String>, suggestion: impl Into<String>) -> CommandError {
    CommandError::new("CONFLICT", message)
        .with_suggestion(suggestion)
        .with_retryable(false)
}

/// `NO_CHANGES`: an update named no field to change.
pub(crate) fn no_changes(fields: &str) -> CommandError {
    CommandError::new("NO_CHANGES", "No fields to update were provided")
        .with_suggestion(format!("Pass at least one of {fields}."))
        .with_retryable(false)
}

/// One row, or `None`.
pub(crate) fn one<T, P: Params>(
    conn: &Connection,
    sql: &str,
    params: P,
    map: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
) -> Result<Option<T>, CommandError> {
    conn.prepare_cached(sql)
        .and_then(|mut statement| statement.query_row(params, map))
        .optional()
        .db()
}

/// Every row.
pub(crate) fn all<T, P: Params>(
    conn: &Connection,
    sql: &str,
    params: P,
    map: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>, CommandError> {
    let mut statement = conn.prepare_cached(sql).db()?;
    statement
        .query_map(params, map)
        .and_then(Iterator::collect::<rusqlite::Result<Vec<T>>>)
        .db()
}

/// A single scalar (a count, a sum).
pub(crate) fn scalar<T: rusqlite::types::FromSql, P: Params>(
    conn: &Connection,
    sql: &str,
    params: P,
) -> Result<T, CommandError> {
    conn.prepare_cached(sql)
        .and_then(|mut statement| statement.query_row(params, |row| row.get(0)))
        .db()
}

/// The next id of a table whose ids are `prefix` + a number (`ord-1006`).
pub(crate) fn next_id(
    conn: &Connection,
    table: &str,
    prefix: &str,
    first: i64,
) -> Result<String, CommandError> {
    let start = prefix.len() + 1;
    let next: i64 = scalar(
        conn,
        &format!("SELECT coalesce(max(CAST(substr(id, {start}) AS INTEGER)) + 1, ?1) FROM {table}"),
        [first],
    )?;
    Ok(format!("{prefix}{next}"))
}

/// The current timestamp, as SQLite computes it.
pub(crate) fn now(conn: &Connection) -> Result<String, CommandError> {
    scalar(conn, &format!("SELECT {NOW}"), [])
}

/// A configuration value.
pub(crate) fn config_value(conn: &Connection, key: &str) -> Result<Value, CommandError> {
    let text: String = one(
        conn,
        "SELECT value FROM config WHERE key = ?1",
        [key],
        |row| row.get(0),
    )?
    .ok_or_else(|| not_found("Config key", key, "config-list"))?;
    serde_json::from_str(&text).map_err(|error| {
        CommandError::internal(format!("config key '{key}' holds invalid JSON: {error}"))
    })
}

/// A numeric configuration value, as an integer.
pub(crate) fn config_i64(conn: &Connection, key: &str) -> Result<i64, CommandError> {
    let value = config_value(conn, key)?;
    value
        .as_i64()
        .or_else(|| value.as_f64().map(|number| number.round() as i64))
        .ok_or_else(|| CommandError::internal(format!("config key '{key}' is not a number")))
}

/// A numeric configuration value.
pub(crate) fn config_f64(conn: &Connection, key: &str) -> Result<f64, CommandError> {
    config_value(conn, key)?
        .as_f64()
        .ok_or_else(|| CommandError::internal(format!("config key '{key}' is not a number")))
}

/// A boolean configuration value.
pub(crate) fn config_bool(conn: &Connection, key: &str) -> Result<bool, CommandError> {
    config_value(conn, key)?
        .as_bool()
        .ok_or_else(|| CommandError::internal(format!("config key '{key}' is not a boolean")))
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Barrier};

    use super::ShopStore;

    fn users(store: &ShopStore) -> i64 {
        store
            .conn()
            .query_row("SELECT count(*) FROM users", [], |row| row.get(0))
            .unwrap()
    }

    /// Replicas started at once on a new file: each opens it, exactly one seeds it.
    #[test]
    fn replicas_opening_a_new_file_at_once_seed_it_once() {
        let seeded = users(&ShopStore::in_memory().unwrap());
        let dir = std::env::temp_dir().join(format!("afd-shop-seed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for round in 0..20 {
            let path = dir.join(format!("shop-{round}.sqlite3"));
            let barrier = Arc::new(Barrier::new(4));
            let openers: Vec<_> = (0..4)
                .map(|_| {
                    let (path, barrier) = (path.clone(), barrier.clone());
                    std::thread::spawn(move || {
                        barrier.wait();
                        ShopStore::open(&path)
                    })
                })
                .collect();
            for opener in openers {
                let store = opener
                    .join()
                    .unwrap()
                    .expect("every replica opens the file");
                assert_eq!(users(&store), seeded, "round {round}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
