-- The action timeline's types are a closed set (ActionType in db/enums.rs): the database
-- refuses any other. And a few actions belong to no session (the spec logs Explain This,
-- practice reviews and the dashboard outside one): session_id may be NULL. SQLite cannot
-- change a column in place, so the table is rebuilt with its rows and indexes. A new action
-- type is a new migration that widens this CHECK (a test compares it with ActionType).
CREATE TABLE action_log_new (
    id           TEXT PRIMARY KEY NOT NULL,
    session_id   TEXT REFERENCES sessions(id) ON DELETE CASCADE,
    action_type  TEXT NOT NULL CHECK (action_type IN (
        'file_open', 'file_save', 'file_close', 'buffer_summary', 'buffer_significant_change',
        'tab_switch', 'selection', 'hint_level_change', 'explain_requested', 'review_requested',
        'idle_start', 'idle_end', 'session_started', 'session_resumed', 'session_ended', 'phase_started',
        'phase_completed', 'coaching_message', 'nudge_sent', 'nudge_suppressed', 'observer_muted',
        'mcp_tool_call', 'decorations_applied', 'file_hints_applied', 'explain_completed',
        'review_completed', 'dashboard_loaded', 'change_reverted', 'coaching_pipeline', 'worked_example'
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
