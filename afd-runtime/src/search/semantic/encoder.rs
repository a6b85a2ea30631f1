//! [`Encoder`]: a BERT-family sentence-embedding model loaded from a sentence-transformers
//! folder and run on the CPU with candle: text in, one unit-length vector out.
//!
//! The folder holds `config.json` (the BERT configuration), `tokenizer.json`,
//! `model.safetensors`, and optionally `1_Pooling/config.json` (mean or CLS pooling; mean
//! when absent), `modules.json` (a `Normalize` module makes vectors unit length) and
//! `sentence_bert_config.json` (`max_seq_length`). all-MiniLM-L6-v2, bge-small-en-v1.5 and
//! e5-small folders all have this layout.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// Texts embedded in one forward pass; longer lists are cut into batches of this size
/// (after sorting by length, so that padding stays short).
const BATCH: usize = 32;
/// Token limit when the folder does not say (`sentence_bert_config.json`).
const DEFAULT_MAX_TOKENS: usize = 256;

/// Why a model folder could not be loaded or run.
#[derive(Debug)]
pub struct EncoderError {
    /// The file at fault, when one is.
    pub path: Option<PathBuf>,
    /// What went wrong.
    pub message: String,
}

impl EncoderError {
    fn at(path: &Path, message: impl fmt::Display) -> Self {
        EncoderError {
            path: Some(path.to_owned()),
            message: message.to_string(),
        }
    }

    fn run(message: impl fmt::Display) -> Self {
        EncoderError {
            path: None,
            message: message.to_string(),
        }
    }
}

impl fmt::Display for EncoderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(path) => write!(f, "{}: {}", path.display(), self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for EncoderError {}

/// How token vectors become one sentence vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// The mean of the token vectors (padding excluded).
    Mean,
    /// The vector of the first (`[CLS]`) token.
    Cls,
}

/// A sentence-embedding model, ready to embed text. Loading reads the weights into memory
/// (about 90 MB for all-MiniLM-L6-v2); embedding runs on the CPU.
pub struct Encoder {
    model: BertModel,
    tokenizer: Tokenizer,
    pooling: Pooling,
    normalize: bool,
    dim: usize,
    identity: String,
}

