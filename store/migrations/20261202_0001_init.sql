-- jevlab schema v1: question-set and dataset snapshots, runs, raw exchanges,
-- per item results and per item × question answers.

CREATE TABLE question_sets (
    hash       TEXT PRIMARY KEY,           -- sha256 of body (canonical JSON)
    name       TEXT NOT NULL,
    path       TEXT NOT NULL DEFAULT '',   -- file it was first seen at
    body       BLOB NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX question_sets_name ON question_sets(name, created_at);

CREATE TABLE datasets (
    hash       TEXT PRIMARY KEY,           -- sha256 over the canonical items
    path       TEXT NOT NULL DEFAULT '',
    n_items    INTEGER NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE dataset_items (
    dataset_hash TEXT NOT NULL REFERENCES datasets(hash) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,         -- position in the file, from 0
    item_id      TEXT NOT NULL,
    state        BLOB NOT NULL,            -- compact JSON
    labels       BLOB,                     -- {"question": {"index": i, "text": t}}
    PRIMARY KEY (dataset_hash, seq)
) WITHOUT ROWID;

CREATE TABLE runs (
    id            TEXT PRIMARY KEY,        -- r-YYYYMMDD-HHMMSS-xxxx, sortable
    name          TEXT NOT NULL DEFAULT '',
    set_hash      TEXT NOT NULL REFERENCES question_sets(hash),
    set_name      TEXT NOT NULL DEFAULT '',
    set_path      TEXT NOT NULL DEFAULT '',
    dataset_hash  TEXT REFERENCES datasets(hash),
    dataset_path  TEXT NOT NULL DEFAULT '',
    provider_kind TEXT NOT NULL DEFAULT '', -- live, cached, offline, stand-in
    base_url      TEXT NOT NULL DEFAULT '', -- never the key
    model         TEXT NOT NULL DEFAULT '', -- requested
    models        TEXT NOT NULL DEFAULT '[]', -- resolved, JSON array
    status        TEXT NOT NULL,           -- running, done, interrupted, failed
    reason        TEXT NOT NULL DEFAULT '',
    started_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    finished_at   TEXT NOT NULL DEFAULT '',
    repeat        INTEGER NOT NULL DEFAULT 1,
    total         INTEGER NOT NULL DEFAULT 0, -- planned items × repeat
    done          INTEGER NOT NULL DEFAULT 0, -- stored items × repeat (answered or failed)
    errors        INTEGER NOT NULL DEFAULT 0, -- of which failed
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd      REAL NOT NULL DEFAULT 0,
    version       TEXT NOT NULL DEFAULT '',
    settings      TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX runs_started ON runs(started_at DESC, id DESC);
CREATE INDEX runs_set ON runs(set_name, started_at DESC);
CREATE INDEX runs_model ON runs(model, started_at DESC);

CREATE TABLE exchanges (
    id          INTEGER PRIMARY KEY,
    run_id      TEXT REFERENCES runs(id) ON DELETE SET NULL,
    ext_id      TEXT NOT NULL DEFAULT '',  -- the exchange's own id, if any
    request     BLOB NOT NULL,
    response    BLOB NOT NULL,
    latency_ms  REAL NOT NULL DEFAULT 0,
    recorded_at TEXT NOT NULL DEFAULT '',
    request_id  TEXT NOT NULL DEFAULT '',
    uncertain   TEXT NOT NULL DEFAULT ''   -- JSON array, '' when none
);
CREATE INDEX exchanges_run ON exchanges(run_id);

-- One row per item × repeat of a run: the call's accounting and its error.
CREATE TABLE item_results (
    run_id        TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    item_id       TEXT NOT NULL,
    repeat        INTEGER NOT NULL,
    seq           INTEGER NOT NULL,
    latency_ms    REAL NOT NULL DEFAULT 0,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd      REAL NOT NULL DEFAULT 0,
    model         TEXT NOT NULL DEFAULT '',
    request_id    TEXT NOT NULL DEFAULT '',
    attempts      INTEGER NOT NULL DEFAULT 0,
    err_kind      TEXT NOT NULL DEFAULT '',
    err_msg       TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, item_id, repeat)
) WITHOUT ROWID;

-- One row per item × question × repeat. An error row has err_kind set and
-- no answer columns.
CREATE TABLE answers (
    run_id      TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    item_id     TEXT NOT NULL,
    question_id TEXT NOT NULL,
    repeat      INTEGER NOT NULL,
    seq         INTEGER NOT NULL,
    type        TEXT NOT NULL DEFAULT '',
    decided     TEXT NOT NULL DEFAULT '',  -- chosen label, argmax level, or noul P(true) as text
    p           REAL,                      -- noul P(true)
    score       REAL,                      -- score's expected level
    choice      TEXT,                      -- choice's chosen label
    confidence  REAL,                      -- NULL when the answer has none
    probs       TEXT,                      -- JSON array in question order
    raw         BLOB,                      -- answer object as received
    source      TEXT NOT NULL DEFAULT '',
    model       TEXT NOT NULL DEFAULT '',
    recorded_at TEXT NOT NULL DEFAULT '',
    origin      TEXT NOT NULL DEFAULT '',
    latency_ms  REAL NOT NULL DEFAULT 0,
    label_index INTEGER,                   -- the item's label for this question, if any
    label_text  TEXT NOT NULL DEFAULT '',
    err_kind    TEXT NOT NULL DEFAULT '',
    err_msg     TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, item_id, question_id, repeat)
) WITHOUT ROWID;
-- Per-run answers in dataset order (show, metrics, TUI).
CREATE INDEX answers_run_seq ON answers(run_id, seq, question_id, repeat);
