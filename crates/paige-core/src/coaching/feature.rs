//! `Coaching`, the feature object (issue 40): the coaching session's lifecycle and everything
//! that hangs off it — start, resume, the kickoff and its deliveries to Claude Code, the plan
//! pipeline, phases, hints, comprehension checks, the end and the wrap-up. `Core::open` builds
//! it with the features it uses (the Observer, the step checks, the learning signals, spaced
//! review, the intake interview, the dashboard, the terminals) and its own settings; `Core`
//! holds it and adapters reach it through `Core::coaching`. It names no other handler: what
//! it needs of the project (the tree, the open files) it reads from the shared live state.

use std::path::PathBuf;
use std::sync::{Arc, MutexGuard};

use chrono::{DateTime, Utc};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::api::ApiClient;
use crate::coaching_state::{Deliveries, LastTranscript, WrapUps};
use crate::ctx::Ctx;
use crate::db::{ActionEntry, ActionType, Db, Session};
use crate::files::ProjectRoot;
use crate::live::Live;
use crate::protocol::{FsTree, ServerMessage};

/// What coaching reads of Paige's configuration.
#[derive(Clone)]
pub struct CoachingSettings {
    /// Where the learning record's signing key is kept.
    pub data_dir: PathBuf,
    pub limits: crate::limits::Limits,
    /// The GitHub CLI to run (`gh` on `PATH` when `None`).
    pub gh_program: Option<PathBuf>,
}

impl CoachingSettings {
    pub fn of(config: &crate::config::Config) -> Self {
        CoachingSettings {
            data_dir: config.data_dir.clone(),
            limits: config.limits.clone(),
            gh_program: config.gh_program.clone(),
        }
    }
}

/// The features coaching uses, built before it by `Core::open`.
pub(crate) struct Uses {
    pub(crate) terminals: Arc<crate::terminal::Terminals>,
    pub(crate) checks: Arc<crate::checks::StepChecks>,
    pub(crate) observer: Arc<crate::observer::Observer>,
    pub(crate) intake: Arc<crate::intake::Intake>,
    pub(crate) dashboard: Arc<crate::dashboard::Dashboard>,
    pub(crate) learning: Arc<crate::learning::Learning>,
    pub(crate) reviews: Arc<crate::review::Reviews>,
}

/// The coaching feature: see the module docs.
pub struct Coaching {
    ctx: Arc<Ctx>,
    settings: CoachingSettings,
    uses: Uses,
    /// Each session's wrap-up, run once (`wrapup.rs`).
    wrapups: WrapUps,
    /// The transcript the last hook named, for a UI `session:end`.
    last_transcript: LastTranscript,
    /// The newest kickoff delivery: an older one still waiting gives way to it.
    deliveries: Deliveries,
}

impl Coaching {
    pub(crate) fn new(ctx: Arc<Ctx>, settings: CoachingSettings, uses: Uses) -> Arc<Coaching> {
        Arc::new(Coaching {
            ctx,
            settings,
            uses,
            wrapups: WrapUps::default(),
            last_transcript: LastTranscript::default(),
            deliveries: Deliveries::default(),
        })
    }

    pub(crate) fn config(&self) -> &CoachingSettings {
        &self.settings
    }

    pub(crate) fn ctx(&self) -> &Arc<Ctx> {
        &self.ctx
    }

    pub(crate) fn db(&self) -> &Db {
        &self.ctx.db
    }

    pub(crate) fn api(&self) -> &ApiClient {
        &self.ctx.api
    }

    pub(crate) fn now(&self) -> DateTime<Utc> {
        self.ctx.now()
    }

    pub(crate) fn broadcast(&self, message: ServerMessage) {
        self.ctx.broadcast(message);
    }

    pub(crate) fn tasks(&self) -> &TaskTracker {
        self.ctx.tasks()
    }

    pub(crate) fn shutdown_token(&self) -> CancellationToken {
        self.ctx.shutdown_token()
    }

    pub(crate) fn live(&self) -> MutexGuard<'_, Live> {
        self.ctx.live()
    }

    /// The active session, if any.
    pub fn active_session(&self) -> Option<Session> {
        self.ctx.active_session()
    }

    /// Appends to the active session's timeline (`Ctx::log_action`).
    pub fn log_action(&self, action_type: ActionType, data: Value) -> Option<ActionEntry> {
        self.ctx.log_action(action_type, data)
    }

    pub(crate) fn memory(&self) -> Arc<crate::memory::Memory> {
        self.ctx.memory()
    }

    pub(crate) fn project_name(&self) -> crate::memory::ProjectName {
        crate::memory::ProjectName::of(self.ctx.root.path())
    }

    pub(crate) fn project_root(&self) -> &ProjectRoot {
        &self.ctx.root
    }

    pub(crate) fn resolve_path(&self, path: &str) -> Result<crate::files::ProjectPath, crate::files::PathError> {
        self.ctx.root.resolve(path)
    }

    /// The `fs:tree` a UI gets (what `Core::first_tree` sends too).
    pub(crate) fn first_tree(&self) -> ServerMessage {
        ServerMessage::FsTree(FsTree { root: self.live().tree(&self.ctx.root).first_tree() })
    }

    /// Files the editor has open, sorted.
    pub(crate) fn open_files(&self) -> Vec<String> {
        self.live().open_files()
    }

    pub(crate) fn terminals(&self) -> &Arc<crate::terminal::Terminals> {
        &self.uses.terminals
    }

    /// The terminal a nudge is typed into, if one runs Claude Code.
    pub(crate) fn nudge_terminal(&self) -> Option<Arc<crate::terminal::Terminal>> {
        self.uses.terminals.nudge_target()
    }

    pub(crate) fn checks(&self) -> &Arc<crate::checks::StepChecks> {
        &self.uses.checks
    }

    pub(crate) fn observer(&self) -> &Arc<crate::observer::Observer> {
        &self.uses.observer
    }

    pub(crate) fn intake(&self) -> &Arc<crate::intake::Intake> {
        &self.uses.intake
    }

    pub(crate) fn dashboard(&self) -> &Arc<crate::dashboard::Dashboard> {
        &self.uses.dashboard
    }

    pub(crate) fn learning(&self) -> &Arc<crate::learning::Learning> {
        &self.uses.learning
    }

    pub(crate) fn reviews(&self) -> &Arc<crate::review::Reviews> {
        &self.uses.reviews
    }

    pub(crate) fn wrapups(&self) -> &WrapUps {
        &self.wrapups
    }

    pub(crate) fn kickoff_generation(&self) -> &std::sync::atomic::AtomicU64 {
        &self.deliveries.0
    }

    pub(crate) fn last_transcript(&self) -> &LastTranscript {
        &self.last_transcript
    }
}
