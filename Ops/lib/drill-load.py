#!/usr/bin/env python3
"""The load of Ops/drill: concurrent clients posting signed web3 webhooks.

Each client mixes webhooks for new orders with status changes for orders that
exist (its own, and any given with --existing), every body a new event (its own
txHash). It sends a body until it is answered 2xx, as a gateway retries a
callback: a connection error or a 5xx is tried again with the same body (a new
timestamp and signature), so a retry of a delivery whose first answer was lost
must come back as a duplicate, never as a second event. A 4xx is not retried
(the delivery is refused: counted, and the drill fails).

Each client appends one line to DIR/client-N.log per body answered 2xx, at
once (so a log is whole up to its last line whatever happens to the server):

    key \t wait_ms \t attempts \t duplicate \t txHash \t merchantOrderNo \t body

key is `web3:` + the body's SHA-256 in hex (the service's idempotency key);
wait_ms runs from the body's first send to its 2xx, retries included, in
milliseconds to two decimals.
With --rate, the clients send on a schedule (a steady load, its answers'
waits measured from each body's first send); without it, each as fast as it is
answered. SIGTERM or SIGINT stops the clients after their current attempt;
then one line `LOAD key=value ...` sums up on stdout. Standard library only.
"""

import argparse
import hashlib
import hmac
import http.client
import json
import os
import random
import signal
import sys
import threading
import time

STATUS_TEXT = {1: "awaiting", 2: "confirming", 3: "paid", 4: "completed", 5: "expired", 6: "failed"}


class Tally:
    """Counts shared by every client."""

    def __init__(self):
        self.lock = threading.Lock()
        self.statuses = {}      # HTTP status (or "error") -> answers
        self.acked = 0
        self.acked_duplicate = 0
        self.duplicate_first_try = 0   # a new body answered as a duplicate: should never happen
        self.refused = []       # (status, body of the answer), the first few
        self.refused_count = 0
        self.given_up = 0       # bodies still unanswered 2xx when the load stopped
        self.max_wait_ms = 0
        self.errors = {}        # kind of connection error -> how many (refused, reset, ...)

    def answer(self, status):
        with self.lock:
            self.statuses[status] = self.statuses.get(status, 0) + 1


