//! Generates the benchmark catalogs: real `#[command]` functions, each with a doc comment
//! and an input struct deriving `Deserialize` and `JsonSchema`, in one module per size with
//! a `COMMANDS` array for explicit registration.
//!
//! The catalog mirrors the reference server's `bench/shop.mjs`: the seed's eight example
//! commands, then `<category>-<verb>-<letters>` commands up to N, with the same names,
//! descriptions, categories, tags, mutation flags and input shapes.
//!
//! - sizes: 5 and 80; with the `full` feature also 500 and 2,000; with `n10000` also
//!   10,000 (its release build takes about 21 minutes and 16 GB of memory on 2 cores,
//!   see BENCHMARKS.md); `AFD_BENCH_SIZES=10000` (comma-separated) overrides the list.
//! - `AFD_BENCH_EDIT=<text>` appends `<text>` to the doc comment of one command of the
//!   largest catalog: how bench/compile-cost.sh times an incremental rebuild.
//! - The generated commands are spread over modules of [`PART`] commands (`n2000::p3::...`):
//!   an incremental build recompiles the code of the module an edit touched (one codegen
//!   unit per module), not the whole catalog.
//! - `AFD_BENCH_PLAIN=1` generates the same functions and input structs without
//!   `#[command]` (and empty `COMMANDS`): what the derives alone cost to compile, for
//!   bench/compile-cost.sh.

use std::fmt::Write as _;

#[path = "src/names.rs"]
mod names;
use names::{CATEGORIES, VERBS, letters};
use std::path::Path;

const SEED: &str = r#"
#[derive(Deserialize, JsonSchema)]
pub struct UserCreateInput {
    #[schemars(length(min = 1))]
    pub name: String,
    #[schemars(email)]
    pub email: String,
}

/// Create a new user account. Sends a welcome email.
#[::afd_runtime::command(category = "user", tags("crud", "write"), mutation)]
pub fn user_create(input: UserCreateInput) -> crate::shapes::User {
    crate::shapes::User::create(input.name, input.email)
}

#[derive(Deserialize, JsonSchema)]
pub struct UserGetInput {
    pub id: String,
}

/// Get a user by id.
#[::afd_runtime::command(category = "user", tags("crud", "read"), errors("NOT_FOUND"))]
pub fn user_get(input: UserGetInput) -> Result<crate::shapes::User, CommandError> {
    Err(crate::shapes::not_found("user", &input.id))
}

#[derive(Deserialize, JsonSchema)]
pub struct UserDeleteInput {
    pub id: String,
}

