-- The answer cache's index: one row per answered question of each stored
-- exchange, found by provider.KeyFor(requested model, state, question), so
-- the cache looks answers up by key instead of reading every exchange.
-- Rows for exchanges stored before this migration are filled in by its Go
-- step (backfillAnswerIndex) in the same transaction.
CREATE TABLE answer_index (
    key         BLOB NOT NULL,             -- provider.AnswerKey, 32 bytes
    exchange_id INTEGER NOT NULL REFERENCES exchanges(id) ON DELETE CASCADE,
    question_id TEXT NOT NULL,             -- the id it was asked under
    model       TEXT NOT NULL DEFAULT '',  -- resolved (response) model
    recorded_ns INTEGER NOT NULL,          -- recorded_at in Unix ns; min int64 when unknown
    off         INTEGER NOT NULL DEFAULT 0, -- the answer is response[off : off+len] ...
    len         INTEGER NOT NULL DEFAULT 0,
    raw         BLOB                       -- ... unless it is kept here (could not be sliced)
);
-- Rowid order is save order (first saved wins ties), so it is not indexed.
CREATE INDEX answer_index_key ON answer_index(key, recorded_ns DESC, model);
