//! The handshake's state transitions, as methods of the session they change (spec FR-002).

use crate::db::{AgentSession, AgentState};

impl AgentSession {
    /// A new request: back to state 2, nothing bound or pending, the breaker reset.
    pub(super) fn prompt_submitted(&mut self) {
        self.back_to_intercept();
        self.pending_intent_id = None;
    }

    /// `select_active_intent` succeeded: state 3 under `intent`. The circuit breaker's count
    /// goes on (issue 42): selecting again between two identical calls does not make them a
    /// new row.
    pub(super) fn bind(&mut self, intent: &str) {
        self.pending_intent_id = None;
        self.state = AgentState::ContextualizedAction;
        self.intent_id = Some(intent.to_owned());
    }

    /// The bound intent is gone, done or blocked: back to state 2.
    pub(super) fn back_to_intercept(&mut self) {
        self.state = AgentState::ReasoningIntercept;
        self.intent_id = None;
        self.last_call_hash = None;
        self.repeat_count = 0;
    }

    /// Counts identical calls in a row; returns how many this one makes.
    pub(super) fn repeated(&mut self, call_hash: String) -> i64 {
        if self.last_call_hash.as_deref() == Some(call_hash.as_str()) {
            self.repeat_count += 1;
        } else {
            self.last_call_hash = Some(call_hash);
            self.repeat_count = 1;
        }
        self.repeat_count
    }

    /// A tool failed; returns how many times in a row it has.
    pub(super) fn tool_failed(&mut self, tool: &str) -> i64 {
        if tool == super::SELECT_TOOL {
            self.pending_intent_id = None;
        }
        if self.last_failed_tool.as_deref() == Some(tool) {
            self.failure_count += 1;
        } else {
            self.last_failed_tool = Some(tool.to_owned());
            self.failure_count = 1;
        }
        self.failure_count
    }

    pub(super) fn tool_succeeded(&mut self, tool: &str) {
        if self.last_failed_tool.as_deref() == Some(tool) {
            self.last_failed_tool = None;
            self.failure_count = 0;
        }
    }

    /// The Claude Code session ended.
    pub(super) fn ended(&mut self) {
        self.state = AgentState::Request;
        self.intent_id = None;
        self.pending_intent_id = None;
    }
}
