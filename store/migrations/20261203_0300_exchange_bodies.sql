-- Each exchange used to keep its full request, repeating the questions
-- object (the bulk of it) in every exchange of a run. The questions value
-- is now stored once in bodies, keyed by its sha256, and the exchange keeps
-- the rest: request holds the request with the bytes
-- [q_off, q_off + length(body)) cut out, and q_hash names the body to put
-- back there (NULL: request is the whole request, as before). The cut is
-- made on the exact bytes, so the request comes back bit-identical. Its Go
-- step (splitExchangeRequests) rewrites the exchanges already stored.
CREATE TABLE bodies (
    hash BLOB PRIMARY KEY,                 -- sha256 of body, 32 bytes
    body BLOB NOT NULL
) WITHOUT ROWID;
ALTER TABLE exchanges ADD COLUMN q_hash BLOB;
ALTER TABLE exchanges ADD COLUMN q_off INTEGER NOT NULL DEFAULT 0;
