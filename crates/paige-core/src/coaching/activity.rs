//! The action timeline (spec Story 4) and the session lifecycle that scopes it.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::Coaching;
use crate::db::{ActionType, HintLevel, NewSession, Session, SessionStatus};
use crate::protocol::{IssueContext, ServerMessage, SessionStarted, SessionSummary};

/// How often dirty buffers are summarised into the action log.
pub const BUFFER_SUMMARY_INTERVAL: Duration = Duration::from_secs(30);

/// What a session is about: an issue, or work the learner typed.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionWork {
    pub issue_number: Option<i64>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub issue_context: Option<IssueContext>,
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("a session is already active ({0}); end it first")]
    AlreadyActive(String),
    #[error("say what to work on: an issue number or a title")]
    NothingToWorkOn,
    #[error("no session {0}")]
    NotFound(String),
    #[error("session {0} is {1}; only a session left active can be resumed")]
    NotResumable(String, SessionStatus),
    #[error("session {0} is being wrapped up; it cannot be resumed")]
    WrappingUp(String),
    #[error("no active session")]
    NoActiveSession,
    #[error("no async runtime to run the session's background work on")]
    NoRuntime,
    #[error(transparent)]
    Db(#[from] crate::db::DbError),
}

impl Coaching {
    /// Starts a coaching session: a `sessions` row, `session_started` logged, the periodic
    /// buffer summaries started, and the project tree pushed to the UI (`fs:tree`). Refused
    /// while another is active (the UI's start sets that one aside first: `lifecycle.rs`).
    pub fn start_session(
        self: &Arc<Self>,
        issue_number: Option<i64>,
        issue_title: Option<String>,
    ) -> Result<Session, SessionError> {
        let issue_context = issue_number.map(|number| IssueContext {
            number,
            title: issue_title.clone().unwrap_or_default(),
            summary: String::new(),
            labels: Vec::new(),
            url: String::new(),
        });
        let work = SessionWork { issue_number, title: issue_title, description: None, issue_context };
        self.start_session_for(work)
    }

    pub(crate) fn start_session_for(self: &Arc<Self>, work: SessionWork) -> Result<Session, SessionError> {
        if let Some(active) = self.active_session() {
            return Err(SessionError::AlreadyActive(active.id));
        }
        let session = self.db().create_session(NewSession {
            project_dir: self.project_root().path().to_path_buf(),
            issue_number: work.issue_number,
            issue_title: work.title.clone(),
        })?;
        if let Err(err) = self.go_live(&session) {
            // Another start won between the check and here: our row must not stay "active".
            self.db().end_session(&session.id, SessionStatus::Abandoned)?;
            return Err(err);
        }
        // The work in the learner's words too: Claude Code's kickoff is built from it.
        let summary = work.issue_context.as_ref().map(|c| c.summary.clone()).or_else(|| work.description.clone());
        self.log_action(
            ActionType::SessionStarted,
            json!({ "issueNumber": work.issue_number, "title": work.title, "description": summary }),
        );
        self.broadcast(self.first_tree());
        // Every UI learns of it, however it was started (the UI, `/api/session`, the CLI).
        self.deliver_kickoff();
        self.broadcast(ServerMessage::SessionStarted(SessionStarted {
            session_id: session.id.clone(),
            issue_context: work.issue_context,
            title: work.title,
            description: work.description,
            phases: Vec::new(),
            hint_level: HintLevel::None,
            open_files: Some(self.open_files()),
        }));
        Ok(session)
    }