impl fmt::Debug for Encoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Encoder")
            .field("pooling", &self.pooling)
            .field("normalize", &self.normalize)
            .field("dim", &self.dim)
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl Encoder {
    /// Loads a sentence-transformers folder, honouring its pooling and normalisation.
    pub fn load(dir: &Path) -> Result<Encoder, EncoderError> {
        Self::load_with(dir, None)
    }

    /// As [`load`](Self::load), with the pooling given here instead of the folder's.
    pub fn load_with(dir: &Path, pooling: Option<Pooling>) -> Result<Encoder, EncoderError> {
        let config_path = dir.join("config.json");
        let config_text = read_text(&config_path)?;
        let config: Config = serde_json::from_str(&config_text).map_err(|e| {
            EncoderError::at(&config_path, format!("not a BERT configuration: {e}"))
        })?;
        let dim = config.hidden_size;
        let max_positions = config.max_position_embeddings;

        let pooling = match pooling {
            Some(pooling) => pooling,
            None => read_pooling(dir)?,
        };
        let normalize = read_normalize(dir)?;
        let max_tokens = read_max_tokens(dir)?.min(max_positions).max(2);

        let tokenizer_path = dir.join("tokenizer.json");
        let tokenizer_text = read_text(&tokenizer_path)?;
        let mut tokenizer = Tokenizer::from_bytes(tokenizer_text.as_bytes())
            .map_err(|e| EncoderError::at(&tokenizer_path, e))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..TruncationParams::default()
            }))
            .map_err(|e| EncoderError::at(&tokenizer_path, e))?;
        let pad_id = tokenizer.token_to_id("[PAD]").unwrap_or(0);
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            pad_id,
            ..PaddingParams::default()
        }));

        let weights_path = dir.join("model.safetensors");
        let weights = fs::read(&weights_path).map_err(|e| EncoderError::at(&weights_path, e))?;
        let mut hasher = Sha256::new();
        for part in [
            config_text.as_bytes(),
            tokenizer_text.as_bytes(),
            format!("{pooling:?} {normalize} {max_tokens}").as_bytes(),
            &weights,
        ] {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        let identity = hex(&hasher.finalize()[..16]);

        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| EncoderError::at(&weights_path, e))?;
        let model = BertModel::load(vb, &config).map_err(|e| EncoderError::at(&weights_path, e))?;
        Ok(Encoder {
            model,
            tokenizer,
            pooling,
            normalize,
            dim,
            identity,
        })
    }

    /// The length of the vectors.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The pooling in use.
    pub fn pooling(&self) -> Pooling {
        self.pooling
    }

    /// Whether vectors are made unit length.
    pub fn normalizes(&self) -> bool {
        self.normalize
    }

    /// A hex digest of everything that decides the vectors (configuration, tokenizer,
    /// weights, pooling, normalisation, token limit): two encoders with the same identity
    /// give the same vectors, so cached vectors are keyed by it.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// One vector per text, in order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncoderError> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            for (&i, vector) in chunk.iter().zip(self.embed_batch(&batch)?) {
                out[i] = vector;
            }
        }
        Ok(out)
    }

    /// One text's vector.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, EncoderError> {
        Ok(self.embed_batch(&[text])?.pop().unwrap_or_default())
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncoderError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(EncoderError::run)?;
        let rows = encodings.len();
        let len = encodings.first().map_or(0, |e| e.get_ids().len());
        let mut ids = Vec::with_capacity(rows * len);
        let mut mask = Vec::with_capacity(rows * len);
        for encoding in &encodings {
            ids.extend_from_slice(encoding.get_ids());
            mask.extend_from_slice(encoding.get_attention_mask());
        }
        let vectors = self
            .forward(ids, mask, rows, len)
            .map_err(EncoderError::run)?;
        Ok(vectors)
    }

    fn forward(
        &self,
        ids: Vec<u32>,
        mask: Vec<u32>,
        rows: usize,
        len: usize,
    ) -> candle_core::Result<Vec<Vec<f32>>> {
        let device = &Device::Cpu;
        let ids = Tensor::from_vec(ids, (rows, len), device)?;
        let mask = Tensor::from_vec(mask, (rows, len), device)?;
        let types = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        let pooled = match self.pooling {
            Pooling::Cls => hidden.narrow(1, 0, 1)?.squeeze(1)?,
            Pooling::Mean => {
                let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
                let sum = hidden.broadcast_mul(&mask)?.sum(1)?;
                let count = mask.sum(1)?.clamp(1e-9, f32::MAX)?;
                sum.broadcast_div(&count)?
            }
        };
        let pooled = if self.normalize {
            let norm = pooled
                .sqr()?
                .sum_keepdim(1)?
                .sqrt()?
                .clamp(1e-12, f32::MAX)?;
            pooled.broadcast_div(&norm)?
        } else {
            pooled
        };
        pooled.to_vec2::<f32>()
    }
}

fn read_text(path: &Path) -> Result<String, EncoderError> {
    fs::read_to_string(path).map_err(|e| EncoderError::at(path, e))
}

fn read_json(path: &Path) -> Result<Option<Value>, EncoderError> {
    if !path.exists() {
        return Ok(None);
    }
    let text = read_text(path)?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| EncoderError::at(path, e))
}

/// The pooling of `1_Pooling/config.json` (or of the folder `modules.json` names for the
/// pooling module); mean when there is none. Both ways sentence-transformers writes it are
/// read: `"pooling_mode": "mean"` (or a list of modes), and the older one flag per mode
/// (`"pooling_mode_mean_tokens": true`).
fn read_pooling(dir: &Path) -> Result<Pooling, EncoderError> {
    let folder = read_json(&dir.join("modules.json"))?
        .and_then(|modules| {
            modules.as_array()?.iter().find_map(|module| {
                let kind = module.get("type")?.as_str()?;
                kind.ends_with(".Pooling")
                    .then(|| module.get("path")?.as_str().map(str::to_owned))?
            })
        })
        .unwrap_or_else(|| "1_Pooling".to_owned());
    let path = dir.join(folder).join("config.json");
    let Some(config) = read_json(&path)? else {
        return Ok(Pooling::Mean);
    };
    pooling_of(&config).map_err(|why| EncoderError::at(&path, why))
}

