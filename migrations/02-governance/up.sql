-- Governance of Claude Code's tool calls (hook engine). Append-only like 01.

-- A project is governed once `.orchestration/` has existed in it; from then on a missing or
-- corrupt sidecar means deny every mutating action (fail-safe), never "back to coach mode".
CREATE TABLE governed_projects (
    project_dir  TEXT PRIMARY KEY NOT NULL,
    enabled_at   TEXT NOT NULL
);

-- The three-state machine, one row per Claude Code session_id. Survives a Paige restart.
CREATE TABLE agent_sessions (
    session_id         TEXT PRIMARY KEY NOT NULL,
    project_dir        TEXT NOT NULL,
    state              TEXT NOT NULL DEFAULT 'request'
                       CHECK (state IN ('request', 'reasoning_intercept', 'contextualized_action')),
    intent_id          TEXT,
    pending_intent_id  TEXT,
    last_call_hash     TEXT,
    repeat_count       INTEGER NOT NULL DEFAULT 0,
    last_failed_tool   TEXT,
    failure_count      INTEGER NOT NULL DEFAULT 0,
    updated_at         TEXT NOT NULL
);
CREATE INDEX agent_sessions_intent ON agent_sessions(project_dir, intent_id);

-- What the agent last saw of a file in a session (content hash): the stale-file check.
CREATE TABLE agent_file_views (
    session_id  TEXT NOT NULL REFERENCES agent_sessions(session_id) ON DELETE CASCADE,
    path        TEXT NOT NULL,
    sha256      TEXT NOT NULL,
    PRIMARY KEY (session_id, path)
);

-- Tool calls (turns) spent per intent, for budgets.
CREATE TABLE intent_usage (
    project_dir  TEXT NOT NULL,
    intent_id    TEXT NOT NULL,
    turns        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (project_dir, intent_id)
);
