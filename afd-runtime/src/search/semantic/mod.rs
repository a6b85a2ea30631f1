//! The semantic layer of search (feature `semantic`): a sentence-embedding model gives
//! each command a vector and each query one, and their cosine similarity joins the lexical
//! score in the ranking (see `fuse`).
//!
//! Command vectors are computed once, on a background thread, and cached on disk
//! ([`VectorCache`]) keyed by the model's identity and each command's text; until they are
//! ready (or when the model cannot be loaded) search answers lexically. Only the query is
//! embedded per search.

mod cache;
mod encoder;
pub(super) mod fuse;

use std::env;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

pub use cache::{TextKey, VectorCache, text_key};
pub use encoder::{Encoder, EncoderError, Pooling};

use super::Document;

/// The environment variable naming a model folder: search turns semantic when it is set.
pub const MODEL_ENV: &str = "AFD_EMBED_MODEL";
/// The environment variable naming the vector cache folder.
pub const CACHE_ENV: &str = "AFD_EMBED_CACHE";

/// Where the semantic layer's model and cache are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemanticOptions {
    /// The sentence-transformers folder.
    pub model: PathBuf,
    /// The folder of the vector cache; `None` keeps vectors in memory only.
    pub cache_dir: Option<PathBuf>,
    /// A pooling that overrides the folder's pooling configuration.
    pub pooling: Option<Pooling>,
}

impl SemanticOptions {
    /// The model in `model`, with the default cache folder ([`default_cache_dir`]).
    pub fn new(model: impl Into<PathBuf>) -> Self {
        SemanticOptions {
            model: model.into(),
            cache_dir: default_cache_dir(),
            pooling: None,
        }
    }

    /// The cache folder to use (`None`: no disk cache).
    pub fn cache_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.cache_dir = dir;
        self
    }

    /// Options from the environment: the model folder of [`MODEL_ENV`], or `None` when it
    /// is unset or empty.
    pub fn from_env() -> Option<Self> {
        let model = env::var_os(MODEL_ENV).filter(|value| !value.is_empty())?;
        Some(SemanticOptions::new(model))
    }
}

/// The cache folder used unless told otherwise: [`CACHE_ENV`] when set, else
/// `$XDG_CACHE_HOME/afd/vectors`, else `$HOME/.cache/afd/vectors`, else none.
pub fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = env::var_os(CACHE_ENV).filter(|value| !value.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let base = env::var_os("XDG_CACHE_HOME")
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            env::var_os("HOME")
                .filter(|value| !value.is_empty())
                .map(|home| Path::new(&home).join(".cache"))
        })?;
    Some(base.join("afd").join("vectors"))
}

/// The text of a document that its vector is computed from: the category (for a catalog
/// of external tools, the server) and the name as words, the title and the description's
/// first sentence. (Of the name with the whole description, the same with the category,
/// and this, this ranked best, alone and fused, in cross-validation over the development
/// query sets.)
pub fn document_text(doc: &Document) -> String {
    let name: String = doc
        .name
        .chars()
        .map(|c| {
            if c == '_' || c == '-' || c == '.' || c == '/' {
                ' '
            } else {
                c
            }
        })
        .collect();
    let mut text = doc.category.trim().to_owned();
    if !text.is_empty() {
        text.push(' ');
    }
    text.push_str(&name);
    let summary = super::document::split_summary(&doc.description).0;
    for part in [doc.title.as_str(), summary] {
        let part = part.trim();
        if !part.is_empty() {
            text.push_str(": ");
            text.push_str(part);
        }
    }
    text
}

/// What loading a semantic layer did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EmbedStats {
    /// Documents whose vector was computed.
    pub embedded: usize,
    /// Documents whose vector came from the cache.
    pub reused: usize,
}

/// The vectors of every document, ready to search.
pub(super) struct Ready {
    pub(super) encoder: Encoder,
    /// `n_docs * dim` values, document by document.
    pub(super) vectors: Vec<f32>,
    pub(super) stats: EmbedStats,
}

impl std::fmt::Debug for Ready {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ready")
            .field("encoder", &self.encoder)
            .field("vectors", &self.vectors.len())
            .field("stats", &self.stats)
            .finish()
    }
}

#[derive(Debug, Default)]
enum State {
    #[default]
    Loading,
    Ready(Arc<Ready>),
    Failed(String),
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    done: Condvar,
}

/// A semantic layer over a catalog's documents: loads the model and the documents'
/// vectors on a background thread, then embeds queries. Until then (and for good when
/// the model fails to load, which is logged as a warning) it offers nothing and search
/// stays lexical.
#[derive(Debug, Clone)]
pub struct SemanticLayer {
    shared: Arc<Shared>,
}

