//! Answers kept on disk, keyed by the endpoint, the model and the digest of the whole request:
//! a question asked before (a page seen before, a second run of a task) costs nothing. One
//! small JSON file per answer under two-hex-digit folders, written to a temporary file and
//! renamed, so a crash leaves either the old answer or the new one.
//!
//! The folder is `$FORAGER_MODEL_CACHE`, else the per-user data folder's `model-cache/`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// An answer as kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cached {
    /// The answer's JSON.
    pub value: Value,
    /// What it cost when it was asked.
    pub prompt_tokens: u64,
    /// Completion tokens then.
    pub completion_tokens: u64,
}

/// The on-disk cache.
#[derive(Debug, Clone)]
pub struct AnswerCache {
    dir: PathBuf,
}

impl AnswerCache {
    /// A cache in `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> AnswerCache {
        AnswerCache { dir: dir.into() }
    }

    /// Its folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of a request to `url` for `model` with this body.
    pub fn key(url: &str, model: &str, body: &Value) -> String {
        let mut hash = Sha256::new();
        for part in [url, model, &body.to_string()] {
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part.as_bytes());
        }
        hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{}.json", &key[2..]))
    }

    /// The answer kept under `key`; a missing or unreadable one is none.
    pub fn get(&self, key: &str) -> Option<Cached> {
        let text = std::fs::read(self.path(key)).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Keeps an answer; a failure to write is logged, not fatal (the answer was had).
    pub fn put(&self, key: &str, answer: &Cached) {
        let path = self.path(key);
        let write = || -> std::io::Result<()> {
            let folder = path.parent().unwrap_or(&self.dir);
            std::fs::create_dir_all(folder)?;
            let mut file = tempfile::NamedTempFile::new_in(folder)?;
            serde_json::to_writer(&mut file, answer)?;
            file.persist(&path).map_err(|e| e.error)?;
            Ok(())
        };
        if let Err(error) = write() {
            tracing::warn!(%error, path = %path.display(), "cannot keep a model answer");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_come_back_by_key_and_only_by_key() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = AnswerCache::new(dir.path().join("cache"));
        let key = AnswerCache::key("http://127.0.0.1:1/v1", "m", &json!({"q": 1}));
        assert_eq!(key.len(), 64);
        assert_ne!(
            key,
            AnswerCache::key("http://127.0.0.1:1/v1", "m", &json!({"q": 2}))
        );
        assert_ne!(
            key,
            AnswerCache::key("http://127.0.0.1:1/v1", "n", &json!({"q": 1}))
        );
        assert!(cache.get(&key).is_none());
        let answer = Cached {
            value: json!({"choice": 1}),
            prompt_tokens: 10,
            completion_tokens: 2,
        };
        cache.put(&key, &answer);
        assert_eq!(cache.get(&key), Some(answer));
        // A torn or foreign file is no answer.
        std::fs::write(cache.path(&key), b"{\"value\":").expect("write");
        assert!(cache.get(&key).is_none());
    }
}
