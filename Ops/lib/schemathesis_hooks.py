"""Schemathesis hooks for Ops/check-api: each operation is called with a token of a
role it admits, read from the operation's own `x-roles` in API/openapi.json, so the
role-gated operations are exercised past authorization, not only answered 401;
the webhooks' positive cases are signed."""
import hashlib
import hmac
import json
import os
import time

import schemathesis

# LEDGER_API_TOKENS: "role=token,role=token", made by Ops/check-api.
TOKENS = dict(pair.split("=", 1) for pair in os.environ.get("LEDGER_API_TOKENS", "").split(",") if pair)


@schemathesis.auth(refresh_interval=None, retry_on=[])
class RoleTokens:
    def get(self, case, context):
        return TOKENS

    def set(self, case, data, context):
        roles = case.operation.definition.raw.get("x-roles") or []
        role = next((r for r in roles if r in data), None)
        if role is None:
            return   # a webhook or an operations endpoint: no bearer token
        case.headers = case.headers or {}
        case.headers["Authorization"] = "Bearer " + data[role]


# The webhooks authenticate by the provider's signature over the raw body: the positive
# cases are signed with the keys Ops/check-api gives `ledger serve`, so that they reach
# the parsing and the ledger rather than stopping at 401 (unsigned and negative cases still
# test the refusals).
WEB3_KEY = os.environ.get("LEDGER_API_WEB3_KEY", "")
BANXA_KEY = os.environ.get("LEDGER_API_BANXA_KEY", "")
BANXA_SECRET = os.environ.get("LEDGER_API_BANXA_SECRET", "")


def _positive(case):
    meta = getattr(case, "_meta", None)
    mode = getattr(getattr(meta, "generation", None), "mode", None)
    return str(getattr(mode, "value", mode)) == "positive"


def _raw_body(case):
    if isinstance(case.body, bytes):
        return case.body
    return json.dumps(case.body, ensure_ascii=False).encode("utf-8")


@schemathesis.hook
def before_call(context, case, kwargs):
    path = case.operation.path
    if path not in ("/v1/webhooks/web3", "/v1/webhooks/banxa") or not _positive(case):
        return
    raw = _raw_body(case)
    case.body = raw   # sent as these bytes, which the signature covers
    case.headers = case.headers or {}
    if path == "/v1/webhooks/web3" and WEB3_KEY:
        stamp = str(int(time.time()))
        case.headers["X-Pay-Timestamp"] = stamp
        case.headers["X-Pay-Signature"] = hmac.new(WEB3_KEY.encode(), stamp.encode() + raw, hashlib.sha256).hexdigest()
    elif path == "/v1/webhooks/banxa" and BANXA_KEY and BANXA_SECRET:
        nonce = str(int(time.time() * 1000))
        message = b"POST\n/v1/webhooks/banxa\n" + nonce.encode() + b"\n" + raw
        signature = hmac.new(BANXA_SECRET.encode(), message, hashlib.sha256).hexdigest()
        case.headers["Authorization"] = f"Bearer {BANXA_KEY}:{signature}:{nonce}"
