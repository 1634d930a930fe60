-- Purpose: append a batch of events in one call (group commit).
--
-- Appends are serialized by one transaction-scoped advisory lock, taken before
-- the head is read and held until commit. So positions are gapless, each hash
-- chains to the committed head, and a transaction commits only after every
-- lower position has committed: a reader following `position > checkpoint`
-- never skips an event that commits late.
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
CREATE FUNCTION ledger.append_events(batch jsonb)
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
    PERFORM pg_advisory_xact_lock(7413001);   -- the ledger's single append lock
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

GRANT EXECUTE ON FUNCTION ledger.append_events(jsonb) TO ledger_service;
