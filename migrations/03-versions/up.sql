-- The change detector's versions of learner files (content in DATA_DIR/versions/, by
-- SHA-256). 'seen': what the file held when Paige first saw it or the learner changed it;
-- 'replaced': what a tool call left there before Paige undid it. Append-only like 01.
CREATE TABLE file_versions (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    project_dir  TEXT NOT NULL,
    path         TEXT NOT NULL,
    sha256       TEXT NOT NULL,
    size         INTEGER NOT NULL,
    mode         INTEGER NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('seen', 'replaced')),
    created_at   TEXT NOT NULL
);
CREATE INDEX file_versions_path ON file_versions(project_dir, path, id);
CREATE INDEX file_versions_sha ON file_versions(sha256);
