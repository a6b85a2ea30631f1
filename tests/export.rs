//! The catalog exported as a folder tree: one JSON file per
//! command under its category, a JSON index and a Markdown index, deterministic.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use afd_runtime::export::{
    INDEX_FILE, README_FILE, command_definition, export_tree, export_tree_with,
};
use afd_runtime::prelude::*;
use afd_runtime::{CategoryDef, CommandDef, HandlerFuture, SourceLocation};

#[derive(Deserialize, JsonSchema)]
struct NewNote {
    /// The note's text.
    text: String,
}

#[derive(Serialize, JsonSchema)]
struct Note {
    id: u64,
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct NoteId {
    id: u64,
}

/// Create a note. The text is stored as given.
#[command(category = "notes", tags("crud"), mutation, aliases("note-add"))]
fn note_create(input: NewNote) -> Note {
    Note {
        id: 1,
        text: input.text,
    }
}

/// List every note.
#[command(category = "notes", tags("crud", "read"))]
fn note_list() -> Vec<String> {
    Vec::new()
}

/// Delete a note for good.
#[command(
    category = "notes",
    mutation,
    destructive,
    confirm_prompt = "Delete note {id}?",
    errors("NOT_FOUND"),
    execution_time = "fast",
    version = "1.1.0"
)]
fn note_delete(input: NoteId) -> u64 {
    input.id
}

/// Report the server's health.
#[command(expose(mcp = false))]
fn health_check() -> bool {
    true
}

static NOTES: CategoryDef = CategoryDef::new("notes", "Notes: write, list and delete them.");

fn registry() -> Registry {
    Registry::builder()
        .register(note_create::COMMAND)
        .register(note_list::COMMAND)
        .register(note_delete::COMMAND)
        .register(health_check::COMMAND)
        .category(&NOTES)
        .build()
        .unwrap()
}

fn temp_dir(name: &str) -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "afd-export-test-{}-{}-{name}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&dir);
    dir
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

