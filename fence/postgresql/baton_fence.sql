-- baton fence for PostgreSQL: refuse a write made with an older fencing token
-- than one already seen for the same resource.
--
-- Load once into the database the app writes to (psql -f baton_fence.sql).
-- Then call baton_fence_check(resource, token) as the FIRST statement of
-- every write transaction, with the token of the term the app was started
-- for (BATON_TOKEN, or the socket's `start` event):
--
--   BEGIN;
--   SELECT baton_fence_check('orders', 42);
--   INSERT INTO orders ...;      -- the app's own writes
--   COMMIT;
--
-- The call raises SQLSTATE 'BATON' when a higher token has already written
-- to that resource; the transaction is then aborted and none of its writes
-- land. The app must stop at once: a newer leader exists.
--
-- Why it holds: the call takes the resource's row lock (INSERT ... ON
-- CONFLICT DO UPDATE locks the row whether or not it updates it) and keeps it
-- until COMMIT or ROLLBACK, so the check and the app's writes commit as one
-- against every other fenced writer. Under READ COMMITTED a writer that waited
-- on the lock re-reads the stored token after the holder commits; under
-- REPEATABLE READ or SERIALIZABLE it gets a serialization failure instead
-- (40001), which rolls back too and, retried, meets the refusal.

CREATE TABLE IF NOT EXISTS baton_fence (
    resource   text        PRIMARY KEY,
    token      bigint      NOT NULL CHECK (token > 0),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE OR REPLACE FUNCTION baton_fence_check(p_resource text, p_token bigint)
RETURNS bigint
LANGUAGE plpgsql
AS $$
DECLARE
    stored bigint;
BEGIN
    IF p_resource IS NULL OR p_resource = '' THEN
        RAISE EXCEPTION 'baton fence: no resource named'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_token IS NULL OR p_token <= 0 THEN
        RAISE EXCEPTION 'baton fence: no fencing token for resource "%" (is BATON_TOKEN set?)',
                        p_resource
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    INSERT INTO baton_fence AS f (resource, token) VALUES (p_resource, p_token)
    ON CONFLICT (resource) DO UPDATE
        SET token = EXCLUDED.token, updated_at = now()
        WHERE f.token <= EXCLUDED.token
    RETURNING f.token INTO stored;

    IF NOT FOUND THEN
        -- The row exists with a higher token; ON CONFLICT locked it anyway.
        SELECT f.token INTO stored FROM baton_fence AS f WHERE f.resource = p_resource;
        RAISE EXCEPTION 'baton fence: token % is stale for resource "%": token % has written since',
                        p_token, p_resource, stored
            USING ERRCODE = 'BATON',
                  HINT = 'a newer leader exists: stop writing at once';
    END IF;
    RETURN stored;
END;
$$;