    /// Makes `session` the live one and starts its buffer-summary loop; refused (with the
    /// winner's id) while another is live.
    pub(crate) fn go_live(self: &Arc<Self>, session: &Session) -> Result<(), SessionError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| SessionError::NoRuntime)?;
        let cancel = self.shutdown_token().child_token();
        if let Err(winner) = self.live().begin_session(session.clone(), cancel.clone()) {
            return Err(SessionError::AlreadyActive(winner));
        }
        self.ctx().publish(crate::event::Domain::SessionStarted { session_id: session.id.clone() });
        self.observer().start(session, cancel.clone(), &runtime);
        self.checks().start(&session.id, cancel.clone(), &runtime);
        self.learning().start(session, cancel.clone(), &runtime);
        self.dashboard().follow(&session.id, cancel.clone(), &runtime);
        let core = Arc::downgrade(self);
        // The first tick is due one interval after the session starts, not after the task is
        // first polled.
        let start = tokio::time::Instant::now() + BUFFER_SUMMARY_INTERVAL;
        self.tasks().spawn_on(
            async move {
                let mut ticks = tokio::time::interval_at(start, BUFFER_SUMMARY_INTERVAL);
                loop {
                    tokio::select! {
                        _ = cancel.cancelled() => break,
                        _ = ticks.tick() => match core.upgrade() {
                            Some(core) => core.flush_buffer_summaries(),
                            None => break,
                        },
                    }
                }
            },
            &runtime,
        );
        Ok(())
    }

    /// Stops `session_id` being the live session (its loop stops) without touching its row:
    /// its wrap-up, running in the background, ends it. Its last edits are summarised first.
    pub(crate) fn detach_session(&self, session_id: &str) {
        if self.active_session().is_some_and(|s| s.id == session_id) {
            self.flush_buffer_summaries();
        }
        let mut live = self.live();
        if let Some(active) = live.session().filter(|s| s.session.id == session_id) {
            active.cancel.cancel();
            live.end_session();
            drop(live);
            self.observer().stop(session_id);
        }
    }

    /// Ends the active session with `status`; its timer stops and `session_ended` is logged.
    /// Edits since the last tick are summarised in this session, not left for the next one.
    pub fn end_session(&self, status: SessionStatus) -> Result<Session, SessionError> {
        let active = self.live().session().map(|s| (s.session.clone(), s.cancel.clone()));
        let Some((session, cancel)) = active else { return Err(SessionError::NoActiveSession) };
        cancel.cancel();
        self.flush_buffer_summaries();
        let duration_ms = (self.now() - session.started_at).num_milliseconds();
        self.log_action(ActionType::SessionEnded, json!({ "status": status, "durationMs": duration_ms }));
        let ended = self.db().end_session(&session.id, status)?;
        self.live().end_session();
        self.observer().stop(&session.id);
        self.learning().session_ended(&session.id);
        self.announce_end(&ended, duration_ms);
        Ok(ended)
    }

    /// `session:ended` to every UI: how the session ended, how long it ran, phases done.
    pub(crate) fn announce_end(&self, ended: &Session, duration_ms: i64) {
        // Every UI is shown it as `session:ended` (`Event::into_ui_message`).
        self.ctx().publish(crate::event::Domain::SessionEnded(self.summary_of(ended, duration_ms)));
        // What the session found hard is due for review from now on.
        if let Err(err) = self.reviews().sync() {
            tracing::warn!("cannot make the review items: {err}");
        }
        self.dashboard().session_ended(ended.status);
    }

    /// How `ended` ended, how long it ran and how many phases of its plan were done.
    pub(crate) fn summary_of(&self, ended: &Session, duration_ms: i64) -> SessionSummary {
        let phases_completed = match self.current_plan(&ended.id) {
            Ok(Some(plan)) => self.db().phases_for_plan(&plan.id).map_or(0, |phases| {
                phases.iter().filter(|p| p.status == crate::db::PhaseStatus::Complete).count() as u32
            }),
            _ => 0,
        };
        SessionSummary { session_id: ended.id.clone(), status: ended.status, duration_ms, phases_completed }
    }

    /// Logs one `buffer_summary` per dirty file edited since its last entry (Scenario 4.2).
    pub fn flush_buffer_summaries(&self) {
        let summaries = self.live().take_summaries();
        for s in summaries {
            self.log_action(
                ActionType::BufferSummary,
                json!({ "path": s.path, "editCount": s.edit_count, "charDelta": s.char_delta, "charCount": s.char_count }),
            );
        }
    }
}