class Client(threading.Thread):
    def __init__(self, index, args, tally, stop, existing):
        super().__init__(name=f"client-{index}", daemon=True)
        self.index = index
        self.args = args
        self.tally = tally
        self.stop = stop
        self.key = args.key.encode()
        self.random = random.Random(f"{args.prefix}-{index}")
        # Orders this client may update: the ones given, then its own once acknowledged.
        self.orders = list(existing)
        self.created = 0
        self.sequence = 0
        self.connection = None
        self.log = open(os.path.join(args.log, f"client-{index}.log"), "a", buffering=1, encoding="ascii")

    def body(self):
        """The next webhook: a new order, or a status change for one that exists."""
        self.sequence += 1
        tx = hashlib.sha256(f"{self.args.prefix}/{self.index}/{self.sequence}".encode()).hexdigest()
        if not self.orders or self.random.random() < self.args.new_share:
            order = f"{self.args.prefix}-{self.index}-{self.created}"
            self.created += 1
            status = self.random.choice((1, 2))
        else:
            order = self.random.choice(self.orders)
            status = self.random.choice((2, 3, 4, 5))
        provider_order = "P" + hashlib.sha256(order.encode()).hexdigest()[:24]
        body = (f'{{"merchantOrderNo":"{order}","orderNo":"{provider_order}","status":{status},'
                f'"statusText":"{STATUS_TEXT[status]}","txHash":"0x{tx}",'
                '"payAddress":"0x8f3a2b1c4d5e6f708192a3b4c5d6e7f809a1b2c3",'
                '"payAmountMinimal":"40000000","payAmountDisplay":"40.00","amount":"40.00",'
                '"tokenSymbol":"USDT","chainKey":"eth","chainId":1,"tokenId":1}')
        return order, "0x" + tx, body.encode()

    def post(self, body):
        """One attempt: the HTTP status and the answer's body; raises on a connection error."""
        if self.connection is None:
            self.connection = http.client.HTTPConnection(self.args.host, self.args.port, timeout=self.args.timeout)
        timestamp = str(int(time.time()))
        signature = hmac.new(self.key, timestamp.encode() + body, hashlib.sha256).hexdigest()
        try:
            self.connection.request("POST", "/v1/webhooks/web3", body=body, headers={
                "Content-Type": "application/json", "X-Pay-Timestamp": timestamp, "X-Pay-Signature": signature})
            response = self.connection.getresponse()
            answer = response.read()
        except Exception:
            self.connection.close()
            self.connection = None
            raise
        if response.getheader("Connection", "").lower() == "close" or response.will_close:
            self.connection.close()
            self.connection = None
        return response.status, answer

    def run(self):
        # With --rate, bodies go out on a schedule (this client's share of the rate): a
        # steady load whose answers' waits are measured, not one as fast as answers come.
        interval = self.args.clients / self.args.rate if self.args.rate else 0
        due = time.monotonic()
        while not self.stop.is_set():
            if interval:
                due += interval
                pause = due - time.monotonic()
                if pause > 0 and self.stop.wait(pause):
                    break
            order, tx, body = self.body()
            key = "web3:" + hashlib.sha256(body).hexdigest()
            first = time.monotonic()
            attempts = 0
            while True:
                if self.stop.is_set():
                    with self.tally.lock:
                        self.tally.given_up += 1
                    break
                attempts += 1
                try:
                    status, answer = self.post(body)
                except Exception as error:   # refused, reset, timed out: the server is down or restarting
                    self.tally.answer("error")
                    with self.tally.lock:
                        kind = type(error).__name__
                        self.tally.errors[kind] = self.tally.errors.get(kind, 0) + 1
                    time.sleep(self.args.backoff)
                    continue
                self.tally.answer(status)
                if 200 <= status < 300:
                    wait_ms = round((time.monotonic() - first) * 1000, 2)
                    try:
                        duplicate = bool(json.loads(answer).get("duplicate"))
                    except ValueError:
                        duplicate = False
                    self.log.write(f"{key}\t{wait_ms:.2f}\t{attempts}\t{int(duplicate)}\t{tx}\t{order}\t{body.decode()}\n")
                    with self.tally.lock:
                        self.tally.acked += 1
                        self.tally.acked_duplicate += duplicate
                        self.tally.duplicate_first_try += duplicate and attempts == 1
                        self.tally.max_wait_ms = max(self.tally.max_wait_ms, wait_ms)
                    if order not in self.orders:
                        self.orders.append(order)
                    break
                if 400 <= status < 500:
                    with self.tally.lock:
                        self.tally.refused_count += 1
                        if len(self.tally.refused) < 5:
                            self.tally.refused.append((status, answer[:200].decode(errors="replace")))
                    break
                time.sleep(self.args.backoff)   # 503 (or another 5xx): try the same body again
        self.log.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", required=True, help="http://127.0.0.1:PORT")
    parser.add_argument("--key", required=True, help="a key of LEDGER_WEB3_API_KEYS")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--log", required=True, help="folder for the clients' logs")
    parser.add_argument("--prefix", required=True, help="order numbers start with it (unique a run)")
    parser.add_argument("--existing", help="a file of order numbers that exist, one a line, to update too")
    parser.add_argument("--new-share", type=float, default=0.4, help="share of webhooks that create an order")
    parser.add_argument("--timeout", type=float, default=30, help="seconds an attempt may wait for its answer")
    parser.add_argument("--backoff", type=float, default=0.1, help="seconds between a failed attempt and the next")
    parser.add_argument("--rate", type=float, default=0,
                        help="webhooks a second, all clients together, sent on a schedule (0: each client as fast as it is answered)")
    args = parser.parse_args()
    if not args.url.startswith("http://"):
        parser.error("--url must be http://HOST:PORT")
    host, _, port = args.url[len("http://"):].rstrip("/").partition(":")
    args.host, args.port = host, int(port or 80)
    os.makedirs(args.log, exist_ok=True)

    existing = []
    if args.existing:
        with open(args.existing, encoding="ascii") as f:
            existing = [line.strip() for line in f if line.strip()]
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    tally = Tally()
    clients = [Client(i, args, tally, stop, existing[i::args.clients]) for i in range(args.clients)]
    for client in clients:
        client.start()
    while any(client.is_alive() for client in clients):
        for client in clients:
            client.join(timeout=0.2)
    statuses = ",".join(f"{k}:{v}" for k, v in sorted(tally.statuses.items(), key=lambda kv: str(kv[0])))
    print(f"LOAD clients={args.clients} acked={tally.acked} acked_duplicate={tally.acked_duplicate} "
          f"duplicate_first_try={tally.duplicate_first_try} refused={tally.refused_count} given_up={tally.given_up} max_wait_ms={tally.max_wait_ms:.2f} "
          f"statuses={statuses or '-'} errors={','.join(f'{k}:{v}' for k, v in sorted(tally.errors.items())) or '-'}")
    for status, answer in tally.refused:
        print(f"REFUSED {status} {answer}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
