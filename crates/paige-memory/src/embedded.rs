//! The embedded store: memories in `paige.db` (tables from `migrations/05-memory`), searched
//! by brute-force cosine over an in-memory copy of the vectors, or by SQLite FTS5 (BM25)
//! when a memory or a query has no vector (the model was missing).
//!
//! The vectors are loaded once and kept in step with what this store writes; a write by
//! another connection (SQLite's `data_version` changes) reloads them before the next query.
//! Distances are `1 − cosine`, as ChromaDB's cosine space; keyword matches get
//! `1 / (1 + bm25 score)`, also lower for better.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use paige_core::memory::{
    MemoryError, MemoryMetadata, MemoryQuery, MemoryRecord, MemoryResult, MemoryStats, MemoryStore,
};
use rusqlite::{Connection, OptionalExtension, params};

use crate::index::VectorIndex;

pub struct EmbeddedStore {
    path: PathBuf,
    state: Mutex<Option<State>>,
}

struct State {
    conn: Connection,
    index: VectorIndex,
    /// `PRAGMA data_version` when `index` was loaded or last written by this connection.
    seen_version: i64,
}

fn store_err(err: rusqlite::Error) -> MemoryError {
    MemoryError::Store(format!("memory database: {err}"))
}

impl EmbeddedStore {
    /// The store in the database at `path` (`DATA_DIR/paige.db`); nothing is opened until
    /// [`MemoryStore::connect`].
    pub fn new(path: &Path) -> EmbeddedStore {
        EmbeddedStore { path: path.to_owned(), state: Mutex::new(None) }
    }

    fn lock(&self) -> MutexGuard<'_, Option<State>> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The open state, connecting first if needed.
    fn with_state<T>(&self, work: impl FnOnce(&mut State) -> Result<T, MemoryError>) -> Result<T, MemoryError> {
        let mut guard = self.lock();
        if guard.is_none() {
            *guard = Some(self.open()?);
        }
        let state = guard.as_mut().expect("opened above");
        let result = work(state);
        if matches!(result, Err(MemoryError::Unavailable(_))) {
            *guard = None;
        }
        result
    }

    fn open(&self) -> Result<State, MemoryError> {
        let unavailable = |err: &dyn std::fmt::Display| {
            MemoryError::Unavailable(format!("cannot open {}: {err}", self.path.display()))
        };
        // Inside a running Paige the core opened (checked, migrated) the database already;
        // otherwise (the CLI on its own) the core's open creates it owner-only and migrates.
        if !schema_is_current(&self.path) {
            paige_core::db::Db::open(&self.path, Arc::new(paige_core::SystemClock)).map_err(|err| unavailable(&err))?;
        }
        let conn = Connection::open(&self.path).map_err(|err| unavailable(&err))?;
        conn.busy_timeout(Duration::from_secs(5)).map_err(|err| unavailable(&err))?;
        conn.pragma_update(None, "foreign_keys", true).map_err(|err| unavailable(&err))?;
        let seen_version = data_version(&conn)?;
        let index = VectorIndex::load(&conn)?;
        Ok(State { conn, index, seen_version })
    }
}

/// Whether the database exists with every migration applied (no pending one).
fn schema_is_current(path: &Path) -> bool {
    path.is_file()
        && Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .is_ok_and(|conn| paige_core::db::MIGRATIONS.pending_migrations(&conn).is_ok_and(|pending| pending == 0))
}

fn data_version(conn: &Connection) -> Result<i64, MemoryError> {
    conn.query_row("PRAGMA data_version", [], |row| row.get(0)).map_err(store_err)
}

impl State {
    /// Reloads the vectors when another connection wrote since they were loaded.
    fn refresh(&mut self) -> Result<(), MemoryError> {
        let version = data_version(&self.conn)?;
        if version != self.seen_version {
            self.index = VectorIndex::load(&self.conn)?;
            self.seen_version = version;
        }
        Ok(())
    }

