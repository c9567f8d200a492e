-- The intake interview (background-session-guard spec, issue 18). Its guard is event-sourced:
-- every input, with its clock time, is a row of intake_events, and the guard's state is a fold
-- over them (a reload or `paige intake replay` rebuilds it exactly). intake_interviews holds
-- what the fold needs besides: the guard's constants and the scripted coding question.
CREATE TABLE intake_interviews (
    session_id      TEXT PRIMARY KEY NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    config          TEXT NOT NULL CHECK (json_valid(config)),
    coding_question TEXT NOT NULL,
    created_at      TEXT NOT NULL
);
CREATE TABLE intake_events (
    session_id TEXT NOT NULL REFERENCES intake_interviews(session_id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    at_ms      INTEGER NOT NULL,
    event      TEXT NOT NULL CHECK (json_valid(event)),
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;

-- The interview's turns and its transition are logged (FR-006): three new action types.
CREATE TABLE action_log_new (
    id           TEXT PRIMARY KEY NOT NULL,
    session_id   TEXT REFERENCES sessions(id) ON DELETE CASCADE,
    action_type  TEXT NOT NULL CHECK (action_type IN (
        'file_open', 'file_save', 'file_close', 'buffer_summary', 'buffer_significant_change',
        'tab_switch', 'selection', 'hint_level_change', 'explain_requested', 'review_requested',
        'idle_start', 'idle_end', 'session_started', 'session_resumed', 'session_ended', 'phase_started',
        'phase_completed', 'coaching_message', 'nudge_sent', 'nudge_suppressed', 'observer_muted',
        'mcp_tool_call', 'decorations_applied', 'file_hints_applied', 'explain_completed',
        'review_completed', 'dashboard_loaded', 'change_reverted', 'coaching_pipeline', 'worked_example',
        'intake_started', 'intake_turn', 'intake_transition'
    )),
    data         TEXT CHECK (data IS NULL OR json_valid(data)),
    created_at   TEXT NOT NULL
);
INSERT INTO action_log_new (id, session_id, action_type, data, created_at)
    SELECT id, session_id, action_type, data, created_at FROM action_log;
DROP TABLE action_log;
ALTER TABLE action_log_new RENAME TO action_log;
CREATE INDEX action_log_session ON action_log(session_id, created_at);
CREATE INDEX action_log_type ON action_log(session_id, action_type, created_at);
