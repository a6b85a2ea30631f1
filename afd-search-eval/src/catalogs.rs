//! The MCP tool catalogs of an evaluation folder (`shared/eval/catalogs`), as search
//! documents.

use std::fs;
use std::path::{Path, PathBuf};

use afd_runtime::search::Document;
use serde_json::Value;

/// Every tool of every `*.json` catalog in `dir` (files in name order): ids
/// `<file stem>/<tool name>` and documents whose category is the file stem.
pub fn load(dir: &Path) -> Result<(Vec<String>, Vec<Document>), String> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    let mut ids = Vec::new();
    let mut docs = Vec::new();
    for path in files {
        let stem = path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .ok_or_else(|| format!("{}: file name is not UTF-8", path.display()))?;
        let text = fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let catalog: Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let tools = catalog
            .get("tools")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("{}: no \"tools\" array", path.display()))?;
        for tool in tools {
            if let Some(doc) = Document::from_mcp_tool(stem, tool) {
                ids.push(format!("{stem}/{}", doc.name));
                docs.push(doc);
            }
        }
    }
    Ok((ids, docs))
}
