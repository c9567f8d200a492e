//! What memory stores and returns, and the two interfaces the memory crate implements.

use serde::{Deserialize, Serialize};

pub use crate::vocab::Importance;

/// The one collection (ChromaDB) / table set (embedded) every project's memories live in.
pub const COLLECTION: &str = "paige_memories";
/// Results per query when the caller names no number (FR-101).
pub const DEFAULT_RESULTS: usize = 10;

/// A memory to store (spec `MemoryInput`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryInput {
    /// The text embedded and searched.
    pub content: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub importance: Importance,
}

/// What is stored beside a memory's text (spec `MemoryMetadata`, plus the project's full
/// path). Primitives only, as ChromaDB's metadata: tags are comma-joined (FR-107).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryMetadata {
    pub session_id: String,
    /// The directory name of the project (`app-alpha`): what queries filter on.
    pub project: String,
    /// The project's full path, for telling apart two projects of the same name.
    #[serde(default)]
    pub project_path: String,
    /// ISO 8601.
    pub created_at: String,
    pub importance: String,
    /// Comma-separated; commas inside a tag are removed (EC-50).
    pub tags: String,
}

/// One recalled memory, best first in a result list (spec `MemoryResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryResult {
    pub id: String,
    pub content: String,
    pub metadata: MemoryMetadata,
    /// Lower is more similar: `1 − cosine` for vectors (as ChromaDB's cosine space).
    pub distance: f32,
}

/// A memory ready for a store: its id, text, metadata and, when the embedder works, its
/// L2-normalised vector.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryRecord {
    pub id: String,
    pub content: String,
    pub metadata: MemoryMetadata,
    pub embedding: Option<Vec<f32>>,
}

/// A search: the text, its vector when the embedder works, how many results, and the
/// optional project filter (FR-102).
#[derive(Debug, Clone, Copy)]
pub struct MemoryQuery<'a> {
    pub text: &'a str,
    pub embedding: Option<&'a [f32]>,
    pub n_results: usize,
    pub project: Option<&'a str>,
}

/// What a store holds, for `paige memory stats`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryStats {
    pub total: usize,
    /// Memories per project, most first.
    pub projects: Vec<(String, usize)>,
    /// Memories stored without a vector (the model was missing when they were added).
    pub without_vectors: usize,
}

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum MemoryError {
    /// The store cannot be reached (ChromaDB down, the database unreadable).
    #[error("{0}")]
    Unavailable(String),
    /// The store answered with an error or something it should not have.
    #[error("{0}")]
    Store(String),
    /// The embedding model is missing or failed.
    #[error("{0}")]
    Embedding(String),
}

/// Turns text into vectors (all-MiniLM-L6-v2: 384-d, mean-pooled, L2-normalised). Blocking:
/// call it off the async runtime's workers.
pub trait Embedder: Send + Sync {
    /// What it is and where it was loaded from, for logs and `paige doctor`.
    fn describe(&self) -> String;
    fn dimension(&self) -> usize;
    /// One vector per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, MemoryError>;
}

/// Where memories live. Blocking (SQLite, HTTP): call it off the async runtime's workers.
pub trait MemoryStore: Send + Sync {
    /// Which store: "ChromaDB", "the embedded store" (for logs and `paige doctor`).
    fn name(&self) -> &str;
    /// Where it is: ChromaDB's URL, the database's path.
    fn location(&self) -> String;
    /// Whether it can rank without vectors (the embedded store's keyword fallback); a store
    /// that cannot is unavailable without an embedder.
    fn ranks_without_vectors(&self) -> bool;
    /// Connects and makes sure the collection exists (FR-097). Called at start and again,
    /// lazily, on the next call after a failure (FR-106).
    fn connect(&self) -> Result<(), MemoryError>;
    /// Stores `records` in one call (EC-51), replacing any with the same id; returns how many.
    fn add(&self, records: &[MemoryRecord]) -> Result<usize, MemoryError>;
    /// The `n_results` nearest memories, best first; fewer when there are fewer (EC-52).
    fn query(&self, query: &MemoryQuery<'_>) -> Result<Vec<MemoryResult>, MemoryError>;
    fn stats(&self) -> Result<MemoryStats, MemoryError>;
    /// Up to `limit` memories stored without a vector (the model was missing when they were
    /// added), as `(id, content)`. Only a store that keeps such memories has any.
    fn without_vectors(&self, _limit: usize) -> Result<Vec<(String, String)>, MemoryError> {
        Ok(Vec::new())
    }
    /// Gives memories stored without a vector their vectors, `(id, vector)`.
    fn set_vectors(&self, _vectors: &[(String, Vec<f32>)]) -> Result<(), MemoryError> {
        Ok(())
    }
}

/// Joins tags for metadata: commas inside a tag are dropped, empty tags skipped (EC-50).
pub fn join_tags(tags: &[String]) -> String {
    tags.iter()
        .map(|tag| tag.replace(',', "").trim().to_owned())
        .filter(|tag| !tag.is_empty())
        .collect::<Vec<_>>()
        .join(",")
}
