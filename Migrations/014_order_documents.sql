-- Purpose: precomputed response documents for GET /v1/orders/{no}, so a read
-- is one indexed select whose text is the response body as it is.
-- `document` is the read model's JSON (what an auditor sees); `document_masked`
-- is the same with e-mail addresses masked (support and ingest), or NULL when
-- masking changes nothing. `document_version` is the service's rendering
-- version: a document of another version is ignored and derived from `state`.
-- The service writes all three with `state` (same statement, same transaction).
-- Rows written before this migration stay NULL here, and are derived from
-- `state` when read, until the order's next event or `ledger rebuild`.
ALTER TABLE ledger.orders
    ADD COLUMN document         text,
    ADD COLUMN document_masked  text,
    ADD COLUMN document_version smallint;

COMMENT ON COLUMN ledger.orders.document IS 'The order read model as JSON text, exactly as GET /v1/orders/{no} answers an auditor; derived from state.';
COMMENT ON COLUMN ledger.orders.document_masked IS 'document with e-mail addresses masked (support, ingest); NULL when it would equal document.';
