//! Server configuration: typed JSON values with defaults.

use afd_runtime::prelude::*;
use rusqlite::{Connection, Row, params};

use super::store::{Db, ShopStore, all, not_found, now, one};

/// One configuration value.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigEntry {
    /// The key, like shipping.flat_rate_cents.
    pub key: String,
    /// The current value.
    pub value: Value,
    /// The value config-reset and config-restore put back.
    pub default_value: Value,
    /// Whether the value is the default.
    pub is_default: bool,
    /// What it controls.
    pub description: String,
    /// When it last changed (ISO 8601).
    pub updated_at: String,
}

const CONFIG_COLUMNS: &str = "key, value, default_value, description, updated_at";

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

fn entry_from_row(row: &Row<'_>) -> rusqlite::Result<ConfigEntry> {
    let value = parse(&row.get::<_, String>("value")?);
    let default_value = parse(&row.get::<_, String>("default_value")?);
    Ok(ConfigEntry {
        key: row.get("key")?,
        is_default: value == default_value,
        value,
        default_value,
        description: row.get("description")?,
        updated_at: row.get("updated_at")?,
    })
}

fn require_entry(conn: &Connection, key: &str) -> Result<ConfigEntry, CommandError> {
    one(
        conn,
        &format!("SELECT {CONFIG_COLUMNS} FROM config WHERE key = ?1"),
        [key],
        entry_from_row,
    )?
    .ok_or_else(|| not_found("Config key", key, "config-list"))
}

fn every_entry(conn: &Connection) -> Result<Vec<ConfigEntry>, CommandError> {
    all(
        conn,
        &format!("SELECT {CONFIG_COLUMNS} FROM config ORDER BY key"),
        [],
        entry_from_row,
    )
}

fn write(conn: &Connection, key: &str, value: &Value) -> Result<ConfigEntry, CommandError> {
    let at = now(conn)?;
    conn.execute(
        "UPDATE config SET value = ?2, updated_at = ?3 WHERE key = ?1",
        params![key, value.to_string(), at],
    )
    .db()?;
    require_entry(conn, key)
}

/// Input naming one key.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ConfigKey {
    /// The key, like shipping.flat_rate_cents (see config-list).
    #[schemars(length(min = 1, max = 100))]
    pub key: String,
}

/// Get one configuration value with its default.
#[command(
    title = "Get setting",
    scopes("shop:admin"),
    contexts("back-office", "audit"),
    tags("config", "read"),
    errors("NOT_FOUND")
)]
pub fn config_get(input: ConfigKey, ctx: &CommandContext) -> Result<ConfigEntry, CommandError> {
    require_entry(&ctx.state::<ShopStore>()?.read(), &input.key)
}

/// Input of `config-list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListConfig {
    /// Only keys starting with this, like shipping.
    pub prefix: Option<String>,
    /// Only values that differ from their default.
    #[serde(default)]
    pub changed_only: bool,
}

/// Configuration values, by key.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ConfigList {
    /// The entries, sorted by key.
    pub entries: Vec<ConfigEntry>,
}

/// List configuration values. Filter by key prefix, or to values changed from default.
#[command(
    title = "List settings",
    scopes("shop:admin"),
    contexts("back-office", "audit"),
    tags("config", "read")
)]
pub fn config_list(input: ListConfig, ctx: &CommandContext) -> Result<ConfigList, CommandError> {
    let conn = ctx.state::<ShopStore>()?.read();
    let entries = every_entry(&conn)?
        .into_iter()
        .filter(|entry| {
            input
                .prefix
                .as_deref()
                .is_none_or(|prefix| entry.key.starts_with(prefix))
                && (!input.changed_only || !entry.is_default)
        })
        .collect();
    Ok(ConfigList { entries })
}

/// Input of `config-set`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SetConfig {
    /// The key, like shipping.flat_rate_cents (see config-list).
    #[schemars(length(min = 1, max = 100))]
    pub key: String,
    /// The new value, of the same JSON type as the default.
    pub value: Value,
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn check_type(key: &str, default: &Value, value: &Value) -> Result<(), CommandError> {
    let expected = kind(default);
    let actual = kind(value);
    let fits = expected == actual || (expected == "number" && actual == "integer");
    if !fits {
        return Err(CommandError::new(
            "TYPE_MISMATCH",
            format!(
                "{key} takes a{} {expected}, not a{} {actual}",
                article(expected),
                article(actual)
            ),
        )
        .with_suggestion(format!("Pass a value like the default, {default}."))
        .with_retryable(false));
    }
    if value.as_f64().is_some_and(|number| number < 0.0) {
        return Err(
            CommandError::new("INVALID_VALUE", format!("{key} cannot be negative"))
                .with_suggestion(format!("Pass 0 or more; the default is {default}."))
                .with_retryable(false),
        );
    }
    Ok(())
}

fn article(kind: &str) -> &'static str {
    if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "n"
    } else {
        ""
    }
}

/// Set a configuration value. It must have the same JSON type as the default.
#[command(
    blocking,
    title = "Change setting",
    scopes("shop:admin"),
    contexts("back-office"),
    tags("config", "mutation"),
    mutation,
    idempotent,
    errors("NOT_FOUND", "TYPE_MISMATCH", "INVALID_VALUE")
)]
pub fn config_set(input: SetConfig, ctx: &CommandContext) -> Result<ConfigEntry, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let entry = require_entry(conn, &input.key)?;
        check_type(&input.key, &entry.default_value, &input.value)?;
        write(conn, &input.key, &input.value)
    })
}

/// Put one configuration value back to its default.
#[command(
    blocking,
    title = "Restore setting",
    scopes("shop:admin"),
    contexts("back-office"),
    tags("config", "mutation"),
    mutation,
    idempotent,
    errors("NOT_FOUND")
)]
pub fn config_restore(input: ConfigKey, ctx: &CommandContext) -> Result<ConfigEntry, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let entry = require_entry(conn, &input.key)?;
        if entry.is_default {
            return Ok(entry);
        }
        write(conn, &input.key, &entry.default_value)
    })
}

/// Result of `config-reset`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigReset {
    /// Keys whose value changed back to the default.
    pub changed_keys: Vec<String>,
    /// Every entry afterwards.
    pub entries: Vec<ConfigEntry>,
}

/// Reset server configuration. Every value goes back to its default.
#[command(
    blocking,
    title = "Reset settings",
    scopes("shop:admin"),
    contexts("back-office"),
    tags("config", "admin", "mutation", "destructive"),
    mutation,
    idempotent,
    destructive,
    confirm_prompt = "This will reset every configuration value to its default. Continue?"
)]
pub fn config_reset(ctx: &CommandContext) -> Result<ConfigReset, CommandError> {
    ctx.state::<ShopStore>()?.transaction(|conn| {
        let mut changed_keys = Vec::new();
        for entry in every_entry(conn)? {
            if !entry.is_default {
                write(conn, &entry.key, &entry.default_value)?;
                changed_keys.push(entry.key);
            }
        }
        Ok(ConfigReset {
            changed_keys,
            entries: every_entry(conn)?,
        })
    })
}
