-- A cache of .orchestration/agent_trace.jsonl, which stays the source of truth (hook spec
-- FR-004): the file's size and last hash when indexed, and per file the intents whose
-- mutations touched it. Checked against the file before use and rebuilt when they differ,
-- so a decision does not read the whole ledger.
CREATE TABLE ledger_heads (
    project_dir  TEXT PRIMARY KEY NOT NULL,
    size         INTEGER NOT NULL,
    last_hash    TEXT NOT NULL,
    lines        INTEGER NOT NULL
);

CREATE TABLE ledger_files (
    project_dir  TEXT NOT NULL,
    path         TEXT NOT NULL,
    intent_id    TEXT NOT NULL,
    first_line   INTEGER NOT NULL,
    last_line    INTEGER NOT NULL,
    PRIMARY KEY (project_dir, path, intent_id)
);
CREATE INDEX ledger_files_last ON ledger_files(project_dir, path, last_line);
