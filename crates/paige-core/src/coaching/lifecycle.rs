//! The coaching session's lifecycle as the learner drives it (spec Story 5's `session:*`,
//! issue 15): start from an issue (its title and body from `gh issue view` when `gh` works in
//! the project, else from the message) or from typed work; resume a session left `active`
//! (a crash, a closed window) with its plan, phases, hint level and open files; what the
//! coaching panel offers to start from. One active session: starting or resuming another
//! sets the current one aside — its full wrap-up runs in the background, and the UI is told.
//! Sessions idle longer than `PAIGE_SESSION_ABANDON_AFTER_MS` become `abandoned`.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::json;

use super::Coaching;
use super::activity::{SessionError, SessionWork};
use super::github::{GH_DEADLINE, Gh};
use crate::db::{ActionType, HintLevel, PhaseStatus, Session, SessionStatus};
use crate::protocol::{
    IssueContext, MessageKind, ResumableSession, ServerMessage, SessionOptions, SessionResumed, SessionStarted,
};

/// What the UI, `/api/session` or `paige session start` asks to work on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StartRequest {
    pub issue_number: Option<i64>,
    pub title: Option<String>,
    pub description: Option<String>,
}

/// The newest actions replayed to find the files a resumed session had open.
const MAX_REPLAYED_ACTIONS: usize = 5000;

impl Coaching {
    /// Starts a session for `request`, setting the active one aside first.
    pub fn begin_coaching_session(self: &Arc<Self>, request: StartRequest) -> Result<Session, SessionError> {
        let typed = |s: Option<String>| s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
        let (title, description) = (typed(request.title), typed(request.description));
        let work = match request.issue_number {
            Some(number) => {
                let context = match self.gh().view(number, self.gh_deadline()) {
                    Ok(issue) => IssueContext {
                        number,
                        summary: issue.summary(),
                        title: issue.title,
                        labels: issue.labels,
                        url: issue.url,
                    },
                    Err(why) => {
                        tracing::info!("issue #{number} from the message: {why}");
                        IssueContext {
                            number,
                            title: title.clone().unwrap_or_else(|| format!("Issue #{number}")),
                            summary: description.clone().unwrap_or_default(),
                            labels: Vec::new(),
                            url: String::new(),
                        }
                    }
                };
                SessionWork {
                    issue_number: Some(number),
                    title: Some(context.title.clone()),
                    description: Some(context.summary.clone()).filter(|s| !s.is_empty()),
                    issue_context: Some(context),
                }
            }
            None if title.is_some() => SessionWork { issue_number: None, title, description, issue_context: None },
            None => return Err(SessionError::NothingToWorkOn),
        };
        self.set_aside_active(None);
        self.start_session_for(work)
    }

    /// Resumes `session_id`, left `active`: it becomes the live session again and every UI
    /// gets `session:resumed` with its plan, phases, hint level and open files.
    pub fn resume_session(self: &Arc<Self>, session_id: &str) -> Result<Session, SessionError> {
        let session = match self.db().session(session_id) {
            Ok(session) => session,
            Err(crate::db::DbError::NotFound { .. }) => return Err(SessionError::NotFound(session_id.to_owned())),
            Err(err) => return Err(err.into()),
        };
        if session.status != SessionStatus::Active {
            return Err(SessionError::NotResumable(session.id, session.status));
        }
        if self.wrapups().in_progress(&session.id) {
            return Err(SessionError::WrappingUp(session.id));
        }
        if self.active_session().is_none_or(|active| active.id != session.id) {
            self.set_aside_active(Some(&session.id));
            self.go_live(&session)?;
        }
        self.log_action(ActionType::SessionResumed, json!({ "previousSessionId": session.id }));
        let restored = self.restored_state(&session, self.files_open_in(&session.id));
        self.broadcast(self.first_tree());
        self.broadcast(ServerMessage::SessionResumed(SessionResumed { restored_state: restored }));
        self.show_current_hints(&session.id);
        // A session resumed without a plan still needs one: Claude Code is asked again.
        self.deliver_kickoff();
        Ok(session)
    }

