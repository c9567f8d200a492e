-- Learning signals (issue 30): comprehension checks after each phase, the learner's prompts
-- to Claude Code with how they lean on it, and solutions Claude Code showed that the learner
-- then typed. Prompts stay on this machine.

-- What a phase's expected files held when the plan arrived: the comprehension check's
-- questions are about the learner's own change since then (capped per file).
CREATE TABLE phase_baselines (
    phase_id   TEXT NOT NULL REFERENCES phases(id) ON DELETE CASCADE,
    path       TEXT NOT NULL,
    content    TEXT,             -- NULL: the file did not exist
    PRIMARY KEY (phase_id, path)
) WITHOUT ROWID;

-- One question of a phase's comprehension check, its answer and its grade.
CREATE TABLE comprehension_checks (
    id          TEXT PRIMARY KEY NOT NULL,
    session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    phase_id    TEXT NOT NULL REFERENCES phases(id) ON DELETE CASCADE,
    skill_area  TEXT,
    kind        TEXT NOT NULL CHECK (kind IN ('predict_output', 'explain_line', 'edge_case')),
    question    TEXT NOT NULL,
    quote       TEXT NOT NULL,
    concept     TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'open'
                CHECK (status IN ('open', 'grading', 'graded', 'skipped', 'expired')),
    answer      TEXT,
    grade       TEXT CHECK (grade IS NULL OR grade IN ('correct', 'partial', 'incorrect')),
    why         TEXT,
    created_at  TEXT NOT NULL,
    answered_at TEXT
);
CREATE INDEX comprehension_checks_phase ON comprehension_checks(phase_id);
CREATE INDEX comprehension_checks_area ON comprehension_checks(skill_area, created_at);

-- Each prompt the learner typed to Claude Code, classified (rules first, Haiku when they
-- cannot tell).
CREATE TABLE learner_prompts (
    id          TEXT PRIMARY KEY NOT NULL,
    session_id  TEXT REFERENCES sessions(id) ON DELETE CASCADE,
    phase_id    TEXT REFERENCES phases(id) ON DELETE SET NULL,
    prompt      TEXT NOT NULL,
    class       TEXT NOT NULL CHECK (class IN
                    ('delegation', 'debugging_help', 'conceptual_question', 'verification', 'other')),
    decided_by  TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX learner_prompts_time ON learner_prompts(created_at);
CREATE INDEX learner_prompts_session ON learner_prompts(session_id, created_at);

-- A code block Claude Code showed that the learner then typed into a file.
CREATE TABLE solutions_shown (
    id          TEXT PRIMARY KEY NOT NULL,
    session_id  TEXT REFERENCES sessions(id) ON DELETE CASCADE,
    phase_id    TEXT REFERENCES phases(id) ON DELETE SET NULL,
    path        TEXT NOT NULL,
    overlap     REAL NOT NULL,
    block_lines INTEGER NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX solutions_shown_time ON solutions_shown(created_at);
CREATE INDEX solutions_shown_phase ON solutions_shown(phase_id);

-- The comprehension check's steps are logged (asked, answered, skipped, expired, failed), and
-- so is a solution shown then typed: two new action types.
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
        'intake_started', 'intake_turn', 'intake_transition', 'comprehension_check', 'solution_shown'
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
