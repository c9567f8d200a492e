//! The façade: the one object adapters (server, CLI, Tauri shell) hold.

use crate::sync::Locked;
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
use crate::db::{Db, DbError};
use crate::event::Event;
use crate::files::{ProjectRoot, WatchEvent, Watcher};
use crate::live::Live;
use crate::protocol::ServerMessage;

const EVENT_CAPACITY: usize = 4096;

/// Paige's live state for one project: configuration, database, the editor's buffers and
/// open files, connected UIs, the active session, the event bus, and the owned background
/// tasks (all stopped by [`Core::shutdown`]).
pub struct Core {
    config: Config,
    /// What every feature may use (`ctx.rs`).
    ctx: Arc<crate::ctx::Ctx>,
    started_at: DateTime<Utc>,
    watcher: Mutex<Option<Watcher>>,
    terminals: Arc<crate::terminal::Terminals>,
    detector: Arc<crate::detector::Detector>,
    /// The phases' step checks (`checks/`).
    checks: Arc<crate::checks::StepChecks>,
    /// The live session's Observer (`observer/`).
    observer: Arc<crate::observer::Observer>,
    /// The dashboard (`dashboard/`): its kept model answers and the UIs showing it.
    dashboard: Arc<crate::dashboard::Dashboard>,
    /// The coaching session and all that hangs off it (`coaching/`).
    coaching: Arc<crate::coaching::Coaching>,
    /// The editor's unsaved changes as diffs (`diffs.rs`).
    diffs: Arc<crate::diffs::Diffs>,
    /// The hook engine (`governance/`).
    governance: crate::governance::Governance,
}

