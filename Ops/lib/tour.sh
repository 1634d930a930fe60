# The newcomer's tour that Ops/run prints once the service answers, and that
# Ops/test pastes line by line into a shell (Ops/check-tour). Sourced, not executed.
#
# print_tour URL LEDGER_BINARY INGEST_TOKEN SUPPORT_TOKEN WEB3_KEY
print_tour() {
  local url=$1 ledger=$2 ingest=$3 support=$4 key=$5
  local body='{"merchantOrderNo":"TOUR-1","orderNo":"GW-TOUR-1","status":3,"statusText":"paid","amount":"40","txHash":"0xfeed"}'
  cat <<TOUR
# 1. The merchant backend registers an order:
curl -sS --fail-with-body $url/v1/orders -H 'Authorization: Bearer $ingest' -H 'Content-Type: application/json' -d '{"merchantOrderNo":"TOUR-1","provider":"web3","amount":"40","asset":"USDT"}'; echo
# 2. The gateway's signed webhook says it is paid (HMAC-SHA256 of the timestamp and the body, keyed with the API key):
TS=\$(date +%s); BODY='$body'; SIG=\$(printf '%s%s' "\$TS" "\$BODY" | openssl dgst -sha256 -hmac '$key' | sed 's/^.* //')
curl -sS --fail-with-body $url/v1/webhooks/web3 -H "X-Pay-Timestamp: \$TS" -H "X-Pay-Signature: \$SIG" -H 'Content-Type: application/json' -d "\$BODY"; echo
# 3. Support reads the order back, and its timeline:
curl -sS --fail-with-body $url/v1/orders/TOUR-1 -H 'Authorization: Bearer $support'; echo
curl -sS --fail-with-body $url/v1/orders/TOUR-1/events -H 'Authorization: Bearer $support'; echo
# 4. An auditor checks the whole ledger; an accountant exports today's events:
'$ledger' verify
'$ledger' export events --from \$(date -u +%F) --to \$(date -u -d tomorrow +%F) --out /tmp/ledger-events.csv && head -3 /tmp/ledger-events.csv
TOUR
}
