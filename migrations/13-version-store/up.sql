-- The version store's eviction in bounded steps (issue 32). Finding what to drop used to read
-- the whole table twice per dropped row (the store's size, then the oldest row that is not
-- its path's latest): with 100,000 versions over the cap one hook took minutes. Now:
--  * `superseded`: 1 once a later version of the same path and kind exists. The latest
--    version of a path and kind is never dropped, and the oldest evictable ones are a scan of
--    `file_versions_evictable`.
--  * `version_store`: one row, the bytes of distinct content all versions hold (what
--    `DATA_DIR/versions/` holds), kept by the triggers below in the writer's transaction.
ALTER TABLE file_versions ADD COLUMN superseded INTEGER NOT NULL DEFAULT 0;
UPDATE file_versions SET superseded = 1
 WHERE id NOT IN (SELECT MAX(id) FROM file_versions GROUP BY project_dir, path, kind);
CREATE INDEX file_versions_latest ON file_versions(project_dir, path, kind) WHERE superseded = 0;
CREATE INDEX file_versions_evictable ON file_versions(id) WHERE superseded = 1;

CREATE TABLE version_store (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    bytes  INTEGER NOT NULL
);
INSERT INTO version_store (id, bytes)
SELECT 1, COALESCE(SUM(size), 0) FROM (SELECT MAX(size) AS size FROM file_versions GROUP BY sha256);

-- A new version supersedes the path's earlier one of its kind; new content adds its bytes.
CREATE TRIGGER file_versions_added AFTER INSERT ON file_versions BEGIN
    UPDATE file_versions SET superseded = 1
     WHERE project_dir = NEW.project_dir AND path = NEW.path AND kind = NEW.kind
       AND superseded = 0 AND id < NEW.id;
    UPDATE version_store SET bytes = bytes + NEW.size
     WHERE NOT EXISTS (SELECT 1 FROM file_versions WHERE sha256 = NEW.sha256 AND id <> NEW.id);
END;

-- Content no version uses any more gives its bytes back.
CREATE TRIGGER file_versions_dropped AFTER DELETE ON file_versions BEGIN
    UPDATE version_store SET bytes = bytes - OLD.size
     WHERE NOT EXISTS (SELECT 1 FROM file_versions WHERE sha256 = OLD.sha256);
END;