    /// At start: the session this project's last run left live — its newest `active` one that
    /// is not idle past the limit — is live again, as if the learner had resumed it. A restart
    /// of Paige (or a crash) neither ends nor sets aside the learner's session, and a UI that
    /// reconnects finds it as it was (issue 40). Nothing is live already at start.
    pub fn resume_after_restart(self: &Arc<Self>) -> Option<Session> {
        if self.active_session().is_some() {
            return None;
        }
        self.abandon_idle_sessions();
        let root = self.project_root().path().to_path_buf();
        let left = self.db().sessions().ok()?.into_iter().filter(|s| {
            s.status == SessionStatus::Active
                && s.project_dir.canonicalize().is_ok_and(|dir| dir == root)
                && !self.wrapups().in_progress(&s.id)
        });
        let newest = left
            .map(|s| (self.db().last_action_at(&s.id, None).ok().flatten().unwrap_or(s.started_at), s))
            .max_by_key(|(last, _)| *last)?
            .1;
        match self.resume_session(&newest.id) {
            Ok(session) => {
                tracing::info!(session = %session.id, "resumed the session the last run left live");
                Some(session)
            }
            Err(err) => {
                tracing::warn!(session = %newest.id, "cannot resume the session the last run left live: {err}");
                None
            }
        }
    }

    /// What the coaching panel offers: the project's open issues and the resumable
    /// sessions. Sessions idle too long are wrapped up (in the background) and abandoned first.
    pub fn session_options(self: &Arc<Self>) -> SessionOptions {
        self.abandon_idle_sessions();
        let (issues, issues_error) = match self.gh().list(self.gh_deadline()) {
            Ok(issues) => (issues, None),
            Err(why) => (Vec::new(), Some(why)),
        };
        let live = self.active_session().map(|s| s.id);
        let mut sessions = self.db().sessions().unwrap_or_else(|err| {
            tracing::warn!("cannot list the sessions: {err}");
            Vec::new()
        });
        sessions.retain(|s| {
            s.status == SessionStatus::Active && Some(&s.id) != live.as_ref() && !self.wrapups().in_progress(&s.id)
        });
        sessions.sort_by_key(|s| std::cmp::Reverse(s.started_at));
        let resumable = sessions
            .into_iter()
            .map(|s| {
                let phases = self.latest_phases(&s.id);
                ResumableSession {
                    phases_completed: phases.iter().filter(|p| p.status == PhaseStatus::Complete).count() as u32,
                    phases_total: phases.len() as u32,
                    session_id: s.id,
                    issue_number: s.issue_number,
                    title: s.issue_title,
                    started_at: crate::db::iso(s.started_at),
                }
            })
            .collect();
        SessionOptions { issues, issues_error, resumable }
    }

    /// Every session left `active` (not the live one) whose last action, or start, is older
    /// than the limit is wrapped up in the background — its knowledge gaps, skill evidence and
    /// memories kept as a finished session's would be — and then marked `abandoned`; it is
    /// offered no more from now on. Returns how many were set aside.
    pub fn abandon_idle_sessions(self: &Arc<Self>) -> usize {
        let after =
            chrono::Duration::from_std(self.config().limits.session_abandon_after).unwrap_or(chrono::Duration::MAX);
        let cutoff = self.now() - after;
        let live = self.active_session().map(|s| s.id);
        let Ok(sessions) = self.db().sessions() else { return 0 };
        let mut abandoned = 0;
        for session in
            sessions.into_iter().filter(|s| s.status == SessionStatus::Active && Some(&s.id) != live.as_ref())
        {
            let last = self.db().last_action_at(&session.id, None).ok().flatten().unwrap_or(session.started_at);
            if last < cutoff && self.begin_abandon_wrapup(session) {
                abandoned += 1;
            }
        }
        if abandoned > 0 {
            tracing::info!("{abandoned} idle session(s) being wrapped up, then marked abandoned");
        }
        abandoned
    }

    /// The live session (unless it is `keep`) stops being live; its wrap-up runs in the
    /// background and the UIs are told.
    fn set_aside_active(self: &Arc<Self>, keep: Option<&str>) {
        let Some(active) = self.active_session().filter(|a| Some(a.id.as_str()) != keep) else { return };
        // One with nothing in it ends at once, and says so itself.
        let wrapped = self.session_had_work(&active.id);
        if let Err(err) = self.end_session_from_ui() {
            tracing::warn!("cannot wrap up session {}: {err}", active.id);
        }
        self.detach_session(&active.id);
        if !wrapped {
            return;
        }
        let what = match (active.issue_number, active.issue_title.as_deref()) {
            (Some(n), Some(title)) => format!("#{n} {title}"),
            (Some(n), None) => format!("#{n}"),
            (None, Some(title)) => title.to_owned(),
            (None, None) => "your previous session".to_owned(),
        };
        self.broadcast(ServerMessage::notice(
            MessageKind::Info,
            format!("Wrapping up {what} in the background: Paige is noting what you learned there."),
        ));
    }

