-- The hold-out ledger's relabels: a label edited in the workbench after
-- some revision of its question had been evaluated on test. split is the
-- item's part of the set's split ('' when the set has none).
CREATE TABLE label_edits (
    set_name    TEXT NOT NULL,
    question_id TEXT NOT NULL,
    item_id     TEXT NOT NULL,
    split       TEXT NOT NULL DEFAULT '',
    edited_at   TEXT NOT NULL
);
CREATE INDEX label_edits_question ON label_edits(set_name, question_id, edited_at);
