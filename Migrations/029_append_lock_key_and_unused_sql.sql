-- Purpose: the append lock's key written in one place, every setting of the
-- append functions shown where they are created, and no SQL that nothing calls.
--
-- ledger.append_lock_key() is the key of the ledger's single append lock, a
-- transaction-scoped advisory lock: every append takes it before it reads the
-- chain's head and holds it until commit, so positions are gapless, each hash
-- chains to the committed head, and commit order is position order.
-- `ledger rebuild` holds it while it recomputes the read models. The service
-- takes the same lock with AppendLock.key (Sources/LedgerPostgres/AppendLock.swift);
-- a test checks that the two agree. IMMUTABLE and written in SQL, so PostgreSQL
-- folds the call into the constant when it plans a statement that uses it.
CREATE FUNCTION ledger.append_lock_key() RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT 7413001::bigint
$$;
COMMENT ON FUNCTION ledger.append_lock_key() IS 'The key of the ledger''s single append lock (pg_advisory_xact_lock); AppendLock.key on the Swift side.';

-- The functions that take the append lock, each defined here whole and reading
-- the key from ledger.append_lock_key(); what they do is unchanged.

-- ledger.append_events' path for a batch that carries an expectedVersion: item by
-- item, since each item's check depends on the items before it.
--
-- Appends are serialized by the append lock, taken before the head is read and
-- held until commit: a reader following `position > last position read` never
-- skips an event that commits late.
--
-- Idempotency is enforced by the unique constraint on idempotency_key
-- (INSERT ... ON CONFLICT DO NOTHING), not by a read before the write. A key
-- that already exists answers 'duplicate' (same stream, type and payload;
-- the redelivery is counted) or 'key_conflict' (different content).
-- expectedVersion, when given, must equal the stream's current version, or
-- the item answers 'version_conflict'. One item's refusal never fails the batch.
--
-- Each item: {stream, type, source, payload, raw (hex or null), metadata,
--             key, observedAtMicros, expectedVersion (optional)}.
CREATE OR REPLACE FUNCTION ledger.append_events_stepwise(batch jsonb)
RETURNS TABLE (
    ordinal        integer,
    outcome        text,
    "position"     bigint,
    event_id       uuid,
    stream_version integer,
    recorded_at    timestamptz,
    hash           bytea,
    redeliveries   bigint
)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    head_position bigint;
    head_hash     bytea;
    now_recorded  timestamptz;
    item          jsonb;
    n             integer := 0;
    v_version     integer;
    v_position    bigint;
    v_id          uuid;
    v_hash        bytea;
    v_payload     jsonb;
    v_raw         bytea;
    v_metadata    jsonb;
    v_observed    timestamptz;
    existing      record;
