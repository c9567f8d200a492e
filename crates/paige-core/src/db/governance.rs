//! Hook-engine state: governed projects, the per-Claude-session state machine, what each
//! session last saw of each file, and turns spent per intent.

use std::path::Path;

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::{Db, DbError, ts};

/// The three states of the handshake (spec FR-002).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentState {
    /// State 1: a request arrived; nothing selected yet.
    Request,
    /// State 2: only `select_active_intent` may run.
    ReasoningIntercept,
    /// State 3: an intent is bound; mutations are checked against it.
    ContextualizedAction,
}

impl AgentState {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentState::Request => "request",
            AgentState::ReasoningIntercept => "reasoning_intercept",
            AgentState::ContextualizedAction => "contextualized_action",
        }
    }

    fn parse(raw: &str) -> AgentState {
        match raw {
            "contextualized_action" => AgentState::ContextualizedAction,
            "reasoning_intercept" => AgentState::ReasoningIntercept,
            _ => AgentState::Request,
        }
    }
}

/// One Claude Code session's governance state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSession {
    pub session_id: String,
    pub state: AgentState,
    pub intent_id: Option<String>,
    /// Set by PreToolUse of `select_active_intent`, bound by its PostToolUse.
    pub pending_intent_id: Option<String>,
    pub last_call_hash: Option<String>,
    pub repeat_count: i64,
    pub last_failed_tool: Option<String>,
    pub failure_count: i64,
}

impl AgentSession {
    pub fn new(session_id: &str) -> AgentSession {
        AgentSession {
            session_id: session_id.to_owned(),
            state: AgentState::Request,
            intent_id: None,
            pending_intent_id: None,
            last_call_hash: None,
            repeat_count: 0,
            last_failed_tool: None,
            failure_count: 0,
        }
    }
}

impl Db {
    /// Records that `.orchestration/` has existed in this project. Idempotent.
    pub fn enable_governance(&self, project_dir: &Path) -> Result<(), DbError> {
        self.conn().execute(
            "INSERT OR IGNORE INTO governed_projects (project_dir, enabled_at) VALUES (?1, ?2)",
            params![project_dir.display().to_string(), ts(self.now())],
        )?;
        Ok(())
    }

    pub fn governance_enabled(&self, project_dir: &Path) -> Result<bool, DbError> {
        let found: Option<i64> = self
            .conn()
            .query_row(
                "SELECT 1 FROM governed_projects WHERE project_dir = ?1",
                [project_dir.display().to_string()],
                |row| row.get(0),
            )
            .optional()?;
        Ok(found.is_some())
    }

    /// The session's state; a session never seen starts in State 1.
    pub fn agent_session(&self, session_id: &str) -> Result<AgentSession, DbError> {
        let found = self
            .conn()
            .query_row(
                "SELECT session_id, state, intent_id, pending_intent_id, last_call_hash, repeat_count,
                        last_failed_tool, failure_count
                 FROM agent_sessions WHERE session_id = ?1",
                [session_id],
                |row| {
                    Ok(AgentSession {
                        session_id: row.get(0)?,
                        state: AgentState::parse(&row.get::<_, String>(1)?),
                        intent_id: row.get(2)?,
                        pending_intent_id: row.get(3)?,
                        last_call_hash: row.get(4)?,
                        repeat_count: row.get(5)?,
                        last_failed_tool: row.get(6)?,
                        failure_count: row.get(7)?,
                    })
                },
            )
            .optional()?;
        Ok(found.unwrap_or_else(|| AgentSession::new(session_id)))
    }

    pub fn save_agent_session(&self, project_dir: &Path, session: &AgentSession) -> Result<(), DbError> {
        self.conn().execute(
            "INSERT INTO agent_sessions (session_id, project_dir, state, intent_id, pending_intent_id,
                 last_call_hash, repeat_count, last_failed_tool, failure_count, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT (session_id) DO UPDATE SET
                 project_dir = excluded.project_dir, state = excluded.state, intent_id = excluded.intent_id,
                 pending_intent_id = excluded.pending_intent_id, last_call_hash = excluded.last_call_hash,
                 repeat_count = excluded.repeat_count, last_failed_tool = excluded.last_failed_tool,
                 failure_count = excluded.failure_count, updated_at = excluded.updated_at",
            params![
                session.session_id,
                project_dir.display().to_string(),
                session.state.as_str(),
                session.intent_id,
                session.pending_intent_id,
                session.last_call_hash,
                session.repeat_count,
                session.last_failed_tool,
                session.failure_count,
                ts(self.now()),
            ],
        )?;
        Ok(())
    }

