-- Question history (jevlab log) and the hold-out ledger: each distinct body
-- of a question (its id, wire question, caller-side settings and variants,
-- hashed) is a revision, first seen at first_seen; run_revisions says which
-- revision of each question a run asked and on which split ('' = all
-- items, 'dev', 'test'), so the ledger of test evaluations is a query.
CREATE TABLE question_revisions (
    set_name    TEXT NOT NULL,
    question_id TEXT NOT NULL,
    hash        TEXT NOT NULL,             -- sha256 of body
    body        BLOB NOT NULL,             -- compact JSON
    first_seen  TEXT NOT NULL,
    PRIMARY KEY (set_name, question_id, hash)
) WITHOUT ROWID;

CREATE TABLE run_revisions (
    run_id      TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    set_name    TEXT NOT NULL,
    question_id TEXT NOT NULL,
    hash        TEXT NOT NULL,
    split       TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, question_id)
) WITHOUT ROWID;
CREATE INDEX run_revisions_question ON run_revisions(set_name, question_id, split);
