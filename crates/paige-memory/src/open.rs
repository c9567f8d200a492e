//! Choosing the store and finding the model for a configuration: what the binaries call.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use paige_core::Config;
use paige_core::memory::{Embedder, Memory, MemoryError, MemoryStore};

use crate::embed::{DIMENSION, MODEL_NAME};
use crate::{ChromaStore, EmbeddedStore, MiniLm};

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
    Memory::new(store, find_model(&dirs))
}

/// The model in the first of `dirs` that has all its files, loaded on first use (so a start
/// does not wait for 90 MB to be read); why there is none otherwise.
pub fn find_model(dirs: &[PathBuf]) -> Result<Arc<dyn Embedder>, String> {
    let found =
        dirs.iter().map(|dir| dir.join(MODEL_NAME)).find(|dir| MODEL_FILES.iter().all(|file| dir.join(file).is_file()));
    match found {
        Some(dir) => Ok(Arc::new(LazyModel { dir, loaded: OnceLock::new() })),
        None => Err(format!(
            "the embedding model {MODEL_NAME} is not installed (looked in {}); `scripts/run.sh` fetches it",
            dirs.iter().map(|dir| dir.join(MODEL_NAME).display().to_string()).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// MiniLM, loaded from `dir` the first time it is needed; a load that fails fails every
/// call with the same reason (the embedded store then ranks by keywords).
struct LazyModel {
    dir: PathBuf,
    loaded: OnceLock<Result<MiniLm, String>>,
}

impl LazyModel {
    fn model(&self) -> Result<&MiniLm, MemoryError> {
        let loaded = self.loaded.get_or_init(|| {
            let started = std::time::Instant::now();
            let model = MiniLm::load(&self.dir);
            match &model {
                Ok(_) => tracing::info!(ms = started.elapsed().as_millis() as u64, "loaded {}", self.describe()),
                Err(err) => tracing::warn!("cannot load the embedding model: {err}"),
            }
            model
        });
        loaded.as_ref().map_err(|err| MemoryError::Embedding(err.clone()))
    }
}

impl Embedder for LazyModel {
    fn describe(&self) -> String {
        format!("{MODEL_NAME} ({DIMENSION}-d) from {}", display(&self.dir))
    }

    fn dimension(&self) -> usize {
        DIMENSION
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, MemoryError> {
        self.model()?.embed(texts)
    }
}

fn display(dir: &Path) -> String {
    dir.display().to_string()
}
