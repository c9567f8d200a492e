//! Memory (spec Story 8): coaching memories kept across sessions and recalled by meaning.
//!
//! [`Memory`] holds one [`MemoryStore`] and, when the model loaded, one [`Embedder`]; both
//! come from the `paige-memory` crate, built by the binaries (the core never links the model
//! code). Paige embeds for every store, so nothing needs the internet at run time and both
//! stores rank alike.
//!
//! Degradation as the spec says (D38, D39): a store that cannot be reached makes memory
//! unavailable — adds return `{added: 0}`, queries `[]`, each with a warning, never an error
//! — and the next call tries to connect again. Without the model the embedded store still
//! works, ranking by keywords; ChromaDB, which needs vectors, is unavailable.
//!
//! Every method blocks (the model, SQLite, HTTP): call them off the async runtime's workers.

mod types;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

pub use types::*;

/// Who adds memories: a coaching session (ids `mem_{session}_{index}`, FR-100) or the
/// command line (ids `mem_cli_{uuid}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Session(String),
    Cli,
}

/// The project memories are filed under: its directory name (what queries filter on) and
/// its full path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectName {
    pub name: String,
    pub path: String,
}

impl ProjectName {
    pub fn of(dir: &std::path::Path) -> ProjectName {
        let name = dir.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_else(|| "/".into());
        ProjectName { name, path: dir.display().to_string() }
    }
}

/// The result of an add (spec: `{ added: number }`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Added {
    pub added: usize,
}

/// Which store and embedder are in use, and whether memory works now (`paige doctor`,
/// `paige memory stats`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryStatus {
    pub store: String,
    pub location: String,
    /// The embedding model in use…
    pub model: Option<String>,
    /// …or why there is none.
    pub model_problem: Option<String>,
    pub available: bool,
}

pub struct Memory {
    store: Option<Box<dyn MemoryStore>>,
    embedder: Result<Arc<dyn Embedder>, String>,
    available: AtomicBool,
    /// Whether memories stored without a vector were given theirs (once per run).
    backfilled: AtomicBool,
}

/// Memories embedded per model call when catching up.
const BACKFILL_BATCH: usize = 32;

impl Memory {
    /// Memory over `store`, with `embedder` or the reason it could not be loaded. Not yet
    /// connected: [`Memory::connect`] does that at start.
    pub fn new(store: Box<dyn MemoryStore>, embedder: Result<Arc<dyn Embedder>, String>) -> Memory {
        Memory { store: Some(store), embedder, available: AtomicBool::new(false), backfilled: AtomicBool::new(false) }
    }

    /// No memory at all (tests, tools that do not need it).
    pub fn disabled(reason: &str) -> Memory {
        Memory {
            store: None,
            embedder: Err(reason.to_owned()),
            available: AtomicBool::new(false),
            backfilled: AtomicBool::new(false),
        }
    }

    /// Connects at start and logs the outcome (FR-096…FR-098); `isMemoryAvailable()` after.
    pub fn connect(&self) -> bool {
        let Some(store) = self.store.as_deref() else { return false };
        if let Err(problem) = &self.embedder {
            if store.ranks_without_vectors() {
                tracing::warn!(
                    "the embedding model is not available ({problem}); memory ranks by keywords until it is installed"
                );
            } else {
                tracing::warn!(
                    "{} needs the embedding model, which is not available ({problem}) — memory features disabled",
                    store.name()
                );
                return false;
            }
        }
        self.try_connect(store, false)
    }

    fn try_connect(&self, store: &dyn MemoryStore, recovering: bool) -> bool {
        match store.connect() {
            Ok(()) => {
                self.available.store(true, Ordering::SeqCst);
                if recovering {
                    tracing::info!("{} reconnected — memory features restored", store.name());
                } else {
                    tracing::info!("{} connected — collection {COLLECTION} ready", store.name());
                }
                true
            }
            Err(err) => {
                self.available.store(false, Ordering::SeqCst);
                tracing::warn!(
                    "{} unavailable at {} — memory features disabled ({err})",
                    store.name(),
                    store.location()
                );
                false
            }
        }
    }

    /// Spec `isMemoryAvailable()` (FR-105): whether the last connection attempt or
    /// operation succeeded.
    pub fn is_available(&self) -> bool {
        self.available.load(Ordering::SeqCst)
    }

    pub fn status(&self) -> MemoryStatus {
        MemoryStatus {
            store: self.store.as_ref().map_or("none".into(), |store| store.name().to_owned()),
            location: self.store.as_ref().map(|store| store.location()).unwrap_or_default(),
            model: self.embedder.as_ref().ok().map(|embedder| embedder.describe()),
            model_problem: self.embedder.as_ref().err().cloned(),
            available: self.is_available(),
        }
    }

    /// The store, connecting first when the last attempt failed (FR-106); `None` (logged)
    /// when it still cannot be reached or cannot work without the missing model.
    fn ready(&self, operation: &str) -> Option<&dyn MemoryStore> {
        let Some(store) = self.store.as_deref() else {
            tracing::warn!("memory is not configured; {operation} skipped");
            return None;
        };
        if self.embedder.is_err() && !store.ranks_without_vectors() {
            tracing::warn!("{} needs the embedding model; {operation} skipped", store.name());
            return None;
        }
        if self.is_available() || self.try_connect(store, true) {
            Some(store)
        } else {
            tracing::warn!("memory unavailable; {operation} skipped");
            None
        }
    }

    /// A runtime failure: memory is unavailable until the next call reconnects (EC-47, EC-53).
    fn failed(&self, store: &dyn MemoryStore, operation: &str, err: &MemoryError) {
        self.available.store(false, Ordering::SeqCst);
        tracing::warn!("{} failed during {operation}: {err} — memory unavailable until it reconnects", store.name());
    }

