-- A running run holds a lease that its process renews (heartbeat): who runs
-- it ("host:pid:token") and until when. A run still marked running whose
-- lease has lapsed, or whose process is gone, reads as interrupted, so a
-- SIGKILLed eval does not show as running forever, and a second process
-- cannot resume a run another one is still running.
ALTER TABLE runs ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN lease_until TEXT NOT NULL DEFAULT '';
