-- The embedded memory store (spec Story 8 without a ChromaDB server): one row per memory
-- with the spec's metadata, its vector (little-endian f32, L2-normalised) when the model was
-- there to compute it, and an FTS5 index of the text for ranking by keywords when it was not.
CREATE TABLE memories (
    id            TEXT PRIMARY KEY NOT NULL,
    content       TEXT NOT NULL,
    session_id    TEXT NOT NULL,
    project       TEXT NOT NULL,
    project_path  TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    importance    TEXT NOT NULL,
    tags          TEXT NOT NULL
);
CREATE INDEX memories_project ON memories(project);

CREATE TABLE memory_vectors (
    id         TEXT PRIMARY KEY NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    dimension  INTEGER NOT NULL,
    vector     BLOB NOT NULL
);

CREATE VIRTUAL TABLE memories_fts USING fts5(content, content = 'memories', content_rowid = 'rowid');

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, content) VALUES (new.rowid, new.content);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
    INSERT INTO memories_fts(rowid, content) VALUES (new.rowid, new.content);
END;
