//! A search index with its semantic layer over a synthetic catalog of any size, ready in
//! seconds (feature `semantic`): the first (up to) 256 commands are embedded and the cache
//! is filled with their vectors repeated for the others, since search cost does not depend
//! on the values of the vectors. What `--bench-semantic` and the criterion bench search.

use std::path::{Path, PathBuf};

use afd_runtime::search::semantic::{
    Encoder, SemanticOptions, VectorCache, document_text, text_key,
};
use afd_runtime::search::{Document, SearchIndex};

/// Commands actually embedded (their vectors fill the cache for the rest).
pub const EMBED_SAMPLE: usize = 256;

/// A semantic index over `docs` with the model in `model`, vectors ready, and the cache
/// folder it read them from (the caller removes it).
///
/// # Errors
///
/// The model cannot be loaded or run, or the cache cannot be written.
pub fn index(docs: &[Document], model: &Path) -> Result<(SearchIndex, PathBuf), String> {
    let encoder = Encoder::load(model).map_err(|e| format!("cannot load the model: {e}"))?;
    let texts: Vec<String> = docs.iter().map(document_text).collect();
    let sample: Vec<&str> = texts
        .iter()
        .take(EMBED_SAMPLE)
        .map(String::as_str)
        .collect();
    let vectors = encoder.embed(&sample).map_err(|e| e.to_string())?;
    let dir = std::env::temp_dir().join(format!(
        "afd-bench-vectors-{}-{}",
        std::process::id(),
        docs.len()
    ));
    fill_cache(&encoder, &dir, &texts, &vectors)?;
    drop(encoder);
    let options = SemanticOptions::new(model).cache_dir(Some(dir.clone()));
    let index = SearchIndex::build_semantic(docs.to_vec(), options);
    index
        .semantic()
        .ok_or("no semantic layer")?
        .wait()
        .map_err(|e| format!("cannot load the model: {e}"))?;
    Ok((index, dir))
}

/// Writes a cache in `dir` giving each text one of `vectors`, in turn.
pub fn fill_cache(
    encoder: &Encoder,
    dir: &Path,
    texts: &[String],
    vectors: &[Vec<f32>],
) -> Result<(), String> {
    if vectors.is_empty() {
        return Err("no vector to fill the cache with".to_owned());
    }
    let cache = VectorCache::new(dir, encoder.identity());
    let keys: Vec<_> = texts.iter().map(|text| text_key(text)).collect();
    let mut entries: Vec<(&[u8; 32], &[f32])> = keys
        .iter()
        .enumerate()
        .map(|(i, key)| (key, vectors[i % vectors.len()].as_slice()))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries.dedup_by(|a, b| a.0 == b.0);
    cache
        .store(encoder.dim(), entries.into_iter())
        .map_err(|e| format!("cannot write the cache: {e}"))
}