#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error("cannot create DATA_DIR {}: {source}", path.display())]
    DataDir { path: PathBuf, source: std::io::Error },
    #[error("DATA_DIR {} {why}: Paige keeps its database there — make it writable or set DATA_DIR to another folder", path.display())]
    DataDirReadOnly { path: PathBuf, why: &'static str },
    #[error("cannot open PROJECT_DIR {}: {source}", path.display())]
    ProjectDir { path: PathBuf, source: std::io::Error },
    #[error("cannot watch the project: {0}")]
    Watch(#[from] std::io::Error),
    #[error(transparent)]
    Db(#[from] DbError),
    #[error(transparent)]
    Model(#[from] UnknownModel),
    #[error(transparent)]
    Api(#[from] ApiError),
}

impl Core {
    /// Creates `DATA_DIR` if needed (and makes it absolute), and opens (or creates)
    /// `DATA_DIR/paige.db`. Starts nothing in the background but the version store's evictor
    /// (inside a Tokio runtime; it waits until the detector asks it to evict).
    pub fn open(mut config: Config, clock: Arc<dyn Clock>) -> Result<Core, CoreError> {
        let data_dir_err = |source| CoreError::DataDir { path: config.data_dir.clone(), source };
        // The learner's data is theirs alone: a DATA_DIR Paige creates is 0700.
        std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
            .create(&config.data_dir)
            .map_err(data_dir_err)?;
        config.data_dir = config.data_dir.canonicalize().map_err(data_dir_err)?;
        check_writable(&config.data_dir)?;
        let root = ProjectRoot::with_max_file_bytes(&config.project_dir, config.limits.max_file_bytes)
            .map_err(|source| CoreError::ProjectDir { path: config.project_dir.clone(), source })?;
        let db = Db::open(&config.db_path(), clock.clone())?;
        let api = ApiClient::new(ApiSettings::from_config(&config)?)?;
        let (events, _) = broadcast::channel(EVENT_CAPACITY);
        let live = Live::new(Buffers::with_limits(config.limits.max_buffer_bytes, config.limits.max_buffers_bytes));
        let ctx = Arc::new(crate::ctx::Ctx {
            db,
            api,
            clock: clock.clone(),
            events,
            cancel: CancellationToken::new(),
            tasks: TaskTracker::new(),
            root,
            live: Mutex::new(live),
            memory: std::sync::RwLock::new(Arc::new(crate::memory::Memory::disabled("memory is not configured"))),
        });
        let terminals: Arc<crate::terminal::Terminals> = Arc::default();
        let store =
            crate::detector::Store::new(config.data_dir.join("versions"), config.limits.max_version_store_bytes);
        let detector = crate::detector::Detector::new(ctx.clone(), store, config.limits.max_file_bytes);
        detector.store().start_evictor(&ctx);
        let checks = crate::checks::StepChecks::new(ctx.clone(), detector.clone(), config.limits.step_check_timeout);
        let intake = crate::intake::Intake::new(ctx.clone(), &config.limits);
        let dashboard =
            crate::dashboard::Dashboard::new(ctx.clone(), config.gh_program.as_deref(), config.limits.gh_timeout);
        let observer = crate::observer::Observer::new(ctx.clone(), terminals.clone(), config.limits.observer);
        let learning = crate::learning::Learning::new(ctx.clone());
        let reviews = crate::review::Reviews::new(ctx.clone());
        let diffs = crate::diffs::Diffs::new(ctx.clone(), config.limits.max_diff_bytes);
        let coaching = crate::coaching::Coaching::new(
            ctx.clone(),
            crate::coaching::CoachingSettings::of(&config),
            crate::coaching::Uses {
                terminals: terminals.clone(),
                checks: checks.clone(),
                observer: observer.clone(),
                intake,
                dashboard: dashboard.clone(),
                learning,
                reviews,
            },
        );
        let governance = crate::governance::Governance::new(
            ctx.clone(),
            crate::governance::GovernanceSettings::of(&config),
            detector.clone(),
            coaching.clone(),
            diffs.clone(),
        );
        Ok(Core {
            started_at: clock.now(),
            config,
            ctx,
            watcher: Mutex::new(None),
            terminals,
            detector,
            checks,
            observer,
            dashboard,
            coaching,
            diffs,
            governance,
        })
    }

    /// Gives the core its memory (built by the binary from the `paige-memory` crate) and
    /// connects it, logging the outcome; memory that cannot connect stays degraded.
    pub fn with_memory(self, memory: crate::memory::Memory) -> Core {
        memory.connect();
        *self.ctx.memory.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(memory);
        self
    }

    /// The dashboard's kept model answers (`dashboard/cache.rs`).
    pub fn dashboard_cache(&self) -> &crate::dashboard::DashboardCache {
        self.dashboard.cache()
    }

    /// Spaced review (`review/`).
    pub fn reviews(&self) -> &Arc<crate::review::Reviews> {
        self.coaching.reviews()
    }

    /// The learning signals (`learning/`).
    pub fn learning(&self) -> &Arc<crate::learning::Learning> {
        self.coaching.learning()
    }

    /// The hook engine (`governance/`).
    pub(crate) fn governance(&self) -> &crate::governance::Governance {
        &self.governance
    }

    /// The editor's unsaved changes as diffs (`diffs.rs`).
    pub(crate) fn diff_cache(&self) -> &Arc<crate::diffs::Diffs> {
        &self.diffs
    }

    /// The coaching session and all that hangs off it (`coaching/`).
    pub fn coaching(&self) -> &Arc<crate::coaching::Coaching> {
        &self.coaching
    }

    /// The dashboard (`dashboard/`).
    pub(crate) fn dashboard(&self) -> &Arc<crate::dashboard::Dashboard> {
        &self.dashboard
    }

    /// `dashboard:request` (Scenario 12.1): `dashboard:state` to `from` now, then the issue
    /// assessment and learning materials in the background. Reads SQLite.
    pub fn dashboard_request(
        &self,
        from: crate::protocol::ConnectionId,
        period: Option<crate::protocol::Period>,
        refresh: bool,
    ) -> Result<(), DbError> {
        // What the learner found hard becomes review items before the count is read.
        if let Err(err) = self.coaching.reviews().sync() {
            tracing::warn!("cannot make the review items: {err}");
        }
        self.dashboard.request(from, period, refresh)
    }

    /// `dashboard:refresh_issues` (Scenario 12.8): the issue assessment again, nothing else.
    pub fn refresh_dashboard_issues(&self) {
        self.dashboard.refresh_issues();
    }

    /// The dashboard's state now, for `period`.
    pub fn dashboard_state(&self, period: crate::protocol::Period) -> Result<crate::protocol::DashboardState, DbError> {
        self.dashboard.state(period)
    }

    /// Cross-session memory (spec Story 8). Its methods block: call them off the runtime.
    pub fn memory(&self) -> Arc<crate::memory::Memory> {
        self.ctx.memory()
    }

    /// The name memories are filed under: the project directory's name and full path.
    pub fn project_name(&self) -> crate::memory::ProjectName {
        crate::memory::ProjectName::of(self.ctx.root.path())
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn project_root(&self) -> &ProjectRoot {
        &self.ctx.root
    }

    pub(crate) fn detector(&self) -> &Arc<crate::detector::Detector> {
        &self.detector
    }

    /// Whether the project's watcher runs.
    pub fn watcher_running(&self) -> bool {
        self.watcher.locked().is_some()
    }

    /// Whether the change detector holds its baseline of the whole project.
    pub fn detector_primed(&self) -> bool {
        self.detector.primed()
    }

    /// Whether a watch window is open (a call of Claude Code's runs).
    pub fn watching(&self) -> bool {
        self.detector.watching()
    }

    /// Brings a kept version back into its file (`paige restore <id>`); what the file holds
    /// now is kept first, so a restore loses nothing either. Returns the file's path.
    pub fn restore_version(&self, id: i64) -> Result<String, crate::detector::DetectorError> {
        self.detector.restore_version(id)
    }

    /// The active session, if any.
    pub fn active_session(&self) -> Option<crate::db::Session> {
        self.ctx.active_session()
    }

    /// Appends to the active session's timeline (`Ctx::log_action`).
    pub fn log_action(
        &self,
        action_type: crate::db::ActionType,
        data: serde_json::Value,
    ) -> Option<crate::db::ActionEntry> {
        self.ctx.log_action(action_type, data)
    }

    pub fn db(&self) -> &Db {
        &self.ctx.db
    }

    /// The one Claude API client, shared by every feature (all model calls go through it).
    pub fn api(&self) -> &ApiClient {
        &self.ctx.api
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.ctx.now()
    }

    /// Time since [`Core::open`], by the injected clock.
    pub fn uptime(&self) -> chrono::Duration {
        self.ctx.now() - self.started_at
    }

    /// A receiver of every [`Event`] the core pushes from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.ctx.subscribe()
    }

    /// Pushes an event to every subscriber; having none is fine.
    pub fn emit(&self, event: Event) {
        self.ctx.emit(event);
    }

    /// Sends a message to every connected UI.
    pub fn broadcast(&self, message: ServerMessage) {
        self.emit(Event::Ui(message));
    }

    /// A token cancelled at shutdown: background loops take a child of it.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.ctx.shutdown_token()
    }

    /// Announces this process as the running Paige: writes `DATA_DIR/run/server.json` (0600)
    /// with `port` and the `tokens` (the UI token only where an OS layer hides `DATA_DIR` from
    /// Claude Code). Returns what was written and where.
    ///
    /// A run file already there whose process is gone means the last run crashed (or was
    /// killed): that is logged, temp files its interrupted saves left in its project are
    /// removed, and sessions it left active stay active, to be resumed.
    pub fn announce(
        &self,
        port: u16,
        tokens: &crate::token::Tokens,
    ) -> anyhow::Result<(crate::run_info::RunInfo, PathBuf)> {
        if let Some(crashed) = crate::run_info::left_by_crash(&self.config.data_dir) {
            self.recover_from_crash(&crashed);
        }
        // Any Paige killed mid-write (this project's or another's) may have left these.
        let removed =
            crate::files::sweep_data_temp_files(&self.config.data_dir) + self.detector.store().sweep_temp_files();
        if removed > 0 {
            tracing::info!(removed, "removed temp files that writes cut short left in the data directory");
        }
        let info = crate::run_info::RunInfo {
            pid: std::process::id(),
            port,
            token: (self.config.agent_jail.ui_token_kept() == crate::token::UiTokenKept::OnDisk)
                .then(|| tokens.ui.clone()),
            local_token: Some(tokens.local.clone()),
            agent_token: Some(tokens.agent.clone()),
            jail: Some(self.config.agent_jail.bwrap().is_some()),
            landlock: Some(matches!(self.config.agent_jail, crate::launch::jail::Confinement::Landlock(_))),
            no_jail_because: self.config.agent_jail.why_off().map(str::to_owned),
            project_dir: self.config.project_dir.clone(),
            started_at: self.now(),
        };
        let path = crate::run_info::write(&self.config.data_dir, &info)?;
        Ok((info, path))
    }

    fn recover_from_crash(&self, crashed: &crate::run_info::RunInfo) {
        tracing::warn!(
            pid = crashed.pid,
            started_at = %crashed.started_at,
            project = %crashed.project_dir.display(),
            "the last Paige run ended without shutting down cleanly (crashed or killed)"
        );
        let root = match crashed.project_dir.canonicalize() {
            Ok(dir) if dir == self.ctx.root.path() => Some(self.ctx.root.clone()),
            Ok(dir) => ProjectRoot::new(&dir).ok(),
            Err(_) => None,
        };
        if let Some(root) = root {
            let removed = crate::files::sweep_temp_files(&root);
            if removed > 0 {
                tracing::info!(removed, project = %root.path().display(), "removed temp files of interrupted saves");
            }
        }
        match self.ctx.db.sessions() {
            Ok(sessions) => {
                let active = sessions.iter().filter(|s| s.status == crate::db::SessionStatus::Active).count();
                if active > 0 {
                    tracing::info!(active, "sessions the crashed run left active stay active, to be resumed");
                }
            }
            Err(err) => tracing::warn!("cannot list sessions: {err}"),
        }
    }

    /// Starts watching the project; changes are broadcast as `fs:tree_update`, and the
    /// change detector's prime follows in the background. Walks the project's folders (to
    /// watch each): blocking. Idempotent.
    pub fn start_watcher(self: &Arc<Self>) -> Result<(), CoreError> {
        let mut slot = self.watcher.locked();
        if slot.is_some() {
            return Ok(());
        }
        self.detector().prime_scheduled();
        let core = Arc::downgrade(self);
        let options = crate::files::WatchOptions { barrier_dir: Some(self.config.data_dir.join("watch")) };
        let started = Watcher::start_with(&self.ctx.root, options, move |event| {
            let Some(core) = core.upgrade() else { return };
            match event {
                WatchEvent::Touched(path) => core.detector().journal_note(&path),
                WatchEvent::Overflow => {
                    core.detector().journal_overflow();
                    core.project_tree().forget_all();
                }
                WatchEvent::Change(change) => {
                    core.tree_changed(&change);
                    // Every UI is shown it as `fs:tree_update` (`Event::into_ui_message`).
                    core.ctx.publish(crate::event::Domain::FilesChanged(change));
                }
            }
        });
        let watcher = match started {
            Ok(watcher) => watcher,
            Err(err) => {
                // No journal: each watched call walks the project; the baseline is taken now.
                self.detector().journal_start(false, None);
                self.prime_in_background();
                return Err(CoreError::Watch(err));
            }
        };
        self.detector().journal_start(watcher.degraded().is_none(), Some(watcher.syncer()));
        if let Some(notice) = watcher.degraded() {
            let notice = ServerMessage::notice(crate::protocol::MessageKind::Warning, notice);
            self.live().set_watch_notice(notice.clone());
            self.broadcast(notice);
        }
        *slot = Some(watcher);
        drop(slot);
        self.prime_in_background();
        Ok(())
    }

    /// [`Core::start_watcher`] on the core's blocking pool: returns at once (start-up does
    /// not walk the project). A watched call that comes before the prime is done is still
    /// watched (`detector/prime.rs`).
    pub fn start_watcher_in_background(self: &Arc<Self>) {
        self.detector().prime_scheduled();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            if let Err(err) = self.start_watcher() {
                tracing::warn!("{err}");
            }
            return;
        };
        let core = Arc::downgrade(self);
        self.ctx.tasks().spawn_blocking_on(
            move || {
                if let Some(core) = core.upgrade()
                    && let Err(err) = core.start_watcher()
                {
                    tracing::warn!("{err}");
                    let notice = ServerMessage::notice(crate::protocol::MessageKind::Warning, err.to_string());
                    core.live().set_watch_notice(notice.clone());
                    core.broadcast(notice);
                }
            },
            &runtime,
        );
    }

    /// The change detector's prime, on the blocking pool (in place without a runtime).
    fn prime_in_background(self: &Arc<Self>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.detector().prime();
            return;
        };
        let detector = self.detector().clone();
        self.ctx.tasks().spawn_blocking_on(move || detector.prime(), &runtime);
    }

    /// The project's git repository (`paige-git`): clean tracked files are then known to the
    /// change detector by their blob id, not copied. Call before the watcher starts.
    pub fn with_git(self, repo: Option<Arc<dyn crate::detector::GitObjects>>) -> Core {
        if let Some(repo) = repo {
            self.detector.set_repo(repo);
        }
        self
    }

    /// What a UI shows when it connects, besides the tree: why the project is only partly
    /// watched, if it is.
    pub(crate) fn notices(&self) -> Vec<ServerMessage> {
        self.live().notices()
    }

    /// Stops the watcher and every background task, then checkpoints the database.
    /// Idempotent.
    pub async fn shutdown(&self) -> Result<(), DbError> {
        self.ctx.cancel.cancel();
        if let Some(watcher) = self.watcher.locked().take() {
            watcher.stop();
            tracing::info!("shutdown: file watcher stopped");
        }
        for terminal in self.terminals.take_all() {
            terminal.kill();
        }
        self.ctx.tasks.close();
        self.ctx.tasks.wait().await;
        self.emit(Event::ShuttingDown);
        self.ctx.db.checkpoint()
    }

    pub(crate) fn terminals(&self) -> &crate::terminal::Terminals {
        &self.terminals
    }

    pub(crate) fn live(&self) -> MutexGuard<'_, Live> {
        self.ctx.live()
    }

    pub(crate) fn tasks(&self) -> &TaskTracker {
        self.ctx.tasks()
    }

    /// The phases' step checks (`checks/`).
    pub(crate) fn checks(&self) -> &Arc<crate::checks::StepChecks> {
        &self.checks
    }

    /// The latest step check of `phase_id`, if one ran.
    pub fn phase_check(&self, phase_id: &str) -> Option<crate::checks::PhaseCheck> {
        self.checks.phase_check(phase_id)
    }

    /// What `observer:status` says now.
    pub fn observer_status(&self) -> crate::protocol::ObserverStatus {
        self.observer.status()
    }

    /// `observer:mute` (FR-144): flips the live Observer's mute, logs `observer_muted` and
    /// tells every UI. Without a session there is nothing to mute (EC-70): `false`.
    pub fn mute_observer(&self, muted: bool) -> bool {
        self.observer.mute(muted)
    }

    /// The Observer's context snapshot for `session_id` now (for the benchmarks).
    pub fn triage_context(
        &self,
        session_id: &str,
        last_nudge: Option<DateTime<Utc>>,
        user_idle: bool,
    ) -> crate::prompts::observer_triage::TriageContext {
        self.observer.triage_context(session_id, last_nudge, user_idle)
    }

    /// The Observer's Haiku triage call (for the benchmarks).
    pub async fn triage(
        &self,
        session_id: &str,
        context: &crate::prompts::observer_triage::TriageContext,
    ) -> Result<crate::prompts::observer_triage::ObserverTriageResponse, ApiError> {
        self.observer.triage(session_id, context).await
    }
}

/// A read-only `DATA_DIR` (a read-only mount, which even root cannot write) is named as such
/// before SQLite fails on it with a less helpful error.
fn check_writable(data_dir: &std::path::Path) -> Result<(), CoreError> {
    let why = match rustix::fs::access(data_dir, rustix::fs::Access::WRITE_OK) {
        Ok(()) => return Ok(()),
        Err(rustix::io::Errno::ROFS) => "is on a read-only file system",
        Err(rustix::io::Errno::ACCESS | rustix::io::Errno::PERM) => "is not writable by this user",
        // Anything else is for opening the database to report.
        Err(_) => return Ok(()),
    };
    Err(CoreError::DataDirReadOnly { path: data_dir.to_owned(), why })
}
