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
    previous bytea, position bigint, event_id uuid, stream text, stream_version integer,
    type text, source text, payload jsonb, raw bytea, metadata jsonb,
    idempotency_key text, recorded_at timestamptz, observed_at timestamptz
) RETURNS bytea
LANGUAGE sql IMMUTABLE AS $$
    SELECT sha256(
        previous
        || int8send(position)
        || ledger.field(event_id::text)
        || ledger.field(stream)
        || int4send(stream_version)
        || ledger.field(type)
        || ledger.field(source)
        || ledger.field(payload::text)
        || CASE WHEN raw IS NULL THEN int4send(-1) ELSE int4send(octet_length(raw)) || raw END
        || ledger.field(metadata::text)
        || ledger.field(idempotency_key)
        || int8send(ledger.micros(recorded_at))
        || int8send(ledger.micros(observed_at))
    )
$$;
