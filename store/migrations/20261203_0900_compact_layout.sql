-- An item's answers used to be a row each in answers, every row repeating
-- the run id, item id, provenance and latency its item shares, with the
-- raw bytes deflated beside a second index in dataset order: ~340 bytes an
-- answer. They are now one value of the item's item_results row:
-- answers holds the item's answers packed (store/itempack.go: the item's
-- provenance once, then per answer its question id, decided value, label,
-- error, the float64s as their bits, the distribution as the shortest text
-- that reads back to the same float64s, and only what differs from the
-- item), deflated against the run's first packed item (raw_dicts). A raw
-- answer that is a slice of a stored exchange's response (answers served
-- from the cache are, and live ones of the exchange just saved) is kept as
-- a reference (exchange id, offset, length); any other is an entry of raws
-- (its raw_dicts id, as packed before, and the bytes). Everything reads
-- back identical. Rows are read in dataset order through item_results_seq.
-- Its Go step (packAnswers) packs the answers already stored, with
-- progress, and then drops the answers table and its index.
ALTER TABLE item_results ADD COLUMN answers BLOB;  -- packed answers (NULL: none stored)
ALTER TABLE item_results ADD COLUMN raws BLOB;     -- raw answers kept inline
CREATE INDEX item_results_seq ON item_results(run_id, seq, repeat);
-- An exchange's response is kept deflated against the run's first
-- response (resp_dict names that raw_dicts body; NULL: as received), and
-- the resolved model and recorded time the answer cache ranks by are kept
-- once per exchange instead of once per indexed answer.
ALTER TABLE exchanges ADD COLUMN resp_dict INTEGER REFERENCES raw_dicts(id);
ALTER TABLE exchanges ADD COLUMN model TEXT NOT NULL DEFAULT '';     -- resolved (response) model
ALTER TABLE exchanges ADD COLUMN recorded_ns INTEGER NOT NULL DEFAULT -9223372036854775808; -- recorded_at in Unix ns; min int64 when unknown
-- The answer index is keyed by its key, so the table is its own index:
-- the same rows as before without the rowid, the separate key index, the
-- question id (never read) or the per-row model and time. ord is the
-- answer's place among its exchange's indexed answers: with exchange_id it
-- orders rows as they were saved (first saved wins ties). The Go step
-- refills it from the stored exchanges (backfillAnswerIndex), then packs
-- the responses (packResponses).
DROP INDEX answer_index_key;
DROP TABLE answer_index;
CREATE TABLE answer_index (
    key         BLOB NOT NULL,             -- provider.AnswerKey, 32 bytes
    exchange_id INTEGER NOT NULL REFERENCES exchanges(id) ON DELETE CASCADE,
    ord         INTEGER NOT NULL,
    off         INTEGER NOT NULL DEFAULT 0, -- the answer is response[off : off+len] ...
    len         INTEGER NOT NULL DEFAULT 0,
    raw         BLOB,                      -- ... unless it is kept here (could not be sliced)
    PRIMARY KEY (key, exchange_id, ord)
) WITHOUT ROWID;
-- A dataset item's state and labels are kept deflated against the
-- dataset's first item's (state_dict, labels_dict name those raw_dicts
-- bodies; NULL: as given). The Go step packs the stored items
-- (packDatasetItems).
ALTER TABLE dataset_items ADD COLUMN state_dict INTEGER REFERENCES raw_dicts(id);
ALTER TABLE dataset_items ADD COLUMN labels_dict INTEGER REFERENCES raw_dicts(id);
