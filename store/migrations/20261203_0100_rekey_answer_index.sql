-- The answer cache's key now compares JSON strings by value (provider.KeyFor
-- with CanonicalStrings: "\u00e9" and "é" are one key), and a recorded_at
-- far in the future counts as unknown (provider.ParseRecordedAt), so every
-- index row is computed again: its Go step (backfillAnswerIndex) refills
-- the table from the stored exchanges, oldest first, in this transaction.
-- Rows keyed the old way would miss (asking again, at a cost) and a future
-- timestamp would keep outranking real recordings.
DELETE FROM answer_index;
