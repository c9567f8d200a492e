-- Spaced review (issue 31): what the learner found hard — a knowledge gap, a kata not yet
-- mastered, a concept answered wrong in a comprehension check — becomes a review item,
-- scheduled with FSRS. `card` is the FSRS card (rs-fsrs, JSON); `due` is copied out of it so
-- "what is due" is an index scan. An item is addressed once its interval is stable (≥ 7 days)
-- or, for a gap, once a later phase of its skill area was understood.
CREATE TABLE review_items (
    id            TEXT PRIMARY KEY NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('gap', 'kata', 'concept')),
    source_id     TEXT NOT NULL,
    topic         TEXT NOT NULL,
    skill_area    TEXT,
    context       TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(context)),
    card          TEXT NOT NULL CHECK (json_valid(card)),
    due           TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    addressed_at  TEXT,
    -- The open review's question (JSON: question, concept) and when it was asked: an answer
    -- is timed from it, and a restart between the two loses nothing.
    asked         TEXT CHECK (asked IS NULL OR json_valid(asked)),
    asked_at      TEXT,
    UNIQUE (kind, source_id)
);
CREATE INDEX review_items_due ON review_items(due) WHERE addressed_at IS NULL;

-- Every review answered: the question asked, the answer, its grade, the FSRS rating it made
-- and the interval it set.
CREATE TABLE review_log (
    id              TEXT PRIMARY KEY NOT NULL,
    item_id         TEXT NOT NULL REFERENCES review_items(id) ON DELETE CASCADE,
    question        TEXT NOT NULL,
    answer          TEXT NOT NULL,
    grade           TEXT NOT NULL CHECK (grade IN ('correct', 'partial', 'incorrect')),
    rating          TEXT NOT NULL CHECK (rating IN ('again', 'hard', 'good', 'easy')),
    elapsed_ms      INTEGER NOT NULL,
    scheduled_days  INTEGER NOT NULL,
    reviewed_at     TEXT NOT NULL
);
CREATE INDEX review_log_item ON review_log(item_id, reviewed_at);
CREATE INDEX review_log_time ON review_log(reviewed_at);
