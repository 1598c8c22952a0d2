//! A sentence-embedding model on the CPU: a sentence-transformers BERT folder (all-MiniLM-L6-v2
//! by default: `config.json`, `tokenizer.json`, `model.safetensors`) run by our own forward
//! pass ([`crate::encoder`]), mean pooled over each text's tokens and L2-normalised, so a dot
//! product is a cosine.
//!
//! It is CPU work of milliseconds per text: callers run it on a blocking thread, batch the texts
//! of one observation, and rely on the cache (by text, bounded) so that a text seen before costs
//! nothing. Texts are truncated to [`MAX_TOKENS`] tokens. The model's identity is the SHA-256 of
//! its weights ([`SentenceModel::digest`]): peers that embed with different models must not mix
//! their vectors.
//!
//! `scripts/install-model` installs the default after a SHA-256 check of its files. Texts are run
//! 32 to a batch; the cache can also live on disk ([`SentenceModel::attach_disk_cache`]: an
//! append-only `<digest>.vectors` file, a torn record cut at load, at most [`DISK_CACHE_LIMIT`]).
//! [`user_data_dir`] is forager's per-user folder (`$XDG_DATA_HOME/forager`).

use crate::encoder::{BertConfig, BertEncoder};
use forager_protocol::digest::Digest32;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokenizers::{Tokenizer, TruncationParams};

/// The model forager installs (`scripts/install-model`) and looks for by default.
pub const DEFAULT_MODEL: &str = "all-MiniLM-L6-v2";
/// SHA-256 of the default model's `model.safetensors`, as published upstream.
pub const DEFAULT_MODEL_SHA256: &str =
    "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db";
/// Tokens a text is cut to (the model was trained on 128 at most; a link or a heading is far
/// shorter, and a page summary should say what matters first).
pub const MAX_TOKENS: usize = 128;
/// Texts run through the model at once.
const BATCH: usize = 32;
/// Texts kept in the in-memory cache before it starts over.
const CACHE_CAPACITY: usize = 50_000;

/// Bytes the on-disk cache may grow to (about 40,000 vectors of 384 dimensions).
pub const DISK_CACHE_LIMIT: u64 = 64 << 20;

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

/// The append-only file behind the cache.
#[derive(Debug)]
struct DiskCache {
    path: PathBuf,
    file: std::fs::File,
    size: u64,
}

