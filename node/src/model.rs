//! A sentence-embedding model on the CPU: a sentence-transformers BERT folder (all-MiniLM-L6-v2
//! by default: `config.json`, `tokenizer.json`, `model.safetensors`) run with candle, mean
//! pooled over the attention mask and L2-normalised, so a dot product is a cosine.
//!
//! It is CPU work of milliseconds per text: callers run it on a blocking thread, batch the texts
//! of one observation, and rely on the cache (by text, bounded) so that a text seen before costs
//! nothing. Texts are truncated to [`MAX_TOKENS`] tokens. The model's identity is the SHA-256 of
//! its weights ([`SentenceModel::digest`]): peers that embed with different models must not mix
//! their vectors.

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config, DTYPE};
use forager_protocol::digest::Digest32;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// The model forager installs (`scripts/install-model`) and looks for by default.
pub const DEFAULT_MODEL: &str = "all-MiniLM-L6-v2";
/// SHA-256 of the default model's `model.safetensors`, as published upstream.
pub const DEFAULT_MODEL_SHA256: &str =
    "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db";
/// Tokens a text is cut to (the model was trained on 128 at most; a link or a heading is far
/// shorter, and a page summary should say what matters first).
pub const MAX_TOKENS: usize = 128;
/// Texts kept in the in-memory cache before it starts over.
const CACHE_CAPACITY: usize = 50_000;

/// The files a model folder must hold.
const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Why a model could not be loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// A file of the model folder is missing.
    #[error(
        "no sentence-embedding model in {}: {file} is missing (install one with \
         `bash scripts/install-model`, or name a sentence-transformers BERT folder)",
        dir.display()
    )]
    Missing {
        /// The folder.
        dir: PathBuf,
        /// The missing file.
        file: &'static str,
    },
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `config.json` is not a BERT configuration.
    #[error("{} is not a BERT configuration: {detail}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// `tokenizer.json` cannot be used.
    #[error("the tokenizer {} cannot be used: {detail}", path.display())]
    Tokenizer {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// The weights do not fit the configuration (or are not safetensors).
    #[error("the weights {} cannot be loaded: {detail}", path.display())]
    Weights {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// Tokenizing or running the model failed.
    #[error("embedding failed: {0}")]
    Inference(String),
}

/// A loaded sentence-embedding model with its text cache.
pub struct SentenceModel {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    dim: usize,
    digest: Digest32,
    name: String,
    cache: Mutex<HashMap<String, Arc<[f32]>>>,
}

impl std::fmt::Debug for SentenceModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentenceModel")
            .field("name", &self.name)
            .field("dim", &self.dim)
            .field("digest", &self.digest.to_hex())
            .finish()
    }
}

