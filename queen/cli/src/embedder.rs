//! The sentence model a command reads pages with: the folder `--embedder` names, else the
//! installed default, else none (hashed n-grams, said once on stderr). A model named
//! explicitly that cannot be loaded is the user's error (exit 2); a missing default is not.

use crate::BadInput;
use crate::cli::EmbedderArgs;
use forager_node::model::{SentenceModel, user_data_dir};
use std::path::Path;
use std::sync::Arc;

/// What `--embedder` chose.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Choice {
    /// Hashed n-grams only.
    Ngram,
    /// This folder, named by the user: it must load.
    Named(std::path::PathBuf),
    /// The installed default, if there is one.
    Default,
}

fn choice(args: &EmbedderArgs) -> Choice {
    match args.embedder.as_deref() {
        Some("ngram" | "ngrams" | "none") => Choice::Ngram,
        Some(dir) => Choice::Named(dir.into()),
        None => Choice::Default,
    }
}

/// Loads the model `args` names, with its embedding cache kept in `cache_dir` (default: the
/// per-user data folder's `cache/embeddings`).
pub fn load(
    args: &EmbedderArgs,
    cache_dir: Option<&Path>,
) -> anyhow::Result<Option<Arc<SentenceModel>>> {
    let (dir, named) = match choice(args) {
        Choice::Ngram => return Ok(None),
        Choice::Named(dir) => (dir, true),
        Choice::Default => match SentenceModel::default_dir() {
            Some(dir) => (dir, false),
            None => {
                eprintln!(
                    "no sentence-embedding model (no home folder); reading pages with n-grams"
                );
                return Ok(None);
            }
        },
    };
    let model = match SentenceModel::load(&dir) {
        Ok(model) => model,
        Err(error) if named => return Err(BadInput(format!("--embedder: {error}")).into()),
        Err(error) => {
            eprintln!("{error}; reading pages with n-grams");
            return Ok(None);
        }
    };
    let cache = cache_dir
        .map(Path::to_path_buf)
        .or_else(|| user_data_dir().map(|d| d.join("cache").join("embeddings")));
    if let Some(cache) = cache {
        match model.attach_disk_cache(&cache) {
            Ok(loaded) => tracing::info!(loaded, dir = %cache.display(), "embedding cache"),
            Err(error) => eprintln!("{error}; the embedding cache stays in memory"),
        }
    }
    tracing::info!(model = model.name(), digest = %model.digest().to_hex(), "sentence model");
    Ok(Some(Arc::new(model)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_chooses() {
        let args = |value: Option<&str>| EmbedderArgs {
            embedder: value.map(str::to_owned),
        };
        assert_eq!(choice(&args(Some("ngram"))), Choice::Ngram);
        assert_eq!(choice(&args(None)), Choice::Default);
        assert_eq!(
            choice(&args(Some("/models/x"))),
            Choice::Named("/models/x".into())
        );
    }

    #[test]
    fn a_named_folder_that_does_not_load_is_bad_input() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let args = EmbedderArgs {
            embedder: Some(dir.path().display().to_string()),
        };
        let error = load(&args, Some(dir.path())).expect_err("nothing to load");
        assert!(error.downcast_ref::<BadInput>().is_some(), "{error}");
        assert!(error.to_string().contains("config.json"), "{error}");
    }
}