    /// Another session of this project bound to `intent_id`, if any.
    pub fn intent_holder(&self, project_dir: &Path, intent_id: &str, except: &str) -> Result<Option<String>, DbError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT session_id FROM agent_sessions
                 WHERE project_dir = ?1 AND intent_id = ?2 AND state = 'contextualized_action' AND session_id != ?3
                 LIMIT 1",
                params![project_dir.display().to_string(), intent_id, except],
                |row| row.get(0),
            )
            .optional()?)
    }

    /// Releases every hold on the session's intent (session ended).
    pub fn end_agent_session(&self, session_id: &str) -> Result<(), DbError> {
        self.conn().execute(
            "UPDATE agent_sessions SET state = 'request', intent_id = NULL, pending_intent_id = NULL
             WHERE session_id = ?1",
            [session_id],
        )?;
        Ok(())
    }

    pub fn record_file_view(&self, session_id: &str, path: &str, sha256: &str) -> Result<(), DbError> {
        self.conn().execute(
            "INSERT INTO agent_file_views (session_id, path, sha256) VALUES (?1, ?2, ?3)
             ON CONFLICT (session_id, path) DO UPDATE SET sha256 = excluded.sha256",
            params![session_id, path, sha256],
        )?;
        Ok(())
    }

    pub fn file_view(&self, session_id: &str, path: &str) -> Result<Option<String>, DbError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT sha256 FROM agent_file_views WHERE session_id = ?1 AND path = ?2",
                params![session_id, path],
                |row| row.get(0),
            )
            .optional()?)
    }

    /// Adds one turn to the intent's count and returns the new total.
    pub fn add_intent_turn(&self, project_dir: &Path, intent_id: &str) -> Result<i64, DbError> {
        Ok(self.conn().query_row(
            "INSERT INTO intent_usage (project_dir, intent_id, turns) VALUES (?1, ?2, 1)
             ON CONFLICT (project_dir, intent_id) DO UPDATE SET turns = turns + 1
             RETURNING turns",
            params![project_dir.display().to_string(), intent_id],
            |row| row.get(0),
        )?)
    }

    /// The tokens Claude Code session `session_id` spent since its last count, given its
    /// transcript's total now (`total`), added to `intent_id`'s count when one is bound;
    /// returns that intent's tokens so far (`None` without one). A smaller total than last time
    /// (a transcript read from a later start) counts nothing.
    pub fn add_intent_tokens(
        &self,
        project_dir: &Path,
        session_id: &str,
        intent_id: Option<&str>,
        total: i64,
    ) -> Result<Option<i64>, DbError> {
        let conn = self.conn();
        let seen: i64 = conn
            .query_row("SELECT seen FROM transcript_tokens WHERE session_id = ?1", [session_id], |r| r.get(0))
            .optional()?
            .unwrap_or(0);
        let delta = (total - seen).max(0);
        conn.execute(
            "INSERT INTO transcript_tokens (session_id, seen) VALUES (?1, ?2)
             ON CONFLICT (session_id) DO UPDATE SET seen = max(seen, excluded.seen)",
            params![session_id, total],
        )?;
        let Some(intent_id) = intent_id else { return Ok(None) };
        Ok(Some(conn.query_row(
            "INSERT INTO intent_usage (project_dir, intent_id, tokens) VALUES (?1, ?2, ?3)
             ON CONFLICT (project_dir, intent_id) DO UPDATE SET tokens = tokens + ?3
             RETURNING tokens",
            params![project_dir.display().to_string(), intent_id, delta],
            |row| row.get(0),
        )?))
    }

    pub fn reset_intent_usage(&self, project_dir: &Path, intent_id: &str) -> Result<(), DbError> {
        self.conn().execute(
            "DELETE FROM intent_usage WHERE project_dir = ?1 AND intent_id = ?2",
            params![project_dir.display().to_string(), intent_id],
        )?;
        Ok(())
    }
}
