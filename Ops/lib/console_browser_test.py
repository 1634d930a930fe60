#!/usr/bin/env python3
"""The console's browser tests (console.md, *Testing in a real browser*).

Run by Ops/check-console against a served ledger on a fresh database: it seeds
orders through the real HTTP API (signed web3 webhooks, the merchant routes),
then drives Debian's headless Chromium with Playwright through the console and
checks what a support agent and an auditor see. A missing browser fails the run;
nothing is skipped. Each check prints one line; any failure makes the exit 1.

Environment: LEDGER_URL, LEDGER_TOKENS (role=token,...), LEDGER_WEB3_KEY,
LEDGER_CLI (the ledger binary, for tokens made during the run), DATABASE_URL,
CONSOLE_SCREENSHOT (where to write the order page's screenshot),
CHROMIUM (default /usr/bin/chromium).
"""

import hashlib
import hmac
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime, timedelta, timezone

from playwright.sync_api import sync_playwright, expect

BASE = os.environ["LEDGER_URL"]
TOKENS = dict(item.split("=", 1) for item in os.environ["LEDGER_TOKENS"].split(","))
WEB3_KEY = os.environ["LEDGER_WEB3_KEY"]
CLI = os.environ["LEDGER_CLI"]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
SCREENSHOT = os.environ.get("CONSOLE_SCREENSHOT")
RENDER_BUDGET_MS = 300
# A loaded 2-core machine (Ops/test runs this after the whole suite) can be slow to answer:
# waits for what the page shows get 15 s, not Playwright's 5.
expect.set_options(timeout=15_000)
XSS_IMG = '<img src=x onerror="window.__pwned=1;alert(1)">'
XSS_SCRIPT = '<script>window.__pwned=2;alert(2)</script>'


# ---- seeding through the HTTP API ----

