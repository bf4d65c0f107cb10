-- An answer's raw bytes (the answer object as received) were its largest
-- part: a choice's probabilities repeat every option label. They are now
-- kept deflated with a preset dictionary, the first raw answer to the same
-- question of the same run (raw_dicts), which holds those labels: raw is
-- the deflated bytes when raw_dict is set, the bytes as received when it is
-- NULL (answers stored before, and short ones). Inflating gives the exact
-- bytes back.
CREATE TABLE raw_dicts (
    id   INTEGER PRIMARY KEY,
    body BLOB NOT NULL
);
ALTER TABLE answers ADD COLUMN raw_dict INTEGER REFERENCES raw_dicts(id);