/// Delete a user permanently.
#[::afd_runtime::command(category = "user", tags("crud", "admin"), mutation, destructive)]
pub fn user_delete(input: UserDeleteInput) -> crate::shapes::Deleted {
    crate::shapes::Deleted { deleted: input.id }
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderCreateInput {
    pub user_id: String,
    #[schemars(length(min = 1))]
    pub items: Vec<String>,
}

/// Create an order for a user.
#[::afd_runtime::command(category = "order", tags("crud", "write"), mutation)]
pub fn order_create(input: OrderCreateInput) -> crate::shapes::Order {
    crate::shapes::Order::open(input.user_id, input.items)
}

#[derive(Deserialize, JsonSchema)]
pub struct OrderListInput {
    #[serde(default = "crate::shapes::default_limit")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: u32,
}

/// List orders, newest first.
#[::afd_runtime::command(category = "order", tags("crud", "read"))]
pub fn order_list(input: OrderListInput) -> Vec<crate::shapes::Order> {
    let _ = input.limit;
    Vec::new()
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderCancelInput {
    pub order_id: String,
}

/// Cancel an order and refund the payment.
#[::afd_runtime::command(
    category = "order",
    tags("billing"),
    mutation,
    destructive,
    confirm_prompt = "This will cancel order {orderId}. Continue?",
    errors("NOT_FOUND")
)]
pub fn order_cancel(input: OrderCancelInput) -> Result<crate::shapes::Order, CommandError> {
    Err(crate::shapes::not_found("order", &input.order_id))
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionCancelInput {
    pub subscription_id: String,
}

/// Cancel a subscription at the end of the period.
#[::afd_runtime::command(category = "payment", tags("billing"), mutation)]
pub fn subscription_cancel(input: SubscriptionCancelInput) -> crate::shapes::Subscription {
    crate::shapes::Subscription { subscription_id: input.subscription_id, status: "cancelling" }
}

#[derive(Deserialize, JsonSchema)]
pub struct ConfigResetInput {}

/// Reset the shop configuration to defaults.
#[::afd_runtime::command(category = "config", tags("admin"), mutation)]
pub fn config_reset(input: ConfigResetInput) -> crate::shapes::Reset {
    let ConfigResetInput {} = input;
    crate::shapes::Reset { reset: true }
}
"#;

const SEED_NAMES: [&str; 8] = [
    "user_create",
    "user_get",
    "user_delete",
    "order_create",
    "order_list",
    "order_cancel",
    "subscription_cancel",
    "config_reset",
];

fn camel(snake: &str) -> String {
    snake
        .split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

fn capitalised(word: &str) -> String {
    camel(word)
}

/// Generated commands per module.
const PART: usize = 100;

/// One module's source: the commands of a catalog of `n` and its `COMMANDS` array.
fn catalog(n: usize, edit: Option<&str>, plain: bool) -> String {
    let mut src = String::from(
        "// @generated by bench/build.rs: do not edit.\n#[allow(unused_imports)]\nuse afd_runtime::prelude::*;\n",
    );
    let seeds = n.min(SEED_NAMES.len());
    if plain {
        let mut in_attribute = false;
        for line in SEED.lines() {
            in_attribute |= line.starts_with("#[::afd_runtime::command");
            if !in_attribute {
                src.push_str(line);
                src.push('\n');
            }
            in_attribute &= !line.ends_with(")]");
        }
    } else {
        src.push_str(SEED);
    }
    let mut names: Vec<String> = SEED_NAMES[..seeds].iter().map(|s| s.to_string()).collect();
    // The seed is always compiled (so every catalog shares its types); smaller catalogs
    // register only the first `n` of it, as the reference lists only what fits.
    let edited = n.saturating_sub(1).max(SEED_NAMES.len());
    let mut i = 0;
    while names.len() < n {
        let category = CATEGORIES[i % CATEGORIES.len()];
        let verb = VERBS[(i / CATEGORIES.len()) % VERBS.len()];
        let suffix = letters(i);
        let mutation = matches!(verb, "update" | "archive" | "tag");
        let ident = format!("{category}_{verb}_{suffix}");
        let input = format!("{}Input", camel(&ident));
        let access = if mutation { "write" } else { "read" };
        let mut doc = format!(
            "{} {category} records (variant {suffix}). Returns the matching {category} entries.",
            capitalised(verb)
        );
        if let (Some(text), true) = (edit, names.len() == edited) {
            write!(doc, " {text}").unwrap();
        }
        let flags = if mutation { ", mutation" } else { "" };
        let part = i / PART;
        if i % PART == 0 {
            if i > 0 {
                src.push_str("}\n");
            }
            write!(
                src,
                "\npub mod p{part} {{\n#[allow(unused_imports)]\nuse afd_runtime::prelude::*;\n"
            )
            .unwrap();
        }
        let attr = if plain {
            String::new()
        } else {
            format!(
                "#[::afd_runtime::command(category = \"{category}\", tags(\"{access}\", \"{category}\"){flags})]"
            )
        };
        write!(
            src,
            r#"
#[derive(Deserialize, JsonSchema)]
pub struct {input} {{
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub query: Option<String>,
    #[serde(default = "crate::shapes::default_limit")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: u32,
}}

/// {doc}
{attr}
pub fn {ident}(input: {input}) -> crate::shapes::Echo {{
    crate::shapes::Echo::new("{category}-{verb}-{suffix}", input.id, input.query, input.limit)
}}
"#
        )
        .unwrap();
        names.push(format!("p{part}::{ident}"));
        i += 1;
    }
    if i > 0 {
        src.push_str("}\n");
    }
    src.push_str(
        "\n/// Every command of this catalog, for `Registry::builder().register_all(...)`.\n",
    );
    if plain {
        src.push_str("pub const COMMANDS: &[&::afd_runtime::CommandDef] = &[\n");
    } else {
        writeln!(
            src,
            "pub const COMMANDS: &[&::afd_runtime::CommandDef; {n}] = &["
        )
        .unwrap();
        for name in &names {
            writeln!(src, "    {name}::COMMAND,").unwrap();
        }
    }
    src.push_str("];\n");
    src
}

fn write_if_changed(path: &Path, contents: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(contents) {
        std::fs::write(path, contents).expect("write to OUT_DIR");
    }
}

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=AFD_BENCH_SIZES");
    println!("cargo::rerun-if-env-changed=AFD_BENCH_EDIT");
    println!("cargo::rerun-if-env-changed=AFD_BENCH_PLAIN");
    let plain = std::env::var_os("AFD_BENCH_PLAIN").is_some_and(|v| !v.is_empty() && v != "0");
    let full = std::env::var_os("CARGO_FEATURE_FULL").is_some();
    let huge = std::env::var_os("CARGO_FEATURE_N10000").is_some();
    let mut sizes: Vec<usize> = match std::env::var("AFD_BENCH_SIZES") {
        Ok(list) if !list.trim().is_empty() => list
            .split(',')
            .map(|s| {
                s.trim()
                    .parse()
                    .expect("AFD_BENCH_SIZES: comma-separated numbers")
            })
            .collect(),
        _ => {
            let mut sizes = vec![5, 80];
            if full {
                sizes.extend([500, 2000]);
            }
            if huge {
                sizes.push(10_000);
            }
            sizes
        }
    };
    sizes.sort_unstable();
    sizes.dedup();
    let edit = std::env::var("AFD_BENCH_EDIT").ok();
    let largest = sizes.last().copied().unwrap_or_default();
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out);
    let mut index = String::from("// @generated by bench/build.rs: do not edit.\n");
    for &n in &sizes {
        let file = format!("n{n}.rs");
        let edit = edit.as_deref().filter(|_| n == largest);
        write_if_changed(&out.join(&file), &catalog(n, edit, plain));
        writeln!(
            index,
            "/// The generated catalog of {n} commands.\npub mod n{n} {{\n    include!(concat!(env!(\"OUT_DIR\"), \"/{file}\"));\n}}"
        )
        .unwrap();
    }
    index.push_str("\n/// Each generated catalog: its size and its commands.\npub const CATALOGS: &[(usize, &[&::afd_runtime::CommandDef])] = &[\n");
    for &n in &sizes {
        writeln!(index, "    ({n}, n{n}::COMMANDS),").unwrap();
    }
    index.push_str("];\n");
    write_if_changed(&out.join("catalogs.rs"), &index);
}
