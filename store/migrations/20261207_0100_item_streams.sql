-- A finished run's answers in item id order, as a comparison reads them:
-- every item's answers (store/itemstream.go: what ForEachItemNoRaw returns,
-- without the raw bytes, provenance, decided text or error message), a few
-- thousand items to a chunk, the strings they repeat once per chunk. It is
-- derived from item_results, which stays the record: FinishRun writes it in
-- one transaction, SaveItems drops it whenever it stores or replaces an
-- item (resume, retry), and a run without one is read from item_results.
-- run_key is the run's updated_at and totals when it was written
-- (itemstream.go's runKeySQL): a stream whose key no longer matches (the
-- run was changed by a jevlab that predates streams) is not read.
-- Reading two 100,000-item runs this way skips a SQLite row, an inflate
-- and the answers' strings per item. A later migration that rewrites
-- item_results must delete these rows.
CREATE TABLE item_streams (
    run_id  TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    chunk   INTEGER NOT NULL,   -- 0, 1, …: the chunks in item id order
    run_key TEXT NOT NULL,
    body    BLOB NOT NULL,
    PRIMARY KEY (run_id, chunk)
);