impl SemanticLayer {
    /// Starts loading `options`' model and the vectors of `docs` (in order) on a new
    /// thread.
    pub fn start(options: SemanticOptions, docs: &[Document]) -> Self {
        let texts: Vec<String> = docs.iter().map(document_text).collect();
        let layer = SemanticLayer {
            shared: Arc::default(),
        };
        let shared = layer.shared.clone();
        let spawned = std::thread::Builder::new()
            .name("afd-embed".to_owned())
            .spawn(move || {
                let outcome = std::panic::catch_unwind(|| load(&options, &texts))
                    .unwrap_or_else(|_| Err("the model panicked while loading".to_owned()));
                let state = match outcome {
                    Ok(ready) => {
                        tracing::info!(
                            embedded = ready.stats.embedded,
                            reused = ready.stats.reused,
                            "semantic search ready"
                        );
                        State::Ready(Arc::new(ready))
                    }
                    Err(message) => {
                        tracing::warn!(
                            model = %options.model.display(),
                            "semantic search is off, search stays lexical: {message}"
                        );
                        State::Failed(message)
                    }
                };
                finish(&shared, state);
            });
        if let Err(e) = spawned {
            let message = format!("cannot start the embedding thread: {e}");
            tracing::warn!("semantic search is off, search stays lexical: {message}");
            finish(&layer.shared, State::Failed(message));
        }
        layer
    }

    /// Whether the vectors are ready (semantic ranking is on).
    pub fn is_ready(&self) -> bool {
        matches!(*self.lock(), State::Ready(_))
    }

    /// Why the model or the vectors failed to load; `None` while loading or once ready.
    pub fn failure(&self) -> Option<String> {
        match &*self.lock() {
            State::Failed(message) => Some(message.clone()),
            _ => None,
        }
    }

    /// Waits until loading has finished; `Ok` with what it did when semantic ranking is
    /// on, `Err` with the reason when it failed.
    pub fn wait(&self) -> Result<EmbedStats, String> {
        let mut state = self.lock();
        loop {
            match &*state {
                State::Loading => {
                    state = self
                        .shared
                        .done
                        .wait(state)
                        .unwrap_or_else(|poisoned| poisoned.into_inner());
                }
                State::Ready(ready) => return Ok(ready.stats),
                State::Failed(message) => return Err(message.clone()),
            }
        }
    }

    /// The loaded vectors, when ready.
    pub(super) fn ready(&self) -> Option<Arc<Ready>> {
        match &*self.lock() {
            State::Ready(ready) => Some(ready.clone()),
            _ => None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn finish(shared: &Shared, state: State) {
    *shared
        .state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = state;
    shared.done.notify_all();
}

/// Loads the model, reads the cached vectors, embeds the texts the cache lacks and
/// writes the cache back when anything changed.
fn load(options: &SemanticOptions, texts: &[String]) -> Result<Ready, String> {
    let encoder = match options.pooling {
        Some(pooling) => Encoder::load_with(&options.model, Some(pooling)),
        None => Encoder::load(&options.model),
    }
    .map_err(|e| e.to_string())?;
    let dim = encoder.dim();
    let cache = options
        .cache_dir
        .as_deref()
        .map(|dir| VectorCache::new(dir, encoder.identity()));
    let mut known = cache.as_ref().map(|c| c.load(dim)).unwrap_or_default();
    let keys: Vec<TextKey> = texts.iter().map(|text| text_key(text)).collect();

    let mut missing: Vec<usize> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, key) in keys.iter().enumerate() {
        if !known.contains_key(key) && seen.insert(*key) {
            missing.push(i);
        }
    }
    let to_embed: Vec<&str> = missing.iter().map(|&i| texts[i].as_str()).collect();
    let computed = encoder.embed(&to_embed).map_err(|e| e.to_string())?;
    let embedded = computed.len();
    for (&i, vector) in missing.iter().zip(computed) {
        known.insert(keys[i], vector);
    }

    let mut vectors = Vec::with_capacity(keys.len() * dim);
    for key in &keys {
        match known.get(key) {
            Some(vector) if vector.len() == dim => vectors.extend_from_slice(vector),
            _ => return Err("a vector is missing after embedding".to_owned()),
        }
    }
    if let Some(cache) = &cache {
        let current: std::collections::HashSet<&TextKey> = keys.iter().collect();
        // Write when a vector was added or one of a command no longer there can go.
        if embedded > 0 || known.len() != current.len() {
            let mut entries: Vec<(&TextKey, &[f32])> = known
                .iter()
                .filter(|(key, _)| current.contains(key))
                .map(|(key, vector)| (key, vector.as_slice()))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            if let Err(e) = cache.store(dim, entries.into_iter()) {
                tracing::warn!(
                    path = %cache.path().display(),
                    "cannot write the vector cache: {e}"
                );
            }
        }
    }
    Ok(Ready {
        encoder,
        vectors,
        stats: EmbedStats {
            embedded,
            reused: keys.len() - missing.len(),
        },
    })
}