    fn results(&self, hits: &[(String, f32)]) -> Result<Vec<MemoryResult>, MemoryError> {
        let mut statement = self
            .conn
            .prepare_cached(
                "SELECT content, session_id, project, project_path, created_at, importance, tags
                 FROM memories WHERE id = ?1",
            )
            .map_err(store_err)?;
        let mut results = Vec::with_capacity(hits.len());
        for (id, distance) in hits {
            let row = statement
                .query_row([id], |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        MemoryMetadata {
                            session_id: row.get(1)?,
                            project: row.get(2)?,
                            project_path: row.get(3)?,
                            created_at: row.get(4)?,
                            importance: row.get(5)?,
                            tags: row.get(6)?,
                        },
                    ))
                })
                .optional()
                .map_err(store_err)?;
            if let Some((content, metadata)) = row {
                results.push(MemoryResult { id: id.clone(), content, metadata, distance: *distance });
            }
        }
        Ok(results)
    }

    /// Keyword search: every word of the query as an FTS5 term, any of them matching,
    /// best BM25 first. A query without words lists the newest memories.
    fn lexical(&self, text: &str, n: usize, project: Option<&str>) -> Result<Vec<(String, f32)>, MemoryError> {
        let terms: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|word| !word.is_empty())
            .map(|word| format!("\"{word}\""))
            .collect();
        let limit = i64::try_from(n).unwrap_or(i64::MAX);
        let rows: Vec<(String, f64)> = if terms.is_empty() {
            let mut statement = self
                .conn
                .prepare_cached(
                    "SELECT id, 0.0 FROM memories WHERE (?1 IS NULL OR project = ?1)
                     ORDER BY created_at DESC, rowid DESC LIMIT ?2",
                )
                .map_err(store_err)?;
            statement
                .query_map(params![project, limit], |row| Ok((row.get(0)?, row.get(1)?)))
                .and_then(|rows| rows.collect())
                .map_err(store_err)?
        } else {
            let mut statement = self
                .conn
                .prepare_cached(
                    "SELECT m.id, bm25(memories_fts) FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid
                     WHERE memories_fts MATCH ?1 AND (?2 IS NULL OR m.project = ?2)
                     ORDER BY bm25(memories_fts) LIMIT ?3",
                )
                .map_err(store_err)?;
            statement
                .query_map(params![terms.join(" OR "), project, limit], |row| Ok((row.get(0)?, row.get(1)?)))
                .and_then(|rows| rows.collect())
                .map_err(store_err)?
        };
        // bm25() is negative, more negative for a better match.
        Ok(rows.into_iter().map(|(id, score)| (id, (1.0 / (1.0 + (-score).max(0.0))) as f32)).collect())
    }
}

