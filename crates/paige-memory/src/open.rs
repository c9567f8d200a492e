//! Choosing the store and finding the model for a configuration: what the binaries call.

use std::path::PathBuf;
use std::sync::Arc;

use paige_core::Config;
use paige_core::memory::{Embedder, Memory, MemoryStore};

use crate::embed::MODEL_NAME;
use crate::lazy::LazyModel;
use crate::{ChromaStore, EmbeddedStore};

const MODEL_FILES: [&str; 3] = ["model.safetensors", "tokenizer.json", "config.json"];

/// Memory for `config`: ChromaDB at `CHROMADB_URL` when set, else the embedded store in
/// `paige.db`; the model from [`Config::models_dir`] or, failing that, the first of
/// `more_model_dirs` (the desktop package's resources) that holds it. Not connected yet:
/// `Core::with_memory` connects it.
pub fn open(config: &Config, more_model_dirs: &[PathBuf]) -> Memory {
    let store: Box<dyn MemoryStore> = match &config.chromadb_url {
        Some(url) => Box::new(ChromaStore::new(url)),
        None => Box::new(EmbeddedStore::new(&config.db_path())),
    };
    let mut dirs = vec![config.models_dir()];
    dirs.extend(more_model_dirs.iter().cloned());
    Memory::new(store, find_model(&dirs, config.limits.embedder_idle))
}

/// The model in the first of `dirs` that has all its files, loaded on first use (so a start
/// does not wait for 90 MB to be read) and released after `idle` (`Limits::embedder_idle`, 5
/// minutes by default) without an embed ([`LazyModel`]); why there is none otherwise.
pub fn find_model(dirs: &[PathBuf], idle: std::time::Duration) -> Result<Arc<dyn Embedder>, String> {
    let found =
        dirs.iter().map(|dir| dir.join(MODEL_NAME)).find(|dir| MODEL_FILES.iter().all(|file| dir.join(file).is_file()));
    match found {
        Some(dir) => Ok(Arc::new(LazyModel::new(&dir, idle))),
        None => Err(format!(
            "the embedding model {MODEL_NAME} is not installed (looked in {}); `scripts/run.sh` fetches it",
            dirs.iter().map(|dir| dir.join(MODEL_NAME).display().to_string()).collect::<Vec<_>>().join(", ")
        )),
    }
}
