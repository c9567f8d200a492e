-- Whose words a prompt to Claude Code is (issue 40). Paige types into Claude Code itself —
-- the kickoff, a phase-done note, an Observer nudge — and Claude Code's UserPromptSubmit
-- reports those as it reports the learner's. Each text Paige types is kept here by the
-- SHA-256 of its normalised text; a prompt that matches one is Paige's, and only the
-- learner's count (the gauge, the chart, the delegation trigger, the learning record).
CREATE TABLE paige_deliveries (
    id          TEXT PRIMARY KEY NOT NULL,
    session_id  TEXT REFERENCES sessions(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    sha256      TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX paige_deliveries_sha ON paige_deliveries(sha256);

ALTER TABLE learner_prompts ADD COLUMN author TEXT NOT NULL DEFAULT 'learner'
    CHECK (author IN ('learner', 'paige'));
-- Rows kept before this: every text Paige typed opened with its tag.
UPDATE learner_prompts SET author = 'paige'
 WHERE prompt LIKE '[Paige] %' OR prompt LIKE '[Paige''s Observer] %';
