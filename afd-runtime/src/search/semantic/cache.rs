//! [`VectorCache`]: command vectors on disk, one file per model identity, each vector keyed
//! by the SHA-256 of the text it was computed from. A restart with the same model and
//! catalog reads every vector back; a changed command's text has a new key, so only it is
//! embedded again, and keys no longer in the catalog are dropped on the next write.
//!
//! File layout (little-endian): the 8 bytes `AFDVEC1\n`, the dimension (`u32`), the count
//! (`u32`), then per entry the 32-byte key and `dimension` `f32`s. A file that does not
//! parse is ignored (everything is embedded again) and replaced.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

const MAGIC: &[u8; 8] = b"AFDVEC1\n";

/// The key of a text: its SHA-256.
pub type TextKey = [u8; 32];

/// The key of `text`.
pub fn text_key(text: &str) -> TextKey {
    Sha256::digest(text.as_bytes()).into()
}

/// The vector file of one model in one cache folder.
#[derive(Debug, Clone)]
pub struct VectorCache {
    path: PathBuf,
}

impl VectorCache {
    /// The cache of the model with `identity` (see
    /// [`Encoder::identity`](super::Encoder::identity)) in folder `dir`.
    pub fn new(dir: &Path, identity: &str) -> Self {
        VectorCache {
            path: dir.join(format!("{identity}.vectors")),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every vector in the file, by key; empty when the file is missing, unreadable, of
    /// another dimension or malformed.
    pub fn load(&self, dim: usize) -> HashMap<TextKey, Vec<f32>> {
        match fs::read(&self.path) {
            Ok(bytes) => parse(&bytes, dim).unwrap_or_default(),
            Err(_) => HashMap::new(),
        }
    }

    /// Replaces the file with `entries` (written beside it, then renamed over it, so a
    /// reader never sees half a file).
    pub fn store<'a>(
        &self,
        dim: usize,
        entries: impl ExactSizeIterator<Item = (&'a TextKey, &'a [f32])>,
    ) -> io::Result<()> {
        let count = entries.len();
        let mut bytes = Vec::with_capacity(16 + count * (32 + 4 * dim));
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&(dim as u32).to_le_bytes());
        bytes.extend_from_slice(&(count as u32).to_le_bytes());
        for (key, vector) in entries {
            if vector.len() != dim {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "vector of the wrong dimension",
                ));
            }
            bytes.extend_from_slice(key);
            for x in vector {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
        }
        if let Some(parent) = self.path.parent() {
            fs::create_dir_all(parent)?;
        }
        let tmp = self
            .path
            .with_extension(format!("vectors.{}.tmp", std::process::id()));
        fs::write(&tmp, &bytes)?;
        fs::rename(&tmp, &self.path).inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })
    }
}

fn parse(bytes: &[u8], dim: usize) -> Option<HashMap<TextKey, Vec<f32>>> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let (head, mut rest) = rest.split_at_checked(8)?;
    let file_dim = u32::from_le_bytes(head[..4].try_into().ok()?) as usize;
    let count = u32::from_le_bytes(head[4..].try_into().ok()?) as usize;
    if file_dim != dim || rest.len() != count.checked_mul(32 + 4 * dim)? {
        return None;
    }
    let mut out = HashMap::with_capacity(count);
    for _ in 0..count {
        let (key, after) = rest.split_at(32);
        let (vector, after) = after.split_at(4 * dim);
        let vector = vector
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        out.insert(key.try_into().ok()?, vector);
        rest = after;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("afd-vec-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn stores_and_loads_vectors_by_text() {
        let dir = temp_dir("roundtrip");
        let cache = VectorCache::new(&dir, "model");
        let (a, b) = (text_key("alpha"), text_key("beta"));
        let va = vec![1.0, 0.0, -0.5];
        let vb = vec![0.25, 2.0, 3.0];
        cache
            .store(3, [(&a, &va[..]), (&b, &vb[..])].into_iter())
            .unwrap();
        let loaded = cache.load(3);
        assert_eq!(loaded.len(), 2);
        assert_eq!(loaded[&a], va);
        assert_eq!(loaded[&b], vb);
        // Another dimension (another model shape) reads nothing.
        assert!(cache.load(4).is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_damaged_file_reads_as_empty() {
        let dir = temp_dir("damaged");
        let cache = VectorCache::new(&dir, "model");
        let key = text_key("alpha");
        cache
            .store(2, [(&key, &[1.0, 2.0][..])].into_iter())
            .unwrap();
        let mut bytes = fs::read(cache.path()).unwrap();
        bytes.truncate(bytes.len() - 3);
        fs::write(cache.path(), &bytes).unwrap();
        assert!(cache.load(2).is_empty());
        fs::write(cache.path(), b"not a cache").unwrap();
        assert!(cache.load(2).is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }
}