    /// The phases of the session's latest plan (none without a plan).
    fn latest_phases(&self, session_id: &str) -> Vec<crate::db::Phase> {
        match self.current_plan(session_id) {
            Ok(Some(plan)) => self.db().phases_for_plan(&plan.id).unwrap_or_default(),
            Ok(None) => Vec::new(),
            Err(err) => {
                tracing::warn!("cannot read the plan of session {session_id}: {err}");
                Vec::new()
            }
        }
    }

    /// The live session as a UI that connects mid-session needs it (its open files are the
    /// editor's now); `None` without one.
    pub fn live_session_state(&self) -> Option<SessionStarted> {
        let session = self.active_session()?;
        Some(self.restored_state(&session, self.open_files()))
    }

    /// What `session:resumed` restores.
    fn restored_state(&self, session: &Session, open_files: Vec<String>) -> SessionStarted {
        let phases = self.latest_phases(&session.id);
        let current = current_phase(&phases);
        SessionStarted {
            session_id: session.id.clone(),
            issue_context: session.issue_number.map(|number| IssueContext {
                number,
                title: session.issue_title.clone().unwrap_or_default(),
                summary: String::new(),
                labels: Vec::new(),
                url: String::new(),
            }),
            title: session.issue_title.clone(),
            description: self.typed_description(&session.id),
            hint_level: current.map_or(HintLevel::None, |p| p.hint_level),
            phases: phases.iter().map(super::pipeline::summary).collect(),
            open_files: Some(open_files),
        }
    }

    /// What the learner typed to describe the session's work (kept with `session_started`).
    pub(super) fn typed_description(&self, session_id: &str) -> Option<String> {
        let started = self.db().recent_actions(session_id, 1, Some(ActionType::SessionStarted)).ok()?;
        let data = started.into_iter().next()?.data?;
        data["description"].as_str().map(str::to_owned)
    }

    /// The files the session's timeline leaves open (`file_open` without a later
    /// `file_close`), in the order they were opened.
    fn files_open_in(&self, session_id: &str) -> Vec<String> {
        let mut actions = self.db().recent_actions(session_id, MAX_REPLAYED_ACTIONS, None).unwrap_or_default();
        actions.reverse();
        let mut open: Vec<String> = Vec::new();
        for action in actions {
            let path = action.data.as_ref().and_then(|d| d["path"].as_str()).map(str::to_owned);
            match (action.action_type, path) {
                (ActionType::FileOpen, Some(path)) => {
                    open.retain(|p| *p != path);
                    open.push(path);
                }
                (ActionType::FileClose, Some(path)) => open.retain(|p| *p != path),
                _ => {}
            }
        }
        // Only files that still exist in the project.
        let exists: BTreeSet<String> = open
            .iter()
            .filter(|p| self.project_root().resolve(p).is_ok_and(|pp| pp.abs().is_file()))
            .cloned()
            .collect();
        open.retain(|p| exists.contains(p));
        open
    }

    /// The hints of the phase in progress, at its level, in the editor and explorer.
    fn show_current_hints(&self, session_id: &str) {
        let phases = self.latest_phases(session_id);
        let current = current_phase(&phases);
        if let Some(phase) = current {
            let hints = self.db().phase_hints(&phase.id, None).unwrap_or_default();
            self.show_phase_hints(phase, &hints);
        }
    }

    /// The panel's `gh` calls wait [`GH_DEADLINE`], or `PAIGE_GH_TIMEOUT_MS` when shorter.
    fn gh_deadline(&self) -> std::time::Duration {
        GH_DEADLINE.min(self.config().limits.gh_timeout)
    }

    fn gh(&self) -> Gh<'_> {
        Gh {
            program: self.config().gh_program.as_deref().unwrap_or(std::path::Path::new("gh")),
            dir: self.project_root().path(),
        }
    }
}

pub(crate) use crate::db::current_phase;