BEGIN
    PERFORM pg_advisory_xact_lock(ledger.append_lock_key());
    now_recorded := clock_timestamp();
    SELECT e.position, e.hash INTO head_position, head_hash
      FROM ledger.events e ORDER BY e.position DESC LIMIT 1;
    head_position := coalesce(head_position, 0);
    head_hash := coalesce(head_hash, '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea);

    FOR item IN SELECT value FROM jsonb_array_elements(batch) LOOP
        n := n + 1;
        SELECT coalesce(max(e.stream_version), 0) INTO v_version
          FROM ledger.events e WHERE e.stream = item->>'stream';

        IF item ? 'expectedVersion' AND (item->>'expectedVersion')::integer <> v_version THEN
            SELECT e.position, e.event_id, e.stream_version, e.recorded_at, e.hash,
                   (e.stream = item->>'stream' AND e.type = item->>'type' AND e.payload = item->'payload') AS same
              INTO existing FROM ledger.events e WHERE e.idempotency_key = item->>'key';
            IF NOT FOUND THEN
                RETURN QUERY SELECT n, 'version_conflict'::text, NULL::bigint, NULL::uuid, v_version,
                                    NULL::timestamptz, NULL::bytea, NULL::bigint;
                CONTINUE;
            END IF;
        ELSE
            v_position := head_position + 1;
            v_id := gen_random_uuid();
            v_payload := item->'payload';
            v_raw := CASE WHEN item->>'raw' IS NULL THEN NULL ELSE decode(item->>'raw', 'hex') END;
            v_metadata := coalesce(item->'metadata', '{}'::jsonb);
            v_observed := 'epoch'::timestamptz + ((item->>'observedAtMicros') || ' microseconds')::interval;
            v_hash := ledger.event_hash(head_hash, v_position, v_id, item->>'stream', v_version + 1,
                                        item->>'type', item->>'source', v_payload, v_raw, v_metadata,
                                        item->>'key', now_recorded, v_observed);
            INSERT INTO ledger.events AS e (position, event_id, stream, stream_version, type, source, payload,
                                            raw, metadata, idempotency_key, recorded_at, observed_at, hash)
            VALUES (v_position, v_id, item->>'stream', v_version + 1, item->>'type', item->>'source', v_payload,
                    v_raw, v_metadata, item->>'key', now_recorded, v_observed, v_hash)
            ON CONFLICT ON CONSTRAINT events_idempotency_key_unique DO NOTHING;
            IF FOUND THEN
                head_position := v_position;
                head_hash := v_hash;
                RETURN QUERY SELECT n, 'appended'::text, v_position, v_id, v_version + 1,
                                    now_recorded, v_hash, 0::bigint;
                CONTINUE;
            END IF;
            SELECT e.position, e.event_id, e.stream_version, e.recorded_at, e.hash,
                   (e.stream = item->>'stream' AND e.type = item->>'type' AND e.payload = item->'payload') AS same
              INTO existing FROM ledger.events e WHERE e.idempotency_key = item->>'key';
        END IF;

        IF existing.same THEN
            INSERT INTO ledger.redeliveries AS r (position, count, last_seen_at)
            VALUES (existing.position, 1, now_recorded)
            ON CONFLICT ON CONSTRAINT redeliveries_pkey DO UPDATE SET count = r.count + 1, last_seen_at = excluded.last_seen_at;
            RETURN QUERY SELECT n, 'duplicate'::text, existing.position, existing.event_id, existing.stream_version,
                                existing.recorded_at, existing.hash,
                                (SELECT r.count FROM ledger.redeliveries r WHERE r.position = existing.position);
        ELSE
            RETURN QUERY SELECT n, 'key_conflict'::text, existing.position, existing.event_id, existing.stream_version,
                                existing.recorded_at, existing.hash, NULL::bigint;
        END IF;
    END LOOP;
END
$$;

-- Appends a batch of events in one call: the SQL path, and the reference the
-- writer's own path (ledger.append_prepare, then COPY) is tested against. The
-- whole batch is classified, numbered and inserted with set-based statements;
-- only the hash chain, sequential by nature, is a loop. Same contract as
-- ledger.append_events_stepwise, which takes any batch with an expectedVersion.
-- Duplicates are classified while the append lock is held, so no other append
-- can interleave; the unique constraint on idempotency_key remains the
-- guarantee: an insert that would duplicate a key fails the batch, it never
-- creates a second event.
CREATE OR REPLACE FUNCTION ledger.append_events(batch jsonb)
RETURNS TABLE (
    ordinal        integer,
    outcome        text,
    "position"     bigint,
    event_id       uuid,
    stream_version integer,
    recorded_at    timestamptz,
    hash           bytea,
    redeliveries   bigint
)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    head_position bigint;
    head_hash     bytea;
    now_recorded  timestamptz;
    n             integer;
    v_ordinals    integer[];
    v_positions   bigint[];
    v_ids         uuid[];
    v_streams     text[];
    v_versions    integer[];
    v_types       text[];
    v_sources     text[];
    v_payloads    jsonb[];
    v_raws        bytea[];
    v_metadata    jsonb[];
    v_keys        text[];
    v_observed    timestamptz[];
    v_contents    bytea[];
    v_hashes      bytea[];
    base_position bigint;
    v_keys_all    text[];
    v_existing    text[];
BEGIN
    IF jsonb_path_exists(batch, '$[*].expectedVersion') THEN
        RETURN QUERY SELECT * FROM ledger.append_events_stepwise(batch);
        RETURN;
    END IF;

    PERFORM pg_advisory_xact_lock(ledger.append_lock_key());
    now_recorded := clock_timestamp();
    SELECT e.position, e.hash INTO head_position, head_hash
      FROM ledger.events e ORDER BY e.position DESC LIMIT 1;
    head_position := coalesce(head_position, 0);
    head_hash := coalesce(head_hash, '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea);

    -- Which keys are stored already: one index probe per key. (Written as
    -- = ANY of an array so the planner cannot pick a scan of the whole log.)
    v_keys_all := ARRAY(SELECT r->>'key' FROM jsonb_array_elements(batch) AS r);
    v_existing := ARRAY(SELECT e.idempotency_key FROM ledger.events e WHERE e.idempotency_key = ANY(v_keys_all));

    -- New events: the first item of each key not already stored, numbered in batch order.
    WITH items AS (
        SELECT i.ord::integer AS ord, i.r->>'stream' AS stream, i.r->>'type' AS type, i.r->>'source' AS source,
               i.r->'payload' AS payload,
               CASE WHEN i.r->>'raw' IS NULL THEN NULL ELSE decode(i.r->>'raw', 'hex') END AS raw,
               coalesce(i.r->'metadata', '{}'::jsonb) AS metadata, i.r->>'key' AS key,
               'epoch'::timestamptz + ((i.r->>'observedAtMicros') || ' microseconds')::interval AS observed
          FROM jsonb_array_elements(batch) WITH ORDINALITY AS i(r, ord)
    ), fresh AS (
        SELECT DISTINCT ON (it.key) it.*
          FROM items it
         WHERE NOT (it.key = ANY(v_existing))
         ORDER BY it.key, it.ord
    ), numbered AS (
        SELECT f.*,
               head_position + row_number() OVER (ORDER BY f.ord) AS pos,
               (coalesce((SELECT max(e.stream_version) FROM ledger.events e WHERE e.stream = f.stream), 0)
                 + row_number() OVER (PARTITION BY f.stream ORDER BY f.ord))::integer AS version,
               gen_random_uuid() AS id
          FROM fresh f
    )
    SELECT array_agg(x.ord ORDER BY x.pos), array_agg(x.pos ORDER BY x.pos), array_agg(x.id ORDER BY x.pos),
           array_agg(x.stream ORDER BY x.pos), array_agg(x.version ORDER BY x.pos), array_agg(x.type ORDER BY x.pos),
           array_agg(x.source ORDER BY x.pos), array_agg(x.payload ORDER BY x.pos), array_agg(x.raw ORDER BY x.pos),
           array_agg(x.metadata ORDER BY x.pos), array_agg(x.key ORDER BY x.pos), array_agg(x.observed ORDER BY x.pos),
           array_agg(ledger.event_content(x.pos, x.id, x.stream, x.version, x.type, x.source, x.payload, x.raw,
                                          x.metadata, x.key, now_recorded, x.observed) ORDER BY x.pos)
      INTO v_ordinals, v_positions, v_ids, v_streams, v_versions, v_types, v_sources, v_payloads, v_raws,
           v_metadata, v_keys, v_observed, v_contents
      FROM numbered x;

    n := coalesce(array_length(v_positions, 1), 0);
    base_position := head_position;
    FOR i IN 1..n LOOP
        head_hash := sha256(head_hash || v_contents[i]);
        v_hashes[i] := head_hash;
    END LOOP;

    IF n > 0 THEN
        INSERT INTO ledger.events (position, event_id, stream, stream_version, type, source, payload, raw,
                                   metadata, idempotency_key, recorded_at, observed_at, hash)
        SELECT u.pos, u.id, u.stream, u.version, u.type, u.source, u.payload, u.raw, u.metadata, u.key,
               now_recorded, u.observed, u.hash
          FROM unnest(v_positions, v_ids, v_streams, v_versions, v_types, v_sources, v_payloads, v_raws,
                      v_metadata, v_keys, v_observed, v_hashes)
               AS u(pos, id, stream, version, type, source, payload, raw, metadata, key, observed, hash);
    END IF;

    -- The common case: every item was new. Answer from what was just inserted.
    IF n = jsonb_array_length(batch) THEN
        RETURN QUERY
        SELECT u.ord, 'appended'::text, u.pos, u.id, u.version, now_recorded, u.hash, 0::bigint
          FROM unnest(v_ordinals, v_positions, v_ids, v_versions, v_hashes) AS u(ord, pos, id, version, hash)
         ORDER BY u.ord;
        RETURN;
    END IF;

    -- Every other item is a redelivery of a stored event (or of one just
    -- appended in this batch) with the same content, or a key conflict.
    RETURN QUERY
    WITH items AS (
        SELECT i.ord::integer AS ord, i.r->>'stream' AS stream, i.r->>'type' AS type,
               i.r->'payload' AS payload, i.r->>'key' AS key
          FROM jsonb_array_elements(batch) WITH ORDINALITY AS i(r, ord)
    ), stored AS (
        SELECT e.* FROM ledger.events e WHERE e.idempotency_key = ANY(v_keys_all)
    ), classified AS (
        SELECT it.ord, e.position AS pos, e.event_id AS id, e.stream_version AS version,
               e.recorded_at AS recorded, e.hash AS h,
               CASE WHEN e.position > base_position AND v_ordinals[e.position - base_position] = it.ord THEN 'appended'
                    WHEN e.stream = it.stream AND e.type = it.type AND e.payload = it.payload THEN 'duplicate'
                    ELSE 'key_conflict' END AS outcome
          FROM items it JOIN stored e ON e.idempotency_key = it.key
    ), counted AS (
        INSERT INTO ledger.redeliveries AS r (position, count, last_seen_at)
        SELECT c.pos, count(*), now_recorded FROM classified c WHERE c.outcome = 'duplicate' GROUP BY c.pos
        ON CONFLICT ON CONSTRAINT redeliveries_pkey DO UPDATE SET count = r.count + excluded.count,
                                                               last_seen_at = excluded.last_seen_at
        RETURNING r.position AS pos, r.count AS total
    )
    SELECT c.ord, c.outcome, c.pos, c.id, c.version, c.recorded, c.h,
           CASE WHEN c.outcome = 'duplicate' THEN (SELECT k.total FROM counted k WHERE k.pos = c.pos)
                WHEN c.outcome = 'appended' THEN 0::bigint END
      FROM classified c
     ORDER BY c.ord;
END
$$;

-- The database side of the writer's own append path: the one round trip before
-- the writer numbers the new events, builds their hash chain (the encoding of
-- ledger.event_content) and sends them with COPY. It takes the append lock and
-- answers, as rows of one result:
--   'head'   the newest event's position and hash (NULL when the log is empty),
--            with the time to record the batch at (`recorded_us`);
--   'stored' each stored event whose idempotency key the batch carries, with
--            what a duplicate answer needs and its payload as jsonb prints it;
--   'stream' each stream in `p_streams` with its current version (0: new), and
--            each in `p_cached_streams` too unless the head is `p_cached_head`.
-- The writer remembers each stream's version as of its own last commit; that is
-- exact exactly when the head is still where that commit left it (and with the
-- lock held, nobody else can append), so then those streams need no probe.
CREATE OR REPLACE FUNCTION ledger.append_prepare(p_keys text[], p_streams text[], p_cached_streams text[], p_cached_head bigint)
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
-- Index probes only, whatever generic plan PL/pgSQL has cached: planned while the
-- log was small, a plan would scan the whole log for the batch's keys and streams
-- and keep doing so once it has grown. A plain index scan, not a bitmap scan, for
-- the keys: they are almost all new, and one descent per key is cheaper than
-- sorting them into a bitmap (0.13 ms against 0.22 ms for 120 keys).
SET enable_seqscan = off
SET enable_bitmapscan = off
AS $$
#variable_conflict use_column
DECLARE
    now_recorded  timestamptz;
    head_position bigint;
    head_hash     bytea;
BEGIN
    PERFORM pg_advisory_xact_lock(ledger.append_lock_key());
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

-- The same round trip for a caller that remembers no stream versions.
CREATE OR REPLACE FUNCTION ledger.append_prepare(p_keys text[], p_streams text[])
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
LANGUAGE sql AS $$
    SELECT * FROM ledger.append_prepare(p_keys, p_streams, '{}'::text[], NULL::bigint)
$$;

-- Dead SQL. ledger.field: ledger.event_hash encodes through ledger.event_content,
-- and nothing else calls it. ledger.checkpoints: no code reads or writes it.
DROP FUNCTION ledger.field(text);
DROP TABLE ledger.checkpoints;
