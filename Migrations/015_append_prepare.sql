-- Purpose: the database side of the writer's own append path. The service
-- numbers new events, builds the hash chain (the encoding of
-- ledger.event_content) and inserts them with COPY; this function is the one
-- round trip before that. It takes the ledger's single append lock (so commit
-- order stays position order, exactly as ledger.append_events does) and
-- answers, as rows of one result:
--   'head'   the newest event's position and hash (none when the log is empty),
--            with the time to record the batch at (`recorded_us`);
--   'stored' each stored event whose idempotency key the batch carries, with
--            what a duplicate answer needs and its payload as jsonb prints it;
--   'stream' each stream the batch touches, with its current version (0: new).
-- ledger.append_events remains the reference implementation in SQL, and the
-- path for items the service cannot render itself.
CREATE FUNCTION ledger.append_prepare(p_keys text[], p_streams text[])
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
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    now_recorded timestamptz;
BEGIN
    PERFORM pg_advisory_xact_lock(7413001);   -- the ledger's single append lock
    now_recorded := clock_timestamp();

    RETURN QUERY
    SELECT 'head'::text, h.position, NULL::text, NULL::text, NULL::integer, NULL::text, NULL::text, NULL::text,
           ledger.micros(now_recorded), h.hash
      FROM (SELECT 1) AS one
      LEFT JOIN LATERAL (SELECT e.position, e.hash FROM ledger.events e ORDER BY e.position DESC LIMIT 1) AS h ON true;

    -- One index probe per key (= ANY of an array, never a scan of the log).
    RETURN QUERY
    SELECT 'stored'::text, e.position, e.event_id::text, e.stream, e.stream_version, e.type, e.payload::text,
           e.idempotency_key, ledger.micros(e.recorded_at), e.hash
      FROM ledger.events e
     WHERE e.idempotency_key = ANY(p_keys);

    RETURN QUERY
    SELECT 'stream'::text, NULL::bigint, NULL::text, s.name,
           coalesce((SELECT max(e.stream_version) FROM ledger.events e WHERE e.stream = s.name), 0),
           NULL::text, NULL::text, NULL::text, NULL::bigint, NULL::bytea
      FROM unnest(p_streams) AS s(name);
END
$$;

GRANT EXECUTE ON FUNCTION ledger.append_prepare(text[], text[]) TO ledger_service;