def call(method, path, body=None, token=None, headers=None):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    request = urllib.request.Request(BASE + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


def must(answer, *statuses):
    status, body = answer
    if status not in statuses:
        raise AssertionError(f"seeding got HTTP {status}: {body}")
    return body


def web3(body, ts, key=WEB3_KEY):
    raw = json.dumps(body, separators=(",", ":")).encode()
    signature = hmac.new(key.encode(), str(ts).encode() + raw, hashlib.sha256).hexdigest()
    return call("POST", "/v1/webhooks/web3", raw, headers={"X-Pay-Timestamp": str(ts), "X-Pay-Signature": signature})


def register(no, **extra):
    must(call("POST", "/v1/orders", {"merchantOrderNo": no, "provider": extra.pop("provider", "web3"), "amount": "40",
                                     "asset": "USDT", **extra}, TOKENS["ingest"]), 200, 201)


def rfc3339(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def seed():
    now = int(time.time())
    # OOO-1: its events arrive out of order. The paid webhook (signed a minute ago) comes
    # before the confirming one (signed over three minutes ago), is redelivered, and an
    # expired one signed now conflicts with it. The customer's app reports, with an e-mail
    # address and markup in its payload.
    register("OOO-1", externalCustomerId="CUST-77", providerOrderId="GW-OOO-1")
    must(call("POST", "/v1/orders/OOO-1/observations",
              {"provider": "web3", "response": {"code": 0, "data": {"merchantOrderNo": "OOO-1", "orderNo": "GW-OOO-1", "status": 1, "amount": "40"}},
               "observedAt": rfc3339(datetime.now(timezone.utc) - timedelta(seconds=280))}, TOKENS["ingest"]), 201)
    paid = {"merchantOrderNo": "OOO-1", "orderNo": "GW-OOO-1", "status": 3, "statusText": "paid", "amount": "40",
            "txHash": "0xfeed000000000000000000000000000000000000000000000000000000000001", "note": XSS_IMG}
    must(web3(paid, now - 60), 200)
    must(web3({"merchantOrderNo": "OOO-1", "orderNo": "GW-OOO-1", "status": 2, "statusText": "confirming", "amount": "40",
               "memo": XSS_SCRIPT}, now - 200), 200)
    redelivery = must(web3(paid, now - 30), 200)
    assert redelivery["duplicate"] is True, redelivery
    must(call("POST", "/v1/orders/OOO-1/client-events",
              {"provider": "banxa", "callback": "banxaDidCompleteCheckout", "clientEventId": "0b7e9a52-6c1f-4b0e-9f3c-2d1a5e8c7f10",
               "payload": {"email": "jane.doe@example.com", "screen": XSS_IMG, "comment": XSS_SCRIPT}}, TOKENS["ingest"]), 201)
    must(web3({"merchantOrderNo": "OOO-1", "orderNo": "GW-OOO-1", "status": 5, "statusText": "expired", "amount": "40"}, now), 200)

    # ETH-1: registered in USDT, paid in ETH according to the gateway: no rate is applied.
    register("ETH-1")
    must(web3({"merchantOrderNo": "ETH-1", "orderNo": "GW-ETH-1", "status": 3, "amount": "0.01", "tokenSymbol": "ETH"}, now - 10), 200)

    # GRP-1: a week between its first observation and two webhooks a second apart, so the
    # two share one mark; the paid one is redelivered.
    register("GRP-1")
    must(call("POST", "/v1/orders/GRP-1/observations",
              {"provider": "web3", "response": {"code": 0, "data": {"merchantOrderNo": "GRP-1", "status": 1}},
               "observedAt": rfc3339(datetime.now(timezone.utc) - timedelta(days=7))}, TOKENS["ingest"]), 201)
    must(web3({"merchantOrderNo": "GRP-1", "orderNo": "GW-GRP-1", "status": 2, "amount": "40"}, now - 21), 200)
    grouped_paid = {"merchantOrderNo": "GRP-1", "orderNo": "GW-GRP-1", "status": 3, "amount": "40"}
    must(web3(grouped_paid, now - 20), 200)
    assert must(web3(grouped_paid, now - 5), 200)["duplicate"] is True

    # COR-1: awaiting payment, for the auditor's correction.
    register("COR-1")

    # NUM-1: a client signal whose payload holds numbers JavaScript would print otherwise.
    register("NUM-1")
    must(call("POST", "/v1/orders/NUM-1/client-events",
              b'{"provider":"banxa","callback":"banxaDidCompleteCheckout","clientEventId":"2c7e9a52-6c1f-4b0e-9f3c-2d1a5e8c7f11",'
              b'"payload":{"fiat_amount":100.10,"rate":0.0000001,"reference":12345678901234567890}}', TOKENS["ingest"]), 201)

    # Twelve signed checkpoints low in the log, each over an order registered before it;
    # the log then grows past them by more than the ledger page's first window (1,024
    # positions), so the page must widen its window to find the newest ten.
    for n in range(12):
        register(f"CKP-{n:02d}")
        sign_checkpoint()
    register("BULK-700", provider="acmepay")
    for i in range(700):
        must(call("POST", "/v1/orders/BULK-700/observations",
                  {"provider": "acmepay", "response": {"status": 1, "poll": i}}, TOKENS["ingest"]), 201)

    # PAGE-00..29: more orders than one page of search results holds.
    for n in range(30):
        register(f"PAGE-{n:02d}", provider="pagepay")

    # BIG-400: a week of polling, 400 events in all.
    register("BIG-400", provider="acmepay")
    start = datetime.now(timezone.utc) - timedelta(days=7)
    for i in range(399):
        status = 1 if i < 300 else 2 if i < 398 else 3
        must(call("POST", "/v1/orders/BIG-400/observations",
                  {"provider": "acmepay", "response": {"status": status, "poll": i},
                   "observedAt": rfc3339(start + timedelta(minutes=25 * i))}, TOKENS["ingest"]), 201)

    # The quarantine: a forged webhook whose body holds markup.
    status, _ = web3({"merchantOrderNo": "Q-1", "status": 3, "note": XSS_SCRIPT}, now, key="not-the-key")
    assert status == 401, status


KEYS = tempfile.mkdtemp(prefix="console-check-keys-")


def sign_checkpoint():
    """`ledger checkpoint` with a key made for this run: a note over the head as it is."""
    key = os.path.join(KEYS, "checkpoint.key")
    if not os.path.exists(key):
        subprocess.run([CLI, "keys", "generate", "--out", KEYS], check=True, capture_output=True)
    subprocess.run([CLI, "checkpoint"], check=True, capture_output=True, env={**os.environ, "LEDGER_CHECKPOINT_KEY": key})


def new_token(role, name, ttl=None):
    args = [CLI, "token", "create", "--role", role, "--name", name] + (["--ttl", ttl] if ttl else [])
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]


# ---- the browser ----

class Console:
    def __init__(self, browser):
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.dialogs = []
        self.console_errors = []
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("pageerror", lambda e: self.console_errors.append(str(e)))

    def sign_in(self, token):
        self.page.goto(BASE + "/console/")
        self.page.fill("#token", token)
        self.page.click("#signin-form button[type=submit]")
        expect(self.page.locator("#search-page")).to_be_visible()

    def open_order(self, no, query=""):
        self.page.goto(f"{BASE}/console/orders/{no}{query}")
        expect(self.page.locator("#order-page[data-render-ms]")).to_be_attached()

    def pwned(self):
        return self.page.evaluate("window.__pwned")

    def close(self):
        self.context.close()


def open_mark(mark):
    """Clicks a timeline mark on its dot (the mark's box may reach past it, to its recorded-time tick)."""
    mark.locator("circle.dot").click()


CHECKS = []


def check(name):
    def register_check(fn):
        CHECKS.append((name, fn))
        return fn
    return register_check


@check("sign-in keeps the token in sessionStorage only, and shows the role")
def sign_in(browser):
    c = Console(browser)
    # A token pasted with a zero-width space in it is named as such, not as an unreachable ledger.
    c.page.goto(BASE + "/console/")
    c.page.fill("#token", TOKENS["support"][:6] + "\u200b" + TOKENS["support"][6:])
    c.page.click("#signin-form button[type=submit]")
    expect(c.page.locator("#signin-form .form-status.error")).to_contain_text("paste it again as one line")
    c.sign_in(TOKENS["support"])
    assert c.page.evaluate("sessionStorage.getItem('ledger.token')") == TOKENS["support"]
    assert TOKENS["support"] not in c.page.url
    assert c.context.cookies() == [], c.context.cookies()
    expect(c.page.locator("#role")).to_contain_text("support")
    c.close()


@check("search by txHash and by customer id finds the order")
def search(browser):
    c = Console(browser)
    c.sign_in(TOKENS["support"])
    for q in ["0xfeed000000000000000000000000000000000000000000000000000000000001", "CUST-77"]:
        c.page.fill("#f-q", q)
        c.page.click("#search-form button[type=submit]")
        rows = c.page.locator("#orders-table tbody tr")
        expect(rows).to_have_count(1)
        expect(rows.first).to_have_attribute("data-order", "OOO-1")
        expect(rows.first).to_contain_text("paid (3)")
    c.page.fill("#f-q", "NOTHING-LIKE-THIS")
    c.page.click("#search-form button[type=submit]")
    expect(c.page.locator("#no-results")).to_be_visible()
    c.page.fill("#f-q", "")
    c.page.select_option("#f-status", "3")
    c.page.click("#search-form button[type=submit]")
    expect(c.page.locator("#orders-table tbody tr[data-order='OOO-1']")).to_have_count(1)
    expect(c.page.locator("#orders-table tbody tr[data-order='COR-1']")).to_have_count(0)
    c.page.select_option("#f-status", "")
    c.page.select_option("#f-attention", "true")
    c.page.click("#search-form button[type=submit]")
    # OOO-1 (a status conflict) and ETH-1 (paid in another asset), each marked.
    rows = c.page.locator("#orders-table tbody tr")
    expect(rows).to_have_count(2)
    expect(c.page.locator("#orders-table tbody tr[data-order='OOO-1']")).to_contain_text("attention")
    expect(c.page.locator("#orders-table tbody tr[data-order='ETH-1']")).to_contain_text("attention")
    c.close()


@check("search pages through results with the keyset cursor, newest update first")
def search_pages(browser):
    c = Console(browser)
    c.sign_in(TOKENS["support"])
    c.page.fill("#f-provider", "pagepay")
    c.page.click("#search-form button[type=submit]")
    rows = c.page.locator("#orders-table tbody tr")
    expect(rows).to_have_count(25)
    first = rows.evaluate_all("rs => rs.map(r => r.dataset.order)")
    c.page.click("#next-page")
    expect(rows).to_have_count(5)
    second = rows.evaluate_all("rs => rs.map(r => r.dataset.order)")
    assert not set(first) & set(second) and len(set(first) | set(second)) == 30, (first, second)
    assert first[0] == "PAGE-29" and second[-1] == "PAGE-00", (first[0], second[-1])
    expect(c.page.locator("#next-page")).to_have_count(0)
    c.close()


@check("a slow answer to an earlier search never replaces the answer to a later one")
def search_race(browser):
    c = Console(browser)
    c.sign_in(TOKENS["support"])
    release = []

    def hold_first(route):
        # The first search (CUST-77) is answered only after the second has been shown.
        if "CUST-77" in route.request.url and not release:
            release.append(route)
        else:
            route.continue_()
    c.page.route("**/v1/orders?*", hold_first)
    c.page.fill("#f-q", "CUST-77")
    c.page.click("#search-form button[type=submit]")
    deadline = time.time() + 15
    while not release and time.time() < deadline:
        c.page.wait_for_timeout(50)
    assert release, "the first search never reached the network"
    c.page.fill("#f-q", "")
    c.page.fill("#f-provider", "pagepay")
    c.page.click("#search-form button[type=submit]")
    rows = c.page.locator("#orders-table tbody tr")
    expect(rows).to_have_count(25)
    with c.page.expect_response(lambda r: "CUST-77" in r.url):
        release[0].continue_()
    c.page.wait_for_timeout(500)   # time for the late answer to be handled
    assert rows.count() == 25, f"the earlier search's answer replaced the later one: {rows.count()} rows"
    expect(c.page.locator("#orders-table tbody tr[data-order='OOO-1']")).to_have_count(0)
    c.close()


@check("errors are named in words: 503 with its Retry-After, and an unreachable ledger")
def errors_in_words(browser):
    c = Console(browser)
    c.sign_in(TOKENS["support"])
    problem = json.dumps({"type": "about:blank", "title": "Service unavailable", "status": 503, "detail": "the database cannot be reached"})
    c.page.route("**/v1/orders/OOO-1", lambda route: route.fulfill(
        status=503, headers={"Retry-After": "7", "Content-Type": "application/problem+json"}, body=problem))
    c.page.goto(BASE + "/console/orders/OOO-1")
    alert = c.page.locator("[role=alert]")
    expect(alert).to_contain_text("unavailable")
    expect(alert).to_contain_text("Try again in 7 s")
    expect(alert.locator("a[href='/console/']")).to_be_visible()
    c.page.unroute("**/v1/orders/OOO-1")
    c.page.route("**/v1/orders?*", lambda route: route.abort())
    c.page.goto(BASE + "/console/")
    expect(c.page.locator("#results")).to_contain_text("cannot be reached")
    c.close()


@check("an order whose events arrived out of order shows the converged status and every event")
def out_of_order(browser):
    c = Console(browser)
    c.sign_in(TOKENS["support"])
    c.open_order("OOO-1")
    expect(c.page.locator("#order-status")).to_contain_text("paid (3)")
    expect(c.page.locator("#field-attention")).to_contain_text("attention")
    expect(c.page.locator("#conflicts")).to_contain_text("expired")
    expect(c.page.locator("#client-signal")).to_contain_text("Customer reports checkout completed")
    events = call("GET", "/v1/orders/OOO-1/events", token=TOKENS["support"])[1]["events"]
    counts = c.page.eval_on_selector_all("#timeline .mark", "ms => ms.reduce((n, m) => n + Number(m.dataset.count), 0)")
    assert counts == len(events) == 6, (counts, len(events))
    for e in events:
        expect(c.page.locator(f"#timeline .mark[data-position='{e['position']}']")).to_have_count(1)
    assert c.page.locator("#timeline .mark.conflict").count() == 1
    assert c.page.locator("#timeline .mark.redelivered").count() == 1
    for lane in ["webhook", "query", "client"]:
        assert c.page.locator(f"#timeline .mark.source-{lane}").count() >= 1, lane
    # Keyboard: Tab reaches a mark, Enter opens its detail.
    mark = c.page.locator("#timeline .mark.conflict")
    mark.focus()
    c.page.keyboard.press("Enter")
    expect(c.page.locator("#event-detail")).to_be_visible()
    expect(c.page.locator("#event-fields")).to_contain_text("StatusObserved")
    expect(c.page.locator("#event-fields")).to_contain_text("signature")
    assert mark.get_attribute("aria-label")
    c.close()


@check("a redelivery inside a grouped mark is marked on the group (dashed ring, deliveries counted) and in its list")
def grouped_redelivery(browser):
    c = Console(browser)
    c.sign_in(TOKENS["support"])
    c.open_order("GRP-1")
    group = c.page.locator("#timeline .mark.group.redelivered")
    expect(group).to_have_count(1)
    assert group.get_attribute("data-count") == "2", group.get_attribute("data-count")
    expect(group.locator(".redelivery-ring")).to_have_count(1)
    expect(group.locator(".redelivery-count")).to_have_text("×3")
    assert "redelivered 1 times in all" in group.get_attribute("aria-label")
    open_mark(group)
    expect(c.page.locator("#event-detail .group-list")).to_contain_text("delivered ×2")
    c.close()


@check("support sees masked e-mails, marked; auditors see them unmasked")
def masking(browser):
    c = Console(browser)
    c.sign_in(TOKENS["support"])
    c.open_order("OOO-1")
    signal = c.page.locator("#client-signal-payload")
    expect(signal).to_contain_text("j***@example.com")
    expect(signal.locator("mark.masked")).to_have_count(1)
    assert "jane.doe@example.com" not in c.page.content()
    c.close()
    a = Console(browser)
    a.sign_in(TOKENS["auditor"])
    a.open_order("OOO-1")
    expect(a.page.locator("#client-signal-payload")).to_contain_text("jane.doe@example.com")
    expect(a.page.locator("#client-signal-payload mark.masked")).to_have_count(0)
    expect(a.page.locator("#role")).to_contain_text("unmasked")
    a.close()


@check("a payload's numbers are shown as the provider wrote them, not as JavaScript prints them")
def exact_numbers(browser):
    c = Console(browser)
    c.sign_in(TOKENS["support"])
    c.open_order("NUM-1")
    payload = c.page.locator("#client-signal-payload")
    expect(payload).to_contain_text('"fiat_amount": 100.10')
    expect(payload).to_contain_text('"rate": 0.0000001')
    expect(payload).to_contain_text('"reference": 12345678901234567890')
    c.close()


@check("payloads holding <img onerror> and <script> run nothing, for support and auditors")
def markup_runs_nothing(browser):
    for role in ["support", "auditor"]:
        c = Console(browser)
        c.sign_in(TOKENS[role])
        c.open_order("OOO-1")
        expect(c.page.locator("#client-signal-payload")).to_contain_text("onerror")
        for mark in c.page.locator("#timeline .mark").all():
            open_mark(mark)
            expect(c.page.locator("#event-payload")).to_be_visible()
        if role == "auditor":
            expect(c.page.locator("#event-raw-body")).to_be_attached()
            c.page.click("#raw-events")
            expect(c.page.locator("#raw-events-json")).to_be_visible()
            c.page.goto(BASE + "/console/quarantine")
            c.page.locator("#quarantine-table button[data-id]").first.click()
            expect(c.page.locator("pre.body").first).to_contain_text("<script>")
        c.page.wait_for_timeout(300)
        assert c.pwned() is None, f"{role}: a payload ran: window.__pwned = {c.pwned()}"
        assert c.dialogs == [], f"{role}: dialogs opened: {c.dialogs}"
        assert c.page.locator("#order-page img, #quarantine-page img, main script").count() == 0
        assert c.console_errors == [], c.console_errors
        c.close()


@check("as of an earlier time, the page shows the earlier state")
def as_of(browser):
    c = Console(browser)
    c.sign_in(TOKENS["support"])
    c.open_order("OOO-1")
    events = call("GET", "/v1/orders/OOO-1/events", token=TOKENS["support"])[1]["events"]
    first = events[0]
    open_mark(c.page.locator(f"#timeline .mark[data-position='{first['position']}']"))
    c.page.click("#as-of-event")
    expect(c.page.locator("#as-of-note")).to_be_visible()
    expect(c.page.locator("#order-status")).to_contain_text("awaiting payment (1)")
    expect(c.page.locator("#field-paid")).to_contain_text("not paid")
    assert c.page.eval_on_selector_all("#timeline .mark", "ms => ms.reduce((n, m) => n + Number(m.dataset.count), 0)") == 1
    c.page.click("#as-of-now")
    expect(c.page.locator("#order-status")).to_contain_text("paid (3)")
    # The typed control: a time before the paid webhook was recorded.
    paid = next(e for e in events if e["statusAfter"] == 3)
    before = datetime.fromisoformat(paid["recordedAt"].replace("Z", "+00:00")) - timedelta(microseconds=1)
    c.page.fill("#as-of", rfc3339(before))
    c.page.click("#as-of-show")
    expect(c.page.locator("#as-of-note")).to_be_visible()
    expect(c.page.locator("#order-status")).not_to_contain_text("paid (3)")
    # A time without its offset is not guessed at: the box says what it takes, and the page stays.
    c.page.fill("#as-of", rfc3339(before)[:-1])
    c.page.click("#as-of-show")
    assert "with its offset" in c.page.eval_on_selector("#as-of", "i => i.validationMessage")
    expect(c.page.locator("#as-of-note")).to_be_visible()
    # Corrected, the box takes it: the message does not linger and keep the form from submitting.
    earlier = before - timedelta(microseconds=1)
    c.page.fill("#as-of", rfc3339(earlier))
    c.page.click("#as-of-show")
    c.page.wait_for_url(lambda url: "asOf=" + rfc3339(earlier) in urllib.parse.unquote(url))
    expect(c.page.locator("#as-of")).to_have_value(rfc3339(earlier))
    expect(c.page.locator("#as-of-note")).to_be_visible()
    # Past the box, the API says the same: a 400 naming what asOf takes.
    c.page.goto(f"{BASE}/console/orders/OOO-1?asOf={rfc3339(before)[:-1]}")
    expect(c.page.locator("section.error[data-status='400']")).to_contain_text("with its offset")
    c.close()


@check("an auditor's correction, confirmed, appears as an operator event")
def correction(browser):
    c = Console(browser)
    c.sign_in(TOKENS["auditor"])
    c.open_order("COR-1")
    expect(c.page.locator("#timeline .mark.source-operator")).to_have_count(0)
    c.page.select_option("#correction-status", "5")
    c.page.fill("#correction-reason", "customer cancelled by phone, ticket 4411")
    c.page.click("#correction-review")
    expect(c.page.locator("#correction-summary")).to_contain_text("expired (5)")
    c.page.click("#correction-confirm")
    expect(c.page.locator("#order-status")).to_contain_text("expired (5)")
    operator = c.page.locator("#timeline .mark.source-operator")
    expect(operator).to_have_count(1)
    open_mark(operator)
    expect(c.page.locator("#event-payload")).to_contain_text("customer cancelled by phone")
    expect(c.page.locator("#event-fields")).to_contain_text("operator")
    c.close()


@check("support sees no correction form, no raw bodies and no quarantine")
def support_limits(browser):
    c = Console(browser)
    c.sign_in(TOKENS["support"])
    c.open_order("OOO-1")
    expect(c.page.locator("#correction")).to_have_count(0)
    expect(c.page.locator("#raw-events")).to_have_count(0)
    expect(c.page.locator("#nav")).not_to_contain_text("Quarantine")
    open_mark(c.page.locator("#timeline .mark").first)
    expect(c.page.locator("#event-detail")).to_contain_text("Raw bodies are for auditors")
    c.page.goto(BASE + "/console/quarantine")
    expect(c.page.locator("[role=alert]")).to_contain_text("for auditors")
    expect(c.page.locator("#quarantine-table")).to_have_count(0)
    c.close()


@check("auditors see the quarantine, a body as text or hex, and the ledger head")
def auditor_pages(browser):
    c = Console(browser)
    c.sign_in(TOKENS["auditor"])
    c.page.click("#nav a[href='/console/quarantine']")
    row = c.page.locator("#quarantine-table tbody tr").first
    expect(row).to_contain_text("bad_signature")
    expect(row).to_contain_text("127.0.0.1")
    row.locator("button[data-id]").click()
    body = row.locator("pre.body")
    expect(body).to_contain_text('"merchantOrderNo":"Q-1"')
    row.locator("button", has_text="Show as hex").click()
    expect(body).to_have_attribute("data-view", "hex")
    c.page.click("#nav a[href='/console/ledger']")
    expect(c.page.locator("#head-position")).to_have_text(str(call("GET", "/v1/ledger/head", token=TOKENS["auditor"])[1]["position"]))
    expect(c.page.locator("#ledger-checkpoints")).not_to_contain_text("Loading")
    # The ten newest notes, newest first, found below a head more than 1,024 positions past them.
    head = call("GET", "/v1/ledger/head", token=TOKENS["auditor"])[1]
    assert head["position"] - head["checkpoint"]["position"] > 1024, head
    notes = must(call("GET", "/v1/ledger/checkpoints?after=0&limit=1000", token=TOKENS["auditor"]), 200)["checkpoints"]
    items = c.page.locator("#ledger-checkpoints ol.checkpoints > li > p")
    expect(items).to_have_count(10)
    shown = [int(text.split(",")[0].removeprefix("Position ")) for text in items.all_inner_texts()]
    assert shown == [n["position"] for n in notes][-10:][::-1], (shown, notes)
    c.close()


@check("a payment in another asset than the order's is named in its own asset, never as the order's")
def other_asset(browser):
    c = Console(browser)
    c.sign_in(TOKENS["support"])
    c.open_order("ETH-1")
    conflict = c.page.locator("#conflicts li")
    expect(conflict).to_have_count(1)
    expect(conflict).to_contain_text("is 0.01 ETH, in none of the order's units, but 40 USDT was expected")
    c.close()


@check("the page for an unknown order says so, with a way back")
def unknown_order(browser):
    c = Console(browser)
    c.sign_in(TOKENS["support"])
    c.page.goto(BASE + "/console/orders/NOPE-404")
    expect(c.page.locator("#order-not-found")).to_contain_text("No order NOPE-404")
    expect(c.page.locator("#order-not-found a[href='/console/']")).to_be_visible()
    c.page.goto(BASE + "/console/no/such/page")
    expect(c.page.locator("[role=alert]")).to_contain_text("no page")
    c.close()


@check("an expired or a revoked token brings back the sign-in page with a message")
def expired_and_revoked(browser):
    short = new_token("support", "console-short", ttl="3s")
    c = Console(browser)
    c.sign_in(short)
    c.page.wait_for_timeout(3500)
    c.page.goto(BASE + "/console/orders/OOO-1")
    expect(c.page.locator("#signin-message")).to_contain_text("401")
    assert c.page.evaluate("sessionStorage.getItem('ledger.token')") is None
    c.close()
    revocable = new_token("support", "console-revoked")
    c = Console(browser)
    c.sign_in(revocable)
    subprocess.run([CLI, "token", "revoke", "console-revoked"], check=True, capture_output=True)
    deadline = time.time() + 15   # the service's token cache lets a lookup live a few seconds
    while True:
        c.page.goto(BASE + "/console/orders/OOO-1")
        c.page.wait_for_selector("#signin-page, #order-page[data-render-ms]")
        if c.page.locator("#signin-page").count():
            break
        assert time.time() < deadline, "a revoked token still reads orders after 15 s"
        c.page.wait_for_timeout(1000)
    expect(c.page.locator("#signin-message")).to_contain_text("expired or been revoked")
    c.close()
    # The ledger page asks twice (the head, then the checkpoints): the first refusal's reason
    # stays, and nothing more is sent without a token.
    short_auditor = new_token("auditor", "console-short-auditor", ttl="3s")
    c = Console(browser)
    c.sign_in(short_auditor)
    c.page.wait_for_timeout(3500)
    c.page.goto(BASE + "/console/ledger")
    expect(c.page.locator("#signin-message")).to_contain_text("unknown, expired or revoked")
    expect(c.page.locator("#signin-message")).not_to_contain_text("send a bearer token")
    c.close()


@check(f"the order page of a 400-event order renders in under {RENDER_BUDGET_MS} ms once its data is in")
def speed(browser):
    c = Console(browser)
    c.sign_in(TOKENS["support"])
    times = []
    for _ in range(3):
        c.open_order("BIG-400")
        times.append(float(c.page.get_attribute("#order-page", "data-render-ms")))
    total = c.page.eval_on_selector_all("#timeline .mark", "ms => ms.reduce((n, m) => n + Number(m.dataset.count), 0)")
    assert total == 400, f"the timeline shows {total} of 400 events"
    marks = c.page.locator("#timeline .mark").count()
    c.page.click("#zoom-in")
    zoomed = c.page.locator("#timeline .mark").count()
    assert zoomed > marks, (marks, zoomed)
    print(f"  render of the 400-event order page: {', '.join(f'{t:.1f}' for t in times)} ms "
          f"(first load and two reloads; {marks} marks, {zoomed} at zoom x4)")
    assert max(times) < RENDER_BUDGET_MS, times
    c.close()


@check("screenshot of an order page")
def screenshot(browser):
    if not SCREENSHOT:
        return
    c = Console(browser)
    c.sign_in(TOKENS["auditor"])
    c.open_order("OOO-1")
    open_mark(c.page.locator("#timeline .mark.conflict"))
    c.page.evaluate("document.querySelector('#timeline-box').scrollIntoView()")
    c.page.screenshot(path=SCREENSHOT, full_page=True)
    print(f"  wrote {SCREENSHOT}")
    c.close()


def main():
    if not os.access(CHROMIUM, os.X_OK):
        print(f"FAIL: no browser at {CHROMIUM}: install Debian's chromium (Ops/test does)", file=sys.stderr)
        return 1
    seed()
    failed = 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        for name, fn in CHECKS:
            started = time.time()
            try:
                fn(browser)
                print(f"ok   {name} ({time.time() - started:.1f} s)")
            except Exception:
                failed += 1
                print(f"FAIL {name}", file=sys.stderr)
                traceback.print_exc()
        browser.close()
    print(f"{len(CHECKS) - failed} of {len(CHECKS)} console checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
