-- Paige foundation schema: the 8 tables of spec Story 2 and the 2 of Story 4.
-- Append-only: later changes go in a new numbered folder, never here.
-- Timestamps are ISO 8601 UTC text (`2026-11-22T04:16:24.123Z`), so they sort as text.
-- JSON columns hold serde-encoded values; the Rust API never exposes them as raw strings.

CREATE TABLE sessions (
    id            TEXT PRIMARY KEY NOT NULL,
    project_dir   TEXT NOT NULL,
    issue_number  INTEGER,
    issue_title   TEXT,
    status        TEXT NOT NULL DEFAULT 'active'
                  CHECK (status IN ('active', 'completed', 'abandoned')),
    started_at    TEXT NOT NULL,
    ended_at      TEXT
);

CREATE TABLE plans (
    id             TEXT PRIMARY KEY NOT NULL,
    session_id     TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    raw_plan_text  TEXT NOT NULL,
    created_at     TEXT NOT NULL
);
CREATE INDEX plans_session ON plans(session_id);

CREATE TABLE phases (
    id              TEXT PRIMARY KEY NOT NULL,
    plan_id         TEXT NOT NULL REFERENCES plans(id) ON DELETE CASCADE,
    number          INTEGER NOT NULL,
    title           TEXT NOT NULL,
    description     TEXT NOT NULL,
    status          TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'active', 'complete')),
    hint_level      TEXT NOT NULL,
    expected_files  TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(expected_files)),
    started_at      TEXT,
    completed_at    TEXT
);
CREATE INDEX phases_plan ON phases(plan_id, number);

CREATE TABLE phase_hints (
    id          TEXT PRIMARY KEY NOT NULL,
    phase_id    TEXT NOT NULL REFERENCES phases(id) ON DELETE CASCADE,
    type        TEXT NOT NULL CHECK (type IN ('file', 'line')),
    path        TEXT NOT NULL,
    start_line  INTEGER,
    end_line    INTEGER,
    style       TEXT NOT NULL,
    hover_text  TEXT
);
CREATE INDEX phase_hints_phase ON phase_hints(phase_id, type);

CREATE TABLE dreyfus_assessments (
    id           TEXT PRIMARY KEY NOT NULL,
    skill_area   TEXT NOT NULL UNIQUE,
    stage        TEXT NOT NULL
                 CHECK (stage IN ('novice', 'advanced_beginner', 'competent', 'proficient', 'expert')),
    confidence   REAL NOT NULL,
    evidence     TEXT NOT NULL,
    assessed_at  TEXT NOT NULL
);

CREATE TABLE knowledge_gaps (
    id                   TEXT PRIMARY KEY NOT NULL,
    session_id           TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    topic                TEXT NOT NULL,
    severity             TEXT NOT NULL CHECK (severity IN ('low', 'medium', 'high')),
    evidence             TEXT NOT NULL,
    related_concepts     TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(related_concepts)),
    frequency            INTEGER NOT NULL DEFAULT 1,
    last_encountered_at  TEXT NOT NULL,
    addressed            INTEGER NOT NULL DEFAULT 0 CHECK (addressed IN (0, 1))
);
CREATE INDEX knowledge_gaps_session ON knowledge_gaps(session_id);

CREATE TABLE kata_specs (
    id                TEXT PRIMARY KEY NOT NULL,
    knowledge_gap_id  TEXT NOT NULL REFERENCES knowledge_gaps(id) ON DELETE CASCADE,
    title             TEXT NOT NULL,
    description       TEXT NOT NULL,
    scaffolding_code  TEXT NOT NULL,
    instructor_notes  TEXT NOT NULL,
    constraints       TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(constraints)),
    user_attempts     TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(user_attempts))
);
CREATE INDEX kata_specs_gap ON kata_specs(knowledge_gap_id);

CREATE TABLE progress_events (
    id          TEXT PRIMARY KEY NOT NULL,
    phase_id    TEXT NOT NULL REFERENCES phases(id) ON DELETE CASCADE,
    event_type  TEXT NOT NULL,
    data        TEXT CHECK (data IS NULL OR json_valid(data)),
    created_at  TEXT NOT NULL
);
CREATE INDEX progress_events_phase ON progress_events(phase_id, created_at);

-- Story 4: the action timeline and the API cost log.
CREATE TABLE action_log (
    id           TEXT PRIMARY KEY NOT NULL,
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    action_type  TEXT NOT NULL,
    data         TEXT CHECK (data IS NULL OR json_valid(data)),
    created_at   TEXT NOT NULL
);
CREATE INDEX action_log_session ON action_log(session_id, created_at);
CREATE INDEX action_log_type ON action_log(session_id, action_type, created_at);

-- session_id may be NULL: some model calls (dashboard, settings checks) happen outside a session.
CREATE TABLE api_call_log (
    id             TEXT PRIMARY KEY NOT NULL,
    session_id     TEXT REFERENCES sessions(id) ON DELETE CASCADE,
    call_type      TEXT NOT NULL,
    model          TEXT NOT NULL,
    input_hash     TEXT NOT NULL,
    latency_ms     INTEGER NOT NULL,
    input_tokens   INTEGER NOT NULL DEFAULT 0,
    output_tokens  INTEGER NOT NULL DEFAULT 0,
    cost_estimate  REAL NOT NULL DEFAULT 0,
    created_at     TEXT NOT NULL
);
CREATE INDEX api_call_log_session ON api_call_log(session_id, created_at);
