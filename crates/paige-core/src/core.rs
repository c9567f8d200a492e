//! The façade: the one object adapters (server, CLI, Tauri shell) hold.

use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::api::{ApiClient, ApiError, ApiSettings, UnknownModel};
use crate::clock::Clock;
use crate::config::Config;
use crate::db::{Db, DbError};
use crate::event::Event;

const EVENT_CAPACITY: usize = 1024;

/// Paige's live state for one project: configuration, database, event bus, and the
/// cancellation token every background loop is tied to.
pub struct Core {
    config: Config,
    db: Db,
    api: ApiClient,
    clock: Arc<dyn Clock>,
    started_at: DateTime<Utc>,
    events: broadcast::Sender<Event>,
    cancel: CancellationToken,
}

#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error("cannot create DATA_DIR {}: {source}", path.display())]
    DataDir { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Db(#[from] DbError),
    #[error(transparent)]
    Model(#[from] UnknownModel),
    #[error(transparent)]
    Api(#[from] ApiError),
}

impl Core {
    /// Creates `DATA_DIR` if needed (and makes it absolute), and opens (or creates) `DATA_DIR/paige.db`.
    pub fn open(mut config: Config, clock: Arc<dyn Clock>) -> Result<Core, CoreError> {
        let data_dir_err = |source| CoreError::DataDir { path: config.data_dir.clone(), source };
        std::fs::create_dir_all(&config.data_dir).map_err(data_dir_err)?;
        config.data_dir = config.data_dir.canonicalize().map_err(data_dir_err)?;
        let db = Db::open(&config.db_path(), clock.clone())?;
        let api = ApiClient::new(ApiSettings::from_config(&config)?)?;
        let (events, _) = broadcast::channel(EVENT_CAPACITY);
        Ok(Core { started_at: clock.now(), config, db, api, clock, events, cancel: CancellationToken::new() })
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The one Claude API client, shared by every feature (all model calls go through it).
    pub fn api(&self) -> &ApiClient {
        &self.api
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// Time since [`Core::open`], by the injected clock.
    pub fn uptime(&self) -> chrono::Duration {
        self.clock.now() - self.started_at
    }

    /// A receiver of every [`Event`] the core pushes from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    /// Pushes an event to every subscriber; having none is fine.
    pub fn emit(&self, event: Event) {
        let _ = self.events.send(event);
    }

    /// A token cancelled at shutdown: background loops take a child of it.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Stops background work and checkpoints the database. Idempotent.
    pub fn shutdown(&self) -> Result<(), DbError> {
        self.cancel.cancel();
        self.emit(Event::ShuttingDown);
        self.db.checkpoint()
    }
}
