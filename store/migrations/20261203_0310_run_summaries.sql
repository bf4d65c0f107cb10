-- A finished run's computed report, so show, runs and the workbench open a
-- large run without reading every answer again. key names what it was
-- computed from (the run's counts and last update, the metric options and
-- the build), so a summary is only used for exactly that; SaveItems drops a
-- run's summaries whenever it stores or replaces an item (resume, retry).
CREATE TABLE run_summaries (
    run_id     TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    key        TEXT NOT NULL,
    body       BLOB NOT NULL,              -- the summary's JSON
    created_at TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
