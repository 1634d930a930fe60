-- Purpose: the signed checkpoint notes of shared/spec/audit.md. Each note says
-- "at this position the chain's head hash is this", signed with the ledger's
-- Ed25519 key; once a copy has left the database, a rewrite that recomputes the
-- chain can no longer match it. Append-only like ledger.events: UPDATE, DELETE
-- and TRUNCATE fail for every role, the owner included.
CREATE TABLE ledger.signed_checkpoints (
    position  bigint      PRIMARY KEY CHECK (position > 0),
    hash      bytea       NOT NULL CHECK (length(hash) = 32),
    signed_at timestamptz NOT NULL,
    note      text        NOT NULL
);

CREATE FUNCTION ledger.refuse_signed_checkpoint_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger.signed_checkpoints is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER signed_checkpoints_no_update BEFORE UPDATE ON ledger.signed_checkpoints
    FOR EACH ROW EXECUTE FUNCTION ledger.refuse_signed_checkpoint_change();
CREATE TRIGGER signed_checkpoints_no_delete BEFORE DELETE ON ledger.signed_checkpoints
    FOR EACH ROW EXECUTE FUNCTION ledger.refuse_signed_checkpoint_change();
CREATE TRIGGER signed_checkpoints_no_truncate BEFORE TRUNCATE ON ledger.signed_checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION ledger.refuse_signed_checkpoint_change();

-- ledger serve signs its periodic and final notes; it may add notes, never change them.
GRANT SELECT, INSERT ON ledger.signed_checkpoints TO ledger_service;