/// The pooling a pooling module's configuration names.
fn pooling_of(config: &Value) -> Result<Pooling, String> {
    const FLAGS: [(&str, &str); 6] = [
        ("pooling_mode_cls_token", "cls"),
        ("pooling_mode_mean_tokens", "mean"),
        ("pooling_mode_max_tokens", "max"),
        ("pooling_mode_mean_sqrt_len_tokens", "mean_sqrt_len_tokens"),
        ("pooling_mode_weightedmean_tokens", "weightedmean"),
        ("pooling_mode_lasttoken", "lasttoken"),
    ];
    let modes: Vec<&str> = match config.get("pooling_mode") {
        Some(Value::String(mode)) => vec![mode.as_str()],
        Some(Value::Array(modes)) => modes.iter().filter_map(Value::as_str).collect(),
        _ => FLAGS
            .iter()
            .filter(|(flag, _)| config.get(flag).and_then(Value::as_bool) == Some(true))
            .map(|(_, mode)| *mode)
            .collect(),
    };
    match modes.as_slice() {
        ["cls"] => Ok(Pooling::Cls),
        ["mean"] => Ok(Pooling::Mean),
        [] => Err("the pooling module names no pooling mode".to_owned()),
        modes => Err(format!(
            "pooling {} is not supported: only mean or CLS pooling is",
            modes.join(" + ")
        )),
    }
}

/// Whether `modules.json` lists a `Normalize` module.
fn read_normalize(dir: &Path) -> Result<bool, EncoderError> {
    Ok(
        read_json(&dir.join("modules.json"))?.is_some_and(|modules| {
            modules.as_array().is_some_and(|modules| {
                modules.iter().any(|module| {
                    module
                        .get("type")
                        .and_then(Value::as_str)
                        .is_some_and(|kind| kind.ends_with(".Normalize"))
                })
            })
        }),
    )
}

/// The longest input the model was trained for: `max_seq_length` of
/// `sentence_bert_config.json`, or (as newer sentence-transformers writes it)
/// `model_max_length` of `tokenizer_config.json`; the caller caps it at the model's
/// position embeddings.
fn read_max_tokens(dir: &Path) -> Result<usize, EncoderError> {
    let sentence_bert = read_json(&dir.join("sentence_bert_config.json"))?
        .and_then(|config| config.get("max_seq_length")?.as_u64());
    let tokenizer = || -> Result<Option<u64>, EncoderError> {
        Ok(read_json(&dir.join("tokenizer_config.json"))?
            .and_then(|config| config.get("model_max_length")?.as_u64()))
    };
    let found = match sentence_bert {
        Some(n) => Some(n),
        None => tokenizer()?,
    };
    Ok(found.map_or(DEFAULT_MAX_TOKENS, |n| {
        usize::try_from(n).unwrap_or(usize::MAX)
    }))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Pooling, pooling_of};

    #[test]
    fn pooling_is_read_as_either_sentence_transformers_version_writes_it() {
        assert_eq!(
            pooling_of(&json!({"pooling_mode": "mean"})),
            Ok(Pooling::Mean)
        );
        assert_eq!(
            pooling_of(&json!({"pooling_mode": ["cls"]})),
            Ok(Pooling::Cls)
        );
        assert_eq!(
            pooling_of(&json!({"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false})),
            Ok(Pooling::Cls)
        );
        assert_eq!(
            pooling_of(&json!({"pooling_mode_mean_tokens": true})),
            Ok(Pooling::Mean)
        );
        let error = pooling_of(&json!({"pooling_mode": ["mean", "max"]})).unwrap_err();
        assert!(error.contains("mean + max is not supported"), "{error}");
        let error = pooling_of(&json!({"pooling_mode": "lasttoken"})).unwrap_err();
        assert!(error.contains("lasttoken"), "{error}");
        assert!(pooling_of(&json!({})).is_err());
    }
}
