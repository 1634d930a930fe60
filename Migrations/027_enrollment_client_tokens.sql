-- Purpose: client tokens for one BankPay enrollment. An app that enrols a bank
-- account before it has an order needs a token for that enrollment alone; an
-- order's client token no longer reaches the enrollment of the same name.
-- A client token is scoped to exactly one order or one enrollment.
ALTER TABLE ledger.tokens ADD COLUMN enrollment_ref text;

ALTER TABLE ledger.tokens DROP CONSTRAINT tokens_check;
ALTER TABLE ledger.tokens ADD CONSTRAINT tokens_client_scope
    CHECK ((role = 'client') = (num_nonnulls(order_no, enrollment_ref) = 1)
           AND (role = 'client' OR num_nonnulls(order_no, enrollment_ref) = 0));
