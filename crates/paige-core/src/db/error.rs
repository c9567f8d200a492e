use std::path::PathBuf;

/// What can go wrong with the database, in terms a caller can act on.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("cannot open database {}: {source}", path.display())]
    Open { path: PathBuf, source: rusqlite::Error },
    #[error("cannot make database {} private (mode 0600): {source}", path.display())]
    Permissions { path: PathBuf, source: std::io::Error },
    #[error("database file {} is corrupted or not a SQLite database ({detail}); it was left untouched — move it aside to start fresh", path.display())]
    Corrupt { path: PathBuf, detail: String },
    #[error("cannot bring database {} up to date: {source}", path.display())]
    Migration { path: PathBuf, source: rusqlite_migration::Error },
    #[error("{entity} refers to {parent} {parent_id:?}, which does not exist")]
    MissingParent { entity: &'static str, parent: &'static str, parent_id: String },
    #[error("{entity} {id:?} not found")]
    NotFound { entity: &'static str, id: String },
    #[error("cannot encode a JSON column: {0}")]
    Json(#[from] serde_json::Error),
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

impl DbError {
    /// Maps a foreign-key violation on insert to [`DbError::MissingParent`].
    pub(super) fn on_insert(
        entity: &'static str,
        parent: &'static str,
        parent_id: &str,
    ) -> impl FnOnce(rusqlite::Error) -> DbError {
        move |err| match err.sqlite_error_code() {
            Some(rusqlite::ErrorCode::ConstraintViolation) if err.to_string().contains("FOREIGN KEY") => {
                DbError::MissingParent { entity, parent, parent_id: parent_id.to_owned() }
            }
            _ => DbError::Sqlite(err),
        }
    }

    pub(super) fn not_found(entity: &'static str, id: &str) -> impl FnOnce(rusqlite::Error) -> DbError {
        move |err| match err {
            rusqlite::Error::QueryReturnedNoRows => DbError::NotFound { entity, id: id.to_owned() },
            other => DbError::Sqlite(other),
        }
    }
}