impl SentenceModel {
    /// Where forager looks for its model when none is named: `$FORAGER_MODEL_DIR`, else
    /// `$XDG_DATA_HOME/forager/models/all-MiniLM-L6-v2`, else
    /// `~/.local/share/forager/models/all-MiniLM-L6-v2`.
    pub fn default_dir() -> Option<PathBuf> {
        if let Some(dir) = std::env::var_os("FORAGER_MODEL_DIR") {
            return Some(PathBuf::from(dir));
        }
        let data = std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))?;
        Some(data.join("forager/models").join(DEFAULT_MODEL))
    }

    /// Loads a sentence-transformers BERT folder.
    pub fn load(dir: &Path) -> Result<SentenceModel, ModelError> {
        for file in FILES {
            if !dir.join(file).is_file() {
                return Err(ModelError::Missing {
                    dir: dir.to_path_buf(),
                    file,
                });
            }
        }
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|source| ModelError::Io { path, source })
        };
        let config_path = dir.join("config.json");
        let config: Config =
            serde_json::from_slice(&read("config.json")?).map_err(|e| ModelError::Config {
                path: config_path.clone(),
                detail: e.to_string(),
            })?;
        let dim = serde_json::from_slice::<serde_json::Value>(&read("config.json")?)
            .ok()
            .and_then(|v| v.get("hidden_size")?.as_u64())
            .ok_or_else(|| ModelError::Config {
                path: config_path,
                detail: "no hidden_size".into(),
            })? as usize;
        let tokenizer_path = dir.join("tokenizer.json");
        let tokenizer_error = |detail: String| ModelError::Tokenizer {
            path: tokenizer_path.clone(),
            detail,
        };
        let mut tokenizer =
            Tokenizer::from_file(&tokenizer_path).map_err(|e| tokenizer_error(e.to_string()))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| tokenizer_error(e.to_string()))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
        let weights_path = dir.join("model.safetensors");
        let weights = read("model.safetensors")?;
        let digest = Digest32::of(&weights);
        let device = Device::Cpu;
        let weights_error = |detail: String| ModelError::Weights {
            path: weights_path.clone(),
            detail,
        };
        let vars = VarBuilder::from_buffered_safetensors(weights, DTYPE, &device)
            .map_err(|e| weights_error(e.to_string()))?;
        let model = BertModel::load(vars, &config).map_err(|e| weights_error(e.to_string()))?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| DEFAULT_MODEL.to_owned());
        Ok(SentenceModel {
            model,
            tokenizer,
            device,
            dim,
            digest,
            name,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// The vectors' dimension (384 for all-MiniLM-L6-v2).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// SHA-256 of the weights: the model's identity.
    pub fn digest(&self) -> Digest32 {
        self.digest
    }

    /// The model folder's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Unit vectors of `texts`, in order: cached ones at once, the others in one batch.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Arc<[f32]>>, ModelError> {
        let mut out: Vec<Option<Arc<[f32]>>> = {
            let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            texts.iter().map(|t| cache.get(*t).cloned()).collect()
        };
        let mut missing: Vec<&str> = texts
            .iter()
            .zip(&out)
            .filter(|(_, v)| v.is_none())
            .map(|(t, _)| *t)
            .collect();
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            let vectors = self.run(&missing)?;
            let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            if cache.len() + missing.len() > CACHE_CAPACITY {
                cache.clear();
            }
            for (text, vector) in missing.iter().zip(vectors) {
                cache.insert((*text).to_owned(), vector);
            }
            for (slot, text) in out.iter_mut().zip(texts) {
                if slot.is_none() {
                    *slot = cache.get(*text).cloned();
                }
            }
        }
        out.into_iter()
            .map(|v| v.ok_or_else(|| ModelError::Inference("a vector went missing".into())))
            .collect()
    }

    /// Texts in the cache.
    pub fn cached(&self) -> usize {
        self.cache.lock().map_or(0, |c| c.len())
    }

    /// Runs the model on one batch.
    fn run(&self, texts: &[&str]) -> Result<Vec<Arc<[f32]>>, ModelError> {
        let failed = |e: &dyn std::fmt::Display| ModelError::Inference(e.to_string());
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| failed(&e))?;
        let rows = encodings.len();
        let width = encodings.first().map_or(0, |e| e.get_ids().len());
        let flat = |pick: fn(&tokenizers::Encoding) -> &[u32]| -> Vec<u32> {
            encodings.iter().flat_map(|e| pick(e).to_vec()).collect()
        };
        let tensor = |values: Vec<u32>| {
            Tensor::from_vec(values, (rows, width), &self.device).map_err(|e| failed(&e))
        };
        let ids = tensor(flat(|e| e.get_ids()))?;
        let types = tensor(flat(|e| e.get_type_ids()))?;
        let mask = tensor(flat(|e| e.get_attention_mask()))?;
        let hidden = self
            .model
            .forward(&ids, &types, Some(&mask))
            .map_err(|e| failed(&e))?;
        // Mean over the real tokens (padding masked out), then unit length.
        let pooled = (|| {
            let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
            let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
            let mean = summed.broadcast_div(&counts)?;
            let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
            mean.broadcast_div(&norms)?.to_vec2::<f32>()
        })()
        .map_err(|e: candle_core::Error| failed(&e))?;
        Ok(pooled.into_iter().map(Arc::from).collect())
    }
}

/// The dot product of two unit vectors: their cosine.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_without_the_model_is_named() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let error = SentenceModel::load(dir.path()).expect_err("nothing to load");
        assert!(
            matches!(
                error,
                ModelError::Missing {
                    file: "config.json",
                    ..
                }
            ),
            "{error}"
        );
        std::fs::write(dir.path().join("config.json"), "{}").expect("written");
        std::fs::write(dir.path().join("tokenizer.json"), "{}").expect("written");
        let error = SentenceModel::load(dir.path()).expect_err("no weights");
        assert!(
            matches!(
                error,
                ModelError::Missing {
                    file: "model.safetensors",
                    ..
                }
            ),
            "{error}"
        );
        assert!(error.to_string().contains("install-model"), "{error}");
    }

    #[test]
    fn broken_files_are_named_not_panicked_on() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        for file in FILES {
            std::fs::write(dir.path().join(file), "not what it should be").expect("written");
        }
        let error = SentenceModel::load(dir.path()).expect_err("garbage");
        assert!(matches!(error, ModelError::Config { .. }), "{error}");
    }
}
