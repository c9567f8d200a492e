//! `Governance`, the hook engine as a feature object (issue 40): `Core::open` builds it with
//! the change detector, the coaching feature (coach mode's context names the session and
//! its phase) and the editor's diffs. `Core` keeps the four entry points adapters call
//! (`hooks.rs`); everything else is here.

use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::ctx::Ctx;
use crate::db::{ActionEntry, ActionType, Db, Session};
use crate::files::ProjectRoot;
use crate::protocol::ServerMessage;

/// What the hook engine reads of Paige's configuration.
#[derive(Clone)]
pub struct GovernanceSettings {
    /// Where the learner's settings (coach mode's allowed MCP tools) are kept.
    pub data_dir: PathBuf,
    pub limits: crate::limits::Limits,
    /// Whether Claude Code runs in a jail that shows it the project read-only: then coach
    /// mode opens no watch window (nothing it runs can write).
    pub agent_jailed: bool,
}

impl GovernanceSettings {
    pub fn of(config: &crate::config::Config) -> Self {
        GovernanceSettings {
            data_dir: config.data_dir.clone(),
            limits: config.limits.clone(),
            agent_jailed: config.agent_jail.read_only(),
        }
    }
}

/// The hook engine: see the module docs.
pub struct Governance {
    ctx: Arc<Ctx>,
    settings: GovernanceSettings,
    detector: Arc<crate::detector::Detector>,
    coaching: Arc<crate::coaching::Coaching>,
    diffs: Arc<crate::diffs::Diffs>,
    /// Launches (`paige claude --intent`, the app's governed terminal) whose Claude Code
    /// selected another intent than its view's: the intent to start it again for, until its
    /// launcher takes it.
    relaunches: std::sync::Mutex<std::collections::HashMap<String, Relaunch>>,
}

/// A switch of views asked for by a launch's Claude Code.
struct Relaunch {
    intent: String,
    /// Its turn ended (its Stop hook came): it may be stopped now, quiet or not.
    turn_ended: bool,
}

impl Governance {
    pub(crate) fn new(
        ctx: Arc<Ctx>,
        settings: GovernanceSettings,
        detector: Arc<crate::detector::Detector>,
        coaching: Arc<crate::coaching::Coaching>,
        diffs: Arc<crate::diffs::Diffs>,
    ) -> Governance {
        Governance { ctx, settings, detector, coaching, diffs, relaunches: Default::default() }
    }

    /// The intent launch `launch` is to start Claude Code again for, taken once
    /// (`POST /api/agent/relaunch`, asked by `paige claude`; the app's terminal asks directly).
    /// Taken once the turn that selected it ended, or when the launcher saw its Claude Code
    /// `quiet` (its own sign that the turn is over, should the Stop hook not come).
    pub fn take_relaunch(&self, launch: &str, quiet: bool) -> Option<String> {
        let mut relaunches = self.relaunches.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let ready = relaunches.get(launch).is_some_and(|r| r.turn_ended || quiet);
        ready.then(|| relaunches.remove(launch)).flatten().map(|r| r.intent)
    }

    /// The turn of launch `launch`'s Claude Code ended (its Stop hook).
    pub(super) fn turn_ended(&self, launch: &str) {
        let mut relaunches = self.relaunches.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(relaunch) = relaunches.get_mut(launch) {
            relaunch.turn_ended = true;
        }
    }

    /// A Claude Code in one intent's view bound another: its launcher is asked to start it
    /// again in that intent's view, and Claude Code is told to end its turn meanwhile.
    pub(super) fn relaunch_for(&self, view: &crate::hook_event::PaigeView, bound: &str) -> String {
        self.relaunches
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(view.launch.clone(), Relaunch { intent: bound.to_owned(), turn_ended: false });
        let here = if view.intent.is_empty() {
            "This Claude Code started before any intent was selected: the whole project is read-only here".to_owned()
        } else {
            format!(
                "This Claude Code runs in intent {}'s view: only its folders are writable, so {bound}'s files are \
                 read-only here",
                view.intent
            )
        };
        format!(
            "{here}. End your turn now: Paige starts Claude Code again in {bound}'s view (this conversation goes on) \
             and tells you when to continue."
        )
    }

    pub(crate) fn config(&self) -> &GovernanceSettings {
        &self.settings
    }

    pub(crate) fn db(&self) -> &Db {
        &self.ctx.db
    }

    pub(crate) fn now(&self) -> DateTime<Utc> {
        self.ctx.now()
    }

    pub(crate) fn project_root(&self) -> &ProjectRoot {
        &self.ctx.root
    }

    pub(crate) fn broadcast(&self, message: ServerMessage) {
        self.ctx.broadcast(message);
    }

    pub(crate) fn active_session(&self) -> Option<Session> {
        self.ctx.active_session()
    }

    pub(crate) fn log_action(&self, action_type: ActionType, data: Value) -> Option<ActionEntry> {
        self.ctx.log_action(action_type, data)
    }

    pub(crate) fn detector(&self) -> &Arc<crate::detector::Detector> {
        &self.detector
    }

    pub(crate) fn coaching(&self) -> &Arc<crate::coaching::Coaching> {
        &self.coaching
    }

    /// The learner's unsaved changes, for coach mode's context.
    pub(crate) fn dirty_diffs(&self) -> Vec<crate::diffs::FileDiff> {
        self.diffs.dirty()
    }
}
