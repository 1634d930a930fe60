-- Purpose: spare the writer a stream-version probe for streams whose version
-- it already knows. The writer remembers each stream's version as of its own
-- last commit, and that knowledge is exact exactly when the log's head is
-- still the position that commit ended at (nobody else has appended since;
-- and now the append lock is held, nobody can). So: probe `p_streams`, and
-- `p_cached_streams` too unless the head is `p_cached_head`; the writer reads
-- the head row to know which happened. Otherwise the contract of 015/016.
CREATE FUNCTION ledger.append_prepare(p_keys text[], p_streams text[], p_cached_streams text[], p_cached_head bigint)
RETURNS TABLE (
    kind           text,
    "position"     bigint,
    event_id       text,
    stream         text,
    stream_version integer,
    type           text,
    payload        text,
    key            text,
    recorded_us    bigint,
    hash           bytea
)
LANGUAGE plpgsql
SET enable_seqscan = off   -- index probes only, whatever generic plan is cached (016)
AS $$
#variable_conflict use_column
DECLARE
    now_recorded  timestamptz;
    head_position bigint;
    head_hash     bytea;
BEGIN
    PERFORM pg_advisory_xact_lock(7413001);   -- the ledger's single append lock
    now_recorded := clock_timestamp();
    SELECT e.position, e.hash INTO head_position, head_hash
      FROM ledger.events e ORDER BY e.position DESC LIMIT 1;

    RETURN QUERY
    SELECT 'head'::text, head_position, NULL::text, NULL::text, NULL::integer, NULL::text, NULL::text, NULL::text,
           ledger.micros(now_recorded), head_hash;

    RETURN QUERY
    SELECT 'stored'::text, e.position, e.event_id::text, e.stream, e.stream_version, e.type, e.payload::text,
           e.idempotency_key, ledger.micros(e.recorded_at), e.hash
      FROM ledger.events e
     WHERE e.idempotency_key = ANY(p_keys);

    IF head_position IS DISTINCT FROM p_cached_head THEN
        p_streams := p_streams || p_cached_streams;
    END IF;
    RETURN QUERY
    SELECT 'stream'::text, NULL::bigint, NULL::text, s.name,
           coalesce((SELECT max(e.stream_version) FROM ledger.events e WHERE e.stream = s.name), 0),
           NULL::text, NULL::text, NULL::text, NULL::bigint, NULL::bytea
      FROM unnest(p_streams) AS s(name);
END
$$;

GRANT EXECUTE ON FUNCTION ledger.append_prepare(text[], text[], text[], bigint) TO ledger_service;
