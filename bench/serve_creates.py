#!/usr/bin/python3
"""Durable creates per second of `muster serve` over keep-alive connections (issue 13).

  serve_creates.py --port P [--clients 32] [--seconds 10] [--namespace default]

Each client thread keeps one HTTP/1.1 connection and POSTs small ConfigMaps (every
create is acknowledged only once it is on disk) for --seconds. Prints one JSON line:
creates/s, errors, and the create latency p50/p99/max in ms.
"""

import argparse
import http.client
import json
import threading
import time


def client(port, ns, prefix, deadline, latencies, errors):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    n = 0
    while time.monotonic() < deadline:
        body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": f"{prefix}-{n}"}, "data": {"k": "v" * 64}})
        start = time.monotonic()
        try:
            conn.request("POST", f"/api/v1/namespaces/{ns}/configmaps", body,
                         {"Content-Type": "application/json"})
            resp = conn.getresponse()
            resp.read()
            if resp.status != 201:
                errors.append(resp.status)
        except OSError as e:
            errors.append(str(e))
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        latencies.append(time.monotonic() - start)
        n += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--namespace", default="default")
    ap.add_argument("--prefix", default="cm")
    args = ap.parse_args()
    deadline = time.monotonic() + args.seconds
    per_client = [[] for _ in range(args.clients)]
    errors = []
    threads = [threading.Thread(target=client, args=(args.port, args.namespace,
                                                     f"{args.prefix}-{i}", deadline,
                                                     per_client[i], errors))
               for i in range(args.clients)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - start
    lat = sorted(x for c in per_client for x in c)
    pct = lambda p: round(1000 * lat[min(len(lat) - 1, int(p * len(lat)))], 2) if lat else 0
    print(json.dumps({"clients": args.clients, "creates": len(lat), "seconds": round(wall, 2),
                      "creates_per_s": round(len(lat) / wall, 1), "errors": len(errors),
                      "p50_ms": pct(0.5), "p99_ms": pct(0.99),
                      "max_ms": round(1000 * lat[-1], 2) if lat else 0}))


if __name__ == "__main__":
    main()