impl MemoryStore for EmbeddedStore {
    fn name(&self) -> &str {
        "the embedded store"
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn ranks_without_vectors(&self) -> bool {
        true
    }

    fn connect(&self) -> Result<(), MemoryError> {
        let mut guard = self.lock();
        *guard = Some(self.open()?);
        Ok(())
    }

    fn add(&self, records: &[MemoryRecord]) -> Result<usize, MemoryError> {
        if records.is_empty() {
            return Ok(0);
        }
        self.with_state(|state| {
            state.refresh()?;
            let tx = state.conn.transaction().map_err(store_err)?;
            {
                let mut upsert = tx
                    .prepare_cached(
                        "INSERT INTO memories (id, content, session_id, project, project_path, created_at, importance, tags)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                         ON CONFLICT(id) DO UPDATE SET content = excluded.content, session_id = excluded.session_id,
                           project = excluded.project, project_path = excluded.project_path,
                           created_at = excluded.created_at, importance = excluded.importance, tags = excluded.tags",
                    )
                    .map_err(store_err)?;
                let mut set_vector = tx
                    .prepare_cached(
                        "INSERT INTO memory_vectors (id, dimension, vector) VALUES (?1, ?2, ?3)
                         ON CONFLICT(id) DO UPDATE SET dimension = excluded.dimension, vector = excluded.vector",
                    )
                    .map_err(store_err)?;
                let mut drop_vector = tx.prepare_cached("DELETE FROM memory_vectors WHERE id = ?1").map_err(store_err)?;
                for record in records {
                    let m = &record.metadata;
                    upsert
                        .execute(params![
                            record.id,
                            record.content,
                            m.session_id,
                            m.project,
                            m.project_path,
                            m.created_at,
                            m.importance,
                            m.tags
                        ])
                        .map_err(store_err)?;
                    match &record.embedding {
                        Some(vector) => set_vector
                            .execute(params![record.id, vector.len() as i64, crate::index::to_blob(vector)])
                            .map_err(store_err)?,
                        None => drop_vector.execute([&record.id]).map_err(store_err)?,
                    };
                }
            }
            tx.commit().map_err(store_err)?;
            for record in records {
                state.index.upsert(&record.id, &record.metadata.project, record.embedding.as_deref());
            }
            state.seen_version = data_version(&state.conn)?;
            Ok(records.len())
        })
    }

    fn query(&self, query: &MemoryQuery<'_>) -> Result<Vec<MemoryResult>, MemoryError> {
        if query.n_results == 0 {
            return Ok(Vec::new());
        }
        self.with_state(|state| {
            state.refresh()?;
            let hits = match query.embedding {
                Some(vector) => state.index.nearest(vector, query.n_results, query.project),
                None => state.lexical(query.text, query.n_results, query.project)?,
            };
            state.results(&hits)
        })
    }

    fn without_vectors(&self, limit: usize) -> Result<Vec<(String, String)>, MemoryError> {
        self.with_state(|state| {
            let mut statement = state
                .conn
                .prepare_cached(
                    "SELECT m.id, m.content FROM memories m LEFT JOIN memory_vectors v ON v.id = m.id
                     WHERE v.id IS NULL ORDER BY m.rowid LIMIT ?1",
                )
                .map_err(store_err)?;
            statement
                .query_map([i64::try_from(limit).unwrap_or(i64::MAX)], |row| Ok((row.get(0)?, row.get(1)?)))
                .and_then(|rows| rows.collect())
                .map_err(store_err)
        })
    }

    fn set_vectors(&self, vectors: &[(String, Vec<f32>)]) -> Result<(), MemoryError> {
        self.with_state(|state| {
            state.refresh()?;
            let tx = state.conn.transaction().map_err(store_err)?;
            let mut projects = Vec::with_capacity(vectors.len());
            {
                let mut project_of =
                    tx.prepare_cached("SELECT project FROM memories WHERE id = ?1").map_err(store_err)?;
                let mut set_vector = tx
                    .prepare_cached(
                        "INSERT INTO memory_vectors (id, dimension, vector) VALUES (?1, ?2, ?3)
                         ON CONFLICT(id) DO UPDATE SET dimension = excluded.dimension, vector = excluded.vector",
                    )
                    .map_err(store_err)?;
                for (id, vector) in vectors {
                    let Some(project) =
                        project_of.query_row([id], |row| row.get::<_, String>(0)).optional().map_err(store_err)?
                    else {
                        continue;
                    };
                    set_vector
                        .execute(params![id, vector.len() as i64, crate::index::to_blob(vector)])
                        .map_err(store_err)?;
                    projects.push((id, project, vector));
                }
            }
            tx.commit().map_err(store_err)?;
            for (id, project, vector) in projects {
                state.index.upsert(id, &project, Some(vector));
            }
            state.seen_version = data_version(&state.conn)?;
            Ok(())
        })
    }

    fn stats(&self) -> Result<MemoryStats, MemoryError> {
        self.with_state(|state| {
            let mut statement = state
                .conn
                .prepare_cached(
                    "SELECT project, COUNT(*) FROM memories GROUP BY project ORDER BY COUNT(*) DESC, project",
                )
                .map_err(store_err)?;
            let projects: Vec<(String, usize)> = statement
                .query_map([], |row| Ok((row.get(0)?, row.get::<_, i64>(1)? as usize)))
                .and_then(|rows| rows.collect())
                .map_err(store_err)?;
            let without_vectors: i64 = state
                .conn
                .query_row(
                    "SELECT COUNT(*) FROM memories m LEFT JOIN memory_vectors v ON v.id = m.id WHERE v.id IS NULL",
                    [],
                    |row| row.get(0),
                )
                .map_err(store_err)?;
            Ok(MemoryStats {
                total: projects.iter().map(|(_, count)| count).sum(),
                projects,
                without_vectors: without_vectors as usize,
            })
        })
    }
}
