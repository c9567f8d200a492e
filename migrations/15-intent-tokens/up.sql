-- Tokens per intent (issue 42): a token budget counts what was spent while that intent was
-- bound, not the whole transcript (which holds other intents' work too). Each Claude Code
-- session's last-seen transcript total makes the next count a delta.
ALTER TABLE intent_usage ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0;
CREATE TABLE transcript_tokens (
    session_id  TEXT PRIMARY KEY NOT NULL,
    seen        INTEGER NOT NULL
);