/// A loaded sentence-embedding model with its text cache.
pub struct SentenceModel {
    model: BertEncoder,
    tokenizer: Tokenizer,
    dim: usize,
    digest: Digest32,
    name: String,
    /// Vectors by the SHA-256 of their text.
    cache: Mutex<HashMap<Digest32, Arc<[f32]>>>,
    /// Where new vectors are appended, when the cache lives on disk too.
    disk: Mutex<Option<DiskCache>>,
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
    /// `models/all-MiniLM-L6-v2` in [`user_data_dir`].
    pub fn default_dir() -> Option<PathBuf> {
        if let Some(dir) = std::env::var_os("FORAGER_MODEL_DIR") {
            return Some(PathBuf::from(dir));
        }
        Some(user_data_dir()?.join("models").join(DEFAULT_MODEL))
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
        let config: BertConfig =
            serde_json::from_slice(&read("config.json")?).map_err(|e| ModelError::Config {
                path: config_path.clone(),
                detail: e.to_string(),
            })?;
        let dim = config.hidden_size;
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
        // No padding: the encoder takes each text at its own length.
        tokenizer.with_padding(None);
        let weights_path = dir.join("model.safetensors");
        let weights = read("model.safetensors")?;
        let digest = Digest32::of(&weights);
        let model = BertEncoder::load(&config, &weights).map_err(|e| ModelError::Weights {
            path: weights_path.clone(),
            detail: e.to_string(),
        })?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| DEFAULT_MODEL.to_owned());
        Ok(SentenceModel {
            model,
            tokenizer,
            dim,
            digest,
            name,
            cache: Mutex::new(HashMap::new()),
            disk: Mutex::new(None),
        })
    }

    /// Keeps the cache on disk as well: the vectors in `dir/<model digest>.vectors` are loaded
    /// (a torn last record is cut off) and every new one is appended, so that a page seen by an
    /// earlier run costs nothing. The file stops growing at [`DISK_CACHE_LIMIT`] bytes.
    /// Returns how many vectors were loaded.
    pub fn attach_disk_cache(&self, dir: &Path) -> Result<usize, ModelError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| ModelError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let path = dir.join(format!("{}.vectors", &self.digest.to_hex()[..16]));
        let record = 32 + 4 * self.dim;
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io(&path)(e)),
        };
        let whole = bytes.len() / record * record;
        let mut loaded = 0;
        {
            let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            for chunk in bytes[..whole].chunks_exact(record) {
                let mut key = [0u8; 32];
                key.copy_from_slice(&chunk[..32]);
                let vector: Vec<f32> = chunk[32..]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                let norm: f32 = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
                // A record that is not a unit vector is not ours (or is damaged): skipped.
                if (norm - 1.0).abs() > 1e-3 || cache.len() >= CACHE_CAPACITY {
                    continue;
                }
                cache.insert(Digest32(key), Arc::from(vector));
                loaded += 1;
            }
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io(&path))?;
        if whole != bytes.len() {
            file.set_len(whole as u64).map_err(io(&path))?;
        }
        *self.disk.lock().unwrap_or_else(|p| p.into_inner()) = Some(DiskCache {
            path,
            file,
            size: whole as u64,
        });
        Ok(loaded)
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
        let keys: Vec<Digest32> = texts.iter().map(|t| Digest32::of(t.as_bytes())).collect();
        let mut out: Vec<Option<Arc<[f32]>>> = {
            let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            keys.iter().map(|k| cache.get(k).cloned()).collect()
        };
        let mut missing: Vec<(Digest32, &str)> = keys
            .iter()
            .zip(texts)
            .zip(&out)
            .filter(|(_, v)| v.is_none())
            .map(|((k, t), _)| (*k, *t))
            .collect();
        missing.sort_unstable_by_key(|(k, _)| k.0);
        missing.dedup_by_key(|(k, _)| *k);
        if !missing.is_empty() {
            // Batches of texts of similar length: a batch is padded to its longest text, and
            // one long paragraph would make a hundred link names cost as much as itself.
            missing.sort_by_key(|(_, t)| t.len());
            let mut vectors = Vec::with_capacity(missing.len());
            for chunk in missing.chunks(BATCH) {
                let batch: Vec<&str> = chunk.iter().map(|(_, t)| *t).collect();
                vectors.extend(self.run(&batch)?);
            }
            self.persist(&missing, &vectors);
            let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            if cache.len() + missing.len() > CACHE_CAPACITY {
                cache.clear();
            }
            for ((key, _), vector) in missing.iter().zip(vectors) {
                cache.insert(*key, vector);
            }
            for (slot, key) in out.iter_mut().zip(&keys) {
                if slot.is_none() {
                    *slot = cache.get(key).cloned();
                }
            }
        }
        out.into_iter()
            .map(|v| v.ok_or_else(|| ModelError::Inference("a vector went missing".into())))
            .collect()
    }

    /// Appends new vectors to the disk cache, if there is one; a failed write detaches it
    /// (the run goes on with the memory cache) and says so once.
    fn persist(&self, keys: &[(Digest32, &str)], vectors: &[Arc<[f32]>]) {
        use std::io::Write;
        let mut disk = self.disk.lock().unwrap_or_else(|p| p.into_inner());
        let Some(cache) = disk.as_mut() else {
            return;
        };
        if cache.size >= DISK_CACHE_LIMIT {
            return;
        }
        let mut bytes = Vec::with_capacity(keys.len() * (32 + 4 * self.dim));
        for ((key, _), vector) in keys.iter().zip(vectors) {
            bytes.extend_from_slice(&key.0);
            for value in vector.iter() {
                bytes.extend_from_slice(&value.to_le_bytes());
            }
        }
        // One write(2) of whole records: a crash leaves at most a torn last record, which
        // the next load cuts off.
        match cache.file.write_all(&bytes) {
            Ok(()) => cache.size += bytes.len() as u64,
            Err(error) => {
                tracing::warn!(%error, path = %cache.path.display(),
                    "the embedding cache cannot be written; keeping it in memory only");
                *disk = None;
            }
        }
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
        let inputs: Vec<(&[u32], &[u32])> = encodings
            .iter()
            .map(|e| (e.get_ids(), e.get_type_ids()))
            .collect();
        let vectors = self.model.embed(&inputs).map_err(|e| failed(&e))?;
        Ok(vectors.into_iter().map(Arc::from).collect())
    }
}

/// forager's per-user data folder: `$XDG_DATA_HOME/forager`, else `~/.local/share/forager`
/// (the model, the embedding cache, `forager explore`'s memory).
pub fn user_data_dir() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))?;
    Some(data.join("forager"))
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
