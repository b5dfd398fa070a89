#!/usr/bin/python3
"""Memory and disk of `muster serve` under create/finish/delete churn (issue 14).

  serve_churn.py --port P --pid PID --data DIR --seconds S [--writers 4] [--sample 30]

Writers POST batch/v1 Jobs (at most --outstanding not yet deleted) (2 pods of 1 GPU, queue `lq` in namespace team-0000, a
sim.muster.dev/duration of 1-3 s so the emulated executor finishes them), and a
deleter removes every Job that finished (propagationPolicy Background, as kubectl
does), for S seconds. Every --sample seconds it prints the server's RSS, the store's
size (muster.db + WAL), and the objects listed (jobs, pods, workloads, events).
At the end: the first and last sample and the totals created and deleted. Memory
and disk are flat when the last sample is near the first at the same live load.
"""

import argparse
import http.client
import json
import os
import random
import threading
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def store_bytes(data):
    total = 0
    for name in ("muster.db", "muster.db-wal"):
        try:
            total += os.path.getsize(os.path.join(data, name))
        except OSError:
            pass
    return total


def job(name, seconds):
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": "team-0000",
            "labels": {"kueue.x-k8s.io/queue-name": "lq"},
            "annotations": {"sim.muster.dev/duration": f"{seconds:.1f}"},
        },
        "spec": {
            "parallelism": 2,
            "completions": 2,
            "completionMode": "Indexed",
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{
                        "name": "train",
                        "image": "registry.example.com/train:1.0",
                        "resources": {
                            "requests": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"},
                            "limits": {"nvidia.com/gpu": "1"},
                        },
                    }],
                }
            },
        },
    }


class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.created = 0
        self.deleted = 0
        self.errors = 0
        self.outstanding = 100


def request(conn, method, path, body=None):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    conn.request(method, path, body=json.dumps(body) if body is not None else None,
                 headers=headers)
    r = conn.getresponse()
    return r.status, r.read()


def writer(port, index, stop, counters):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    rng = random.Random(index)
    n = 0
    while not stop.is_set():
        with counters.lock:
            live = counters.created - counters.deleted
        if live >= counters.outstanding:
            time.sleep(0.05)  # a steady state: no more live jobs than the cluster turns over
            continue
        n += 1
        status, _ = request(conn, "POST", "/apis/batch/v1/namespaces/team-0000/jobs",
                            job(f"churn-{index}-{n}", rng.uniform(1, 3)))
        with counters.lock:
            if status == 201:
                counters.created += 1
            else:
                counters.errors += 1
        time.sleep(0.02)


def finished(item):
    for c in item.get("status", {}).get("conditions", []) or []:
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return True
    return False


def deleter(port, stop, counters):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    while not stop.is_set():
        status, body = request(conn, "GET", "/apis/batch/v1/namespaces/team-0000/jobs")
        if status != 200:
            time.sleep(1)
            continue
        for item in json.loads(body).get("items", []):
            if not finished(item):
                continue
            name = item["metadata"]["name"]
            status, _ = request(conn, "DELETE", f"/apis/batch/v1/namespaces/team-0000/jobs/{name}",
                                {"kind": "DeleteOptions", "apiVersion": "v1",
                                 "propagationPolicy": "Background"})
            with counters.lock:
                if status == 200:
                    counters.deleted += 1
        time.sleep(0.5)


def count(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    status, body = request(conn, "GET", path)
    return len(json.loads(body).get("items", [])) if status == 200 else -1


def sample(args, start):
    return {
        "t": round(time.time() - start),
        "rss_mib": round(rss_kib(args.pid) / 1024, 1),
        "store_mib": round(store_bytes(args.data) / 2**20, 1),
        "jobs": count(args.port, "/apis/batch/v1/jobs"),
        "pods": count(args.port, "/api/v1/pods"),
        "workloads": count(args.port, "/apis/kueue.x-k8s.io/v1beta1/workloads"),
        "events": count(args.port, "/api/v1/events"),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--seconds", type=float, default=600)
    p.add_argument("--writers", type=int, default=4)
    p.add_argument("--sample", type=float, default=30)
    p.add_argument("--outstanding", type=int, default=100,
                   help="most jobs created and not yet deleted at any time")
    args = p.parse_args()
    stop = threading.Event()
    counters = Counters()
    counters.outstanding = args.outstanding
    threads = [threading.Thread(target=writer, args=(args.port, i, stop, counters))
               for i in range(args.writers)]
    threads.append(threading.Thread(target=deleter, args=(args.port, stop, counters)))
    start = time.time()
    samples = [sample(args, start)]
    print(json.dumps(samples[0]), flush=True)
    for t in threads:
        t.start()
    while time.time() - start < args.seconds:
        time.sleep(min(args.sample, max(0.0, args.seconds - (time.time() - start))))
        s = sample(args, start)
        s["created"], s["deleted"], s["errors"] = counters.created, counters.deleted, counters.errors
        samples.append(s)
        print(json.dumps(s), flush=True)
    stop.set()
    for t in threads:
        t.join()
    first, last = samples[1] if len(samples) > 1 else samples[0], samples[-1]
    print(f"churn: {counters.created} jobs created, {counters.deleted} deleted, "
          f"{counters.errors} errors in {args.seconds:.0f} s; RSS {first['rss_mib']} MiB at "
          f"{first['t']} s -> {last['rss_mib']} MiB at {last['t']} s; store "
          f"{first['store_mib']} -> {last['store_mib']} MiB; events {first['events']} -> "
          f"{last['events']}")


if __name__ == "__main__":
    main()
