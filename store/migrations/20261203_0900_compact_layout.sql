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
