-- Purpose: the hash chain. hash = sha256(previous hash || content), where the
-- content is every column but the hash, each length-prefixed so no two
-- different events share an encoding. The genesis "previous hash" is 32 zero
-- bytes. `ledger verify` recomputes this independently, in Swift.
CREATE FUNCTION ledger.field(value text) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT int4send(octet_length(convert_to(value, 'UTF8'))) || convert_to(value, 'UTF8')
$$;

CREATE FUNCTION ledger.micros(t timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT (extract(epoch FROM t) * 1000000)::bigint
$$;

CREATE FUNCTION ledger.event_hash(
    p_previous bytea, p_position bigint, p_event_id uuid, p_stream text, p_stream_version integer,
    p_type text, p_source text, p_payload jsonb, p_raw bytea, p_metadata jsonb,
    p_idempotency_key text, p_recorded_at timestamptz, p_observed_at timestamptz
) RETURNS bytea
LANGUAGE sql IMMUTABLE AS $$
    SELECT sha256(
        p_previous
        || int8send(p_position)
        || ledger.field(p_event_id::text)
        || ledger.field(p_stream)
        || int4send(p_stream_version)
        || ledger.field(p_type)
        || ledger.field(p_source)
        || ledger.field(p_payload::text)
        || CASE WHEN p_raw IS NULL THEN int4send(-1) ELSE int4send(octet_length(p_raw)) || p_raw END
        || ledger.field(p_metadata::text)
        || ledger.field(p_idempotency_key)
        || int8send(ledger.micros(p_recorded_at))
        || int8send(ledger.micros(p_observed_at))
    )
$$;
