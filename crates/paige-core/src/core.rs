//! The façade: the one object adapters (server, CLI, Tauri shell) hold.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Utc};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::api::{ApiClient, ApiError, ApiSettings, UnknownModel};
use crate::buffers::Buffers;
use crate::clock::Clock;
use crate::config::Config;
use crate::db::{Db, DbError, Session};
use crate::event::Event;
use crate::files::{ProjectRoot, Watcher};
use crate::protocol::{ConnectionId, ConnectionMeta, ServerMessage, TerminalSize};

const EVENT_CAPACITY: usize = 4096;

/// Paige's live state for one project: configuration, database, the editor's buffers and
/// open files, connected UIs, the active session, the event bus, and the owned background
/// tasks (all stopped by [`Core::shutdown`]).
pub struct Core {
    config: Config,
    root: ProjectRoot,
    db: Db,
    api: ApiClient,
    clock: Arc<dyn Clock>,
    started_at: DateTime<Utc>,
    events: broadcast::Sender<Event>,
    cancel: CancellationToken,
    tasks: TaskTracker,
    live: Mutex<Live>,
    watcher: Mutex<Option<Watcher>>,
    terminals: crate::terminal::Terminals,
}

/// In-memory state, behind one short-held lock. Never held across I/O or `.await`.
#[derive(Default)]
pub(crate) struct Live {
    pub(crate) buffers: Buffers,
    pub(crate) open_files: BTreeSet<String>,
    pub(crate) connections: HashMap<ConnectionId, ConnectionMeta>,
    pub(crate) next_connection: u64,
    pub(crate) terminal: Option<TerminalSize>,
    pub(crate) session: Option<ActiveSession>,
    /// Last diff per path, valid while the buffer version and the file's disk stamp match.
    pub(crate) diffs: HashMap<String, CachedDiff>,
}

pub(crate) struct CachedDiff {
    pub(crate) buffer_version: u64,
    pub(crate) disk: Option<(u64, std::time::SystemTime)>,
    pub(crate) diff: String,
}

pub(crate) struct ActiveSession {
    pub(crate) session: Session,
    /// Cancels the session's own loops (buffer summaries).
    pub(crate) cancel: CancellationToken,
}

#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error("cannot create DATA_DIR {}: {source}", path.display())]
    DataDir { path: PathBuf, source: std::io::Error },
    #[error("cannot open PROJECT_DIR {}: {source}", path.display())]
    ProjectDir { path: PathBuf, source: std::io::Error },
    #[error("cannot watch the project: {0}")]
    Watch(#[from] notify::Error),
    #[error(transparent)]
    Db(#[from] DbError),
    #[error(transparent)]
    Model(#[from] UnknownModel),
    #[error(transparent)]
    Api(#[from] ApiError),
}

impl Core {
    /// Creates `DATA_DIR` if needed (and makes it absolute), and opens (or creates)
    /// `DATA_DIR/paige.db`. Starts nothing in the background.
    pub fn open(mut config: Config, clock: Arc<dyn Clock>) -> Result<Core, CoreError> {
        let data_dir_err = |source| CoreError::DataDir { path: config.data_dir.clone(), source };
        std::fs::create_dir_all(&config.data_dir).map_err(data_dir_err)?;
        config.data_dir = config.data_dir.canonicalize().map_err(data_dir_err)?;
        let root = ProjectRoot::new(&config.project_dir)
            .map_err(|source| CoreError::ProjectDir { path: config.project_dir.clone(), source })?;
        let db = Db::open(&config.db_path(), clock.clone())?;
        let api = ApiClient::new(ApiSettings::from_config(&config)?)?;
        let (events, _) = broadcast::channel(EVENT_CAPACITY);
        Ok(Core {
            started_at: clock.now(),
            config,
            root,
            db,
            api,
            clock,
            events,
            cancel: CancellationToken::new(),
            tasks: TaskTracker::new(),
            live: Mutex::new(Live::default()),
            watcher: Mutex::new(None),
            terminals: Default::default(),
        })
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn project_root(&self) -> &ProjectRoot {
        &self.root
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

    /// Sends a message to every connected UI.
    pub fn broadcast(&self, message: ServerMessage) {
        self.emit(Event::Ui(message));
    }

    /// A token cancelled at shutdown: background loops take a child of it.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Announces this process as the running Paige: writes `DATA_DIR/run/server.json` (0600)
    /// with `port` and `token`. Returns what was written and where.
    pub fn announce(&self, port: u16, token: &str) -> anyhow::Result<(crate::run_info::RunInfo, PathBuf)> {
        let info = crate::run_info::RunInfo {
            pid: std::process::id(),
            port,
            token: token.to_owned(),
            project_dir: self.config.project_dir.clone(),
            started_at: self.now(),
        };
        let path = crate::run_info::write(&self.config.data_dir, &info)?;
        Ok((info, path))
    }

    /// Starts watching the project; changes are broadcast as `fs:tree_update`. Idempotent.
    pub fn start_watcher(self: &Arc<Self>) -> Result<(), CoreError> {
        let mut slot = self.watcher.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            let core = Arc::downgrade(self);
            *slot = Some(Watcher::start(&self.root, move |change| {
                if let Some(core) = core.upgrade() {
                    core.broadcast(ServerMessage::FsTreeUpdate(change));
                }
            })?);
        }
        Ok(())
    }

    /// Stops the watcher and every background task, then checkpoints the database.
    /// Idempotent.
    pub async fn shutdown(&self) -> Result<(), DbError> {
        self.cancel.cancel();
        if let Some(watcher) = self.watcher.lock().unwrap_or_else(|p| p.into_inner()).take() {
            watcher.stop();
            tracing::info!("shutdown: file watcher stopped");
        }
        for terminal in self.terminals.take_all() {
            terminal.kill();
        }
        self.tasks.close();
        self.tasks.wait().await;
        self.emit(Event::ShuttingDown);
        self.db.checkpoint()
    }

    pub(crate) fn terminals(&self) -> &crate::terminal::Terminals {
        &self.terminals
    }

    pub(crate) fn live(&self) -> MutexGuard<'_, Live> {
        // Live state is plain data updated in small steps; a panic elsewhere cannot leave it
        // half-written in a way later calls would trip over.
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn tasks(&self) -> &TaskTracker {
        &self.tasks
    }
}