/// Every file under `dir`, relative, sorted, with its bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let bytes = fs::read(&path).unwrap();
                out.push((path.strip_prefix(root).unwrap().to_path_buf(), bytes));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn writes_one_file_per_command_under_its_category() {
    let dir = temp_dir("tree");
    let summary = export_tree(&registry(), &dir).unwrap();
    assert_eq!(summary.dir, dir);
    assert_eq!(summary.categories, 2);
    assert_eq!(summary.commands, 4);
    let files: Vec<String> = summary
        .files
        .iter()
        .map(|f| f.to_string_lossy().replace('\\', "/"))
        .collect();
    assert_eq!(
        files,
        [
            "health/health-check.json",
            "notes/note-create.json",
            "notes/note-delete.json",
            "notes/note-list.json",
            INDEX_FILE,
            README_FILE,
        ]
    );
    let on_disk: u64 = tree(&dir).iter().map(|(_, b)| b.len() as u64).sum();
    assert_eq!(summary.bytes, on_disk);
    assert_eq!(tree(&dir).len(), 6);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_command_file_holds_the_full_definition() {
    let dir = temp_dir("definition");
    export_tree(&registry(), &dir).unwrap();

    let delete = read_json(&dir.join("notes").join("note-delete.json"));
    assert_eq!(delete["name"], "note-delete");
    assert_eq!(delete["summary"], "Delete a note for good");
    assert_eq!(delete["description"], "Delete a note for good.");
    assert_eq!(delete["category"], "notes");
    assert_eq!(delete["mutation"], true);
    assert_eq!(delete["destructive"], true);
    assert_eq!(delete["idempotent"], false);
    assert_eq!(delete["confirmPrompt"], "Delete note {id}?");
    assert_eq!(delete["errors"], json!(["NOT_FOUND"]));
    assert_eq!(delete["executionTime"], "fast");
    assert_eq!(delete["version"], "1.1.0");
    assert_eq!(delete["inputSchema"]["required"], json!(["id"]));
    assert_eq!(delete["outputSchema"]["type"], "integer");

    let create = read_json(&dir.join("notes").join("note-create.json"));
    assert_eq!(create["aliases"], json!(["note-add"]));
    assert_eq!(create["tags"], json!(["crud"]));
    assert_eq!(
        create["inputSchema"]["properties"]["text"]["description"],
        "The note's text."
    );
    assert_eq!(create["outputSchema"]["required"], json!(["id", "text"]));
    assert_eq!(create["destructive"], false);

    let list = read_json(&dir.join("notes").join("note-list.json"));
    assert_eq!(list["mutation"], false);
    assert!(list.get("destructive").is_none());
    assert!(list.get("errors").is_none());

    let health = read_json(&dir.join("health").join("health-check.json"));
    assert_eq!(health["expose"]["mcp"], false);
    assert_eq!(health["expose"]["cli"], true);

    let registry = registry();
    assert_eq!(
        command_definition(registry.get("note-delete").unwrap()),
        delete,
        "the file is exactly command_definition"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_indexes_list_categories_and_commands() {
    let dir = temp_dir("index");
    export_tree(&registry(), &dir).unwrap();
    let index = read_json(&dir.join(INDEX_FILE));
    assert_eq!(
        index,
        json!({
            "commands": 4,
            "categories": [
                {"name": "health", "path": "health", "commands": ["health-check"]},
                {
                    "name": "notes",
                    "description": "Notes: write, list and delete them.",
                    "path": "notes",
                    "commands": ["note-create", "note-delete", "note-list"]
                }
            ]
        })
    );
    let readme = fs::read_to_string(dir.join(README_FILE)).unwrap();
    assert!(readme.starts_with("# Command catalog\n\n4 commands in 2 categories."));
    assert!(readme.contains("\n## notes\n\nNotes: write, list and delete them.\n\n"));
    assert!(readme.contains(
        "- [`note-delete`](notes/note-delete.json): Delete a note for good (mutation, destructive)\n"
    ));
    assert!(
        readme.contains("- [`note-create`](notes/note-create.json): Create a note (mutation)\n")
    );
    assert!(readme.contains("- [`note-list`](notes/note-list.json): List every note\n"));
    assert!(
        readme.find("## health").unwrap() < readme.find("## notes").unwrap(),
        "categories in name order"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn exports_are_deterministic() {
    let first = temp_dir("first");
    let second = temp_dir("second");
    export_tree(&registry(), &first).unwrap();
    export_tree(&registry(), &second).unwrap();
    assert_eq!(tree(&first), tree(&second));
    // Exporting again over an export changes nothing.
    export_tree(&registry(), &first).unwrap();
    assert_eq!(tree(&first), tree(&second));
    fs::remove_dir_all(&first).unwrap();
    fs::remove_dir_all(&second).unwrap();
}

#[test]
fn a_filter_keeps_only_the_accepted_commands() {
    let dir = temp_dir("filter");
    let summary =
        export_tree_with(&registry(), &dir, |entry| entry.def().expose().allows_mcp()).unwrap();
    assert_eq!((summary.categories, summary.commands), (1, 3));
    assert!(
        !dir.join("health").exists(),
        "an emptied category is not written"
    );
    let index = read_json(&dir.join(INDEX_FILE));
    assert_eq!(index["commands"], 3);
    fs::remove_dir_all(&dir).unwrap();
}

fn raw(_input: Value, _ctx: CommandContext) -> HandlerFuture {
    Box::pin(async { afd_runtime::CommandResult::success(json!(null)) })
}

fn object() -> Value {
    json!({"type": "object"})
}

const HERE: SourceLocation = SourceLocation {
    file: file!(),
    line: 1,
    column: 1,
    module_path: module_path!(),
};

#[test]
fn unsafe_names_are_rejected_before_anything_is_written() {
    static ESCAPING_CATEGORY: CommandDef =
        CommandDef::new("sneaky", "Sneak out.", raw, object, HERE).with_category("../outside");
    static SLASHED_NAME: CommandDef = CommandDef::new("a/b", "Slashed.", raw, object, HERE);
    static INDEX_CATEGORY: CommandDef =
        CommandDef::new("clash", "Clash.", raw, object, HERE).with_category("index.json");

    for def in [&ESCAPING_CATEGORY, &SLASHED_NAME, &INDEX_CATEGORY] {
        let registry = Registry::builder()
            .register(note_list::COMMAND)
            .register(def)
            .build()
            .unwrap();
        let dir = temp_dir("unsafe");
        let error = export_tree(&registry, &dir).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput, "{}", def.name());
        assert!(!dir.exists(), "nothing written for {}", def.name());
    }
}
