-- Purpose: make ledger.events immutable for every role, the owner included.
-- Triggers refuse UPDATE, DELETE and TRUNCATE; only a superuser who disables
-- them can rewrite history, and the hash chain then shows where.
CREATE FUNCTION ledger.refuse_event_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger.events is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER events_no_update BEFORE UPDATE ON ledger.events
    FOR EACH ROW EXECUTE FUNCTION ledger.refuse_event_change();
CREATE TRIGGER events_no_delete BEFORE DELETE ON ledger.events
    FOR EACH ROW EXECUTE FUNCTION ledger.refuse_event_change();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON ledger.events
    FOR EACH STATEMENT EXECUTE FUNCTION ledger.refuse_event_change();