    /// Vectors for `texts`, or `None` (logged) when the model is missing or fails — the
    /// embedded store then falls back to keywords.
    fn embed(&self, texts: &[&str]) -> Result<Option<Vec<Vec<f32>>>, MemoryError> {
        match &self.embedder {
            Err(_) => Ok(None),
            Ok(embedder) => match embedder.embed(texts) {
                Ok(vectors) if vectors.len() == texts.len() => Ok(Some(vectors)),
                Ok(vectors) => Err(MemoryError::Embedding(format!(
                    "the model returned {} vectors for {} texts",
                    vectors.len(),
                    texts.len()
                ))),
                Err(err) => Err(err),
            },
        }
    }

    /// Spec `addMemories()` (FR-099, FR-100, FR-103): stores `memories` in one call.
    pub fn add_memories(
        &self,
        memories: &[MemoryInput],
        origin: &Origin,
        project: &ProjectName,
        now: DateTime<Utc>,
    ) -> Added {
        if memories.is_empty() {
            return Added { added: 0 };
        }
        let Some(store) = self.ready("add") else { return Added { added: 0 } };
        let texts: Vec<&str> = memories.iter().map(|memory| memory.content.as_str()).collect();
        let vectors = match self.embed(&texts) {
            Ok(vectors) => vectors,
            Err(err) if store.ranks_without_vectors() => {
                tracing::warn!("cannot embed the new memories ({err}); they are stored for keyword search");
                None
            }
            Err(err) => {
                self.failed(store, "add", &err);
                return Added { added: 0 };
            }
        };
        let created_at = now.to_rfc3339_opts(SecondsFormat::Millis, true);
        let session_id = match origin {
            Origin::Session(id) => id.as_str(),
            Origin::Cli => "cli",
        };
        let records: Vec<MemoryRecord> = memories
            .iter()
            .enumerate()
            .map(|(index, memory)| MemoryRecord {
                id: match origin {
                    Origin::Session(id) => format!("mem_{id}_{index}"),
                    Origin::Cli => format!("mem_cli_{}", uuid::Uuid::new_v4()),
                },
                content: memory.content.clone(),
                metadata: MemoryMetadata {
                    session_id: session_id.to_owned(),
                    project: project.name.clone(),
                    project_path: project.path.clone(),
                    created_at: created_at.clone(),
                    importance: memory.importance.as_str().to_owned(),
                    tags: join_tags(&memory.tags),
                },
                embedding: vectors.as_ref().map(|vectors| vectors[index].clone()),
            })
            .collect();
        match store.add(&records) {
            Ok(added) => Added { added },
            Err(err) => {
                self.failed(store, "add", &err);
                Added { added: 0 }
            }
        }
    }

    /// Gives the memories stored while the model was missing their vectors, so semantic
    /// search finds them too. Once per run, before the first query that has a vector;
    /// returns how many were embedded.
    fn backfill(&self, store: &dyn MemoryStore, embedder: &dyn Embedder) -> usize {
        if self.backfilled.swap(true, Ordering::SeqCst) {
            return 0;
        }
        let mut done = 0;
        loop {
            let pending = match store.without_vectors(BACKFILL_BATCH) {
                Ok(pending) if !pending.is_empty() => pending,
                Ok(_) => break,
                Err(err) => {
                    tracing::warn!("cannot list the memories without vectors: {err}");
                    break;
                }
            };
            let texts: Vec<&str> = pending.iter().map(|(_, content)| content.as_str()).collect();
            let vectors = match embedder.embed(&texts) {
                Ok(vectors) if vectors.len() == texts.len() => vectors,
                Ok(_) | Err(_) => {
                    tracing::warn!("cannot embed the memories stored without vectors; they stay keyword-only");
                    break;
                }
            };
            let pairs: Vec<(String, Vec<f32>)> = pending.into_iter().map(|(id, _)| id).zip(vectors).collect();
            if let Err(err) = store.set_vectors(&pairs) {
                tracing::warn!("cannot store the vectors of older memories: {err}");
                break;
            }
            done += pairs.len();
        }
        if done > 0 {
            tracing::info!(count = done, "embedded the memories stored while the model was missing");
        }
        done
    }

    /// Spec `queryMemories()` (FR-101, FR-102, FR-104): the nearest memories, best first;
    /// `n_results` defaults to 10. An empty query is passed through as is (EC-49).
    pub fn query_memories(&self, text: &str, n_results: Option<usize>, project: Option<&str>) -> Vec<MemoryResult> {
        let Some(store) = self.ready("query") else { return Vec::new() };
        if let Ok(embedder) = &self.embedder {
            self.backfill(store, embedder.as_ref());
        }
        let vector = match self.embed(&[text]) {
            Ok(vectors) => vectors.and_then(|mut vectors| vectors.pop()),
            Err(err) if store.ranks_without_vectors() => {
                tracing::warn!("cannot embed the query ({err}); ranking by keywords");
                None
            }
            Err(err) => {
                self.failed(store, "query", &err);
                return Vec::new();
            }
        };
        let query = MemoryQuery {
            text,
            embedding: vector.as_deref(),
            n_results: n_results.unwrap_or(DEFAULT_RESULTS),
            project,
        };
        match store.query(&query) {
            Ok(results) => results,
            Err(err) => {
                self.failed(store, "query", &err);
                Vec::new()
            }
        }
    }

    /// What the store holds; `None` (logged) when it is unavailable.
    pub fn stats(&self) -> Option<MemoryStats> {
        let store = self.ready("stats")?;
        match store.stats() {
            Ok(stats) => Some(stats),
            Err(err) => {
                self.failed(store, "stats", &err);
                None
            }
        }
    }
}
