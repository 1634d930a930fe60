-- Purpose: a revoked token stops working at once in every running `ledger serve`,
-- not only when its cached lookup expires. Any change to ledger.tokens (a revocation
-- by the CLI, or an operator's own UPDATE, DELETE or TRUNCATE) notifies the channel
-- `ledger_token_changes` when its transaction commits; each service listens on it and
-- forgets the token lookups it cached. (A new token needs nothing: a failed lookup
-- is not cached.) The notification carries no payload: which token changed is
-- nobody's business but the table's.
CREATE FUNCTION ledger.notify_token_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('ledger_token_changes', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER tokens_changed
    AFTER UPDATE OR DELETE OR TRUNCATE ON ledger.tokens
    FOR EACH STATEMENT EXECUTE FUNCTION ledger.notify_token_change();
