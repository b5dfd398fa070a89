#!/usr/bin/python3
"""Client half of bench/serve_emulated.sh (stdlib only).

  serve_emulated.py split WORKLOAD.yaml CONFIG_OUT JOBS_OUT
      Splits `muster gen workload` output: PriorityClasses go to CONFIG_OUT (loaded
      with -f at server start), jobs to JOBS_OUT (one JSON line each: API path,
      YAML body, GPUs per pod, pods).
  serve_emulated.py run --port P --jobs JOBS_OUT --concurrency N --pid PID --nodes N --gpus G
                        [--client SERVE_LOAD]
      POSTs every job over N persistent connections (threads; with --client, that C++
      program's threads: build/serve_load, bench/serve_load/main.cc), then polls until
      every job that fits runs, and prints the figures, with the CPU seconds the server
      and the client used while jobs were submitted.

"Every job that fits is running": the ClusterQueue status (written by the scheduler
after each cycle, after the pods of the gangs it started) is sampled during and
after submission. The run is settled when every submitted job is counted (admitted +
pending == submitted) and the admitted count has not grown for --settle seconds
(the settle wait is not counted). Printed: when the admitted count first reached its
final value, from the last and from the first submission (muster schedules while
jobs arrive, so the cluster may be full before the last one). The settled state is
then checked against capacity: from the Running pods' nodes and GPU requests, the
most free GPUs on any one node and in total; a pending job fits nowhere when it
needs more GPUs per pod than any node has free (or more in total than are free).
"""

import http.client
import json
import os
import re
import subprocess
import sys
import threading
import time


def split(workload_path, config_out, jobs_out, body_format="yaml"):
    """body_format json: each job also carries its body as JSON text ("json"), the
    form kubectl sends, for run's --body json."""
    text = open(workload_path).read()
    config, jobs = [], []
    for doc in re.split(r"^---$", text, flags=re.M):
        kind = re.search(r"^kind: (\S+)", doc, flags=re.M)
        if not kind:
            continue
        kind = kind.group(1)
        if kind == "PriorityClass":
            config.append(doc.strip("\n"))
            continue
        ns = re.search(r"^  namespace: (\S+)", doc, flags=re.M).group(1)
        if kind == "Job":
            path = "/apis/batch/v1/namespaces/%s/jobs" % ns
        elif kind == "PyTorchJob":
            path = "/apis/kubeflow.org/v1/namespaces/%s/pytorchjobs" % ns
        else:
            raise SystemExit("unexpected kind " + kind)
        gpus = [int(g) for g in re.findall(r'nvidia\.com/gpu: "(\d+)"\}', doc)]
        replicas = [int(r) for r in re.findall(r"^\s+(?:replicas|parallelism): (\d+)", doc, re.M)]
        jobs.append({"path": path, "body": doc.strip("\n") + "\n",
                     "gpus_per_pod": max(gpus) if gpus else 0, "pods": sum(replicas) or 1})
        if body_format == "json":
            import yaml  # only here: the YAML runs need no PyYAML
            loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            jobs[-1]["json"] = json.dumps(yaml.load(doc, Loader=loader), separators=(",", ":"))
    with open(config_out, "w") as f:
        f.write("\n---\n".join(config) + "\n")
    with open(jobs_out, "w") as f:
        for j in jobs:
            f.write(json.dumps(j) + "\n")


def request(conn, method, path, body=None, content_type="application/yaml"):
    headers = {"Content-Type": content_type} if body is not None else {}
    conn.request(method, path, body=body, headers=headers)
    resp = conn.getresponse()
    return resp.status, resp.read()


def get_json(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    status, data = request(conn, "GET", path)
    conn.close()
    if status != 200:
        raise RuntimeError("GET %s: %d %s" % (path, status, data[:200]))
    return json.loads(data)


def cpu_seconds(pid):
    """User + system CPU seconds of process pid (all its threads) so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def count_quantity(q):
    """A whole-number Kubernetes quantity ("8", "8k", "2M") as an int."""
    q = str(q)
    for suffix, factor in (("k", 10**3), ("M", 10**6), ("G", 10**9)):
        if q.endswith(suffix):
            return int(float(q[:-1]) * factor)
    return int(float(q))


def queue_counts(port):
    """(admitted, pending, GPUs in use) summed over ClusterQueues."""
    admitted = pending = gpus = 0
    for cq in get_json(port, "/apis/kueue.x-k8s.io/v1beta1/clusterqueues")["items"]:
        st = cq.get("status", {})
        admitted += st.get("admittedWorkloads", 0)
        pending += st.get("pendingWorkloads", 0)
        for fl in st.get("flavorsUsage", []):
            for r in fl.get("resources", []):
                if r["name"] == "nvidia.com/gpu":
                    gpus += count_quantity(r["total"])
    return admitted, pending, gpus


def submit(port, jobs, concurrency, body_format="yaml"):
    errors, lock = [], threading.Lock()
    next_index = [0]

    def worker():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while True:
            with lock:
                i = next_index[0]
                next_index[0] += 1
            if i >= len(jobs):
                break
            if body_format == "json":
                status, data = request(conn, "POST", jobs[i]["path"], jobs[i]["json"],
                                       "application/json")
            else:
                status, data = request(conn, "POST", jobs[i]["path"], jobs[i]["body"])
            if status != 201:
                with lock:
                    errors.append("%s: %d %s" % (jobs[i]["path"], status, data[:200]))
        conn.close()

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    begin = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return begin, time.monotonic(), errors


def submit_with(client, port, jobs_path, concurrency, body_format="yaml"):
    """submit() by the C++ client: its own line is printed, its times returned."""
    out = subprocess.run([client, "--port", str(port), "--jobs", jobs_path,
                          "--concurrency", str(concurrency), "--body", body_format],
                         stdout=subprocess.PIPE,
                         text=True, check=False).stdout
    times = None
    for line in out.splitlines():
        if line.startswith("times: "):
            times = line.split()[1:]
        else:
            print(line)
    if times is None:
        raise SystemExit("%s printed no times" % client)
    return float(times[0]), float(times[1]), int(times[2])


def list_jobs(port, pid, rounds=10):
    """LIST of every batch Job (issue 13: < 50 ms at 10,000 jobs), timed to the
    response's last byte over a fresh connection, with the server's CPU for it."""
    times, size = [], 0
    cpu = cpu_seconds(pid)
    for _ in range(rounds):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        start = time.monotonic()
        status, data = request(conn, "GET", "/apis/batch/v1/jobs")
        times.append(time.monotonic() - start)
        conn.close()
        if status != 200:
            raise RuntimeError("LIST jobs: %d %s" % (status, data[:200]))
        size = len(data)
    cpu = (cpu_seconds(pid) - cpu) / rounds
    items = len(json.loads(data)["items"])
    times.sort()
    print("LIST jobs: %d items, %.1f MiB: ms min %.1f median %.1f over %d; server CPU %.1f ms "
          "per LIST" % (items, size / 2**20, times[0] * 1e3, times[len(times) // 2] * 1e3,
                        rounds, cpu * 1e3))


def run(args):
    port, pid = int(args["--port"]), int(args["--pid"])
    nodes, gpus_per_node = int(args["--nodes"]), int(args["--gpus"])
    settle = float(args.get("--settle", "3"))
    body_format = args.get("--body", "yaml")
    jobs = [json.loads(line) for line in open(args["--jobs"])]
    rss_before = rss_bytes(pid)

    # Admitted counts sampled while submitting too: in muster the scheduler runs
    # during submission, so the cluster may fill before the last job is accepted.
    samples, done = [], threading.Event()

    def sample():
        while not done.is_set():
            try:
                samples.append((time.monotonic(), queue_counts(port)[0]))
            except (OSError, RuntimeError, http.client.HTTPException):
                pass
            done.wait(0.2)

    sampler = threading.Thread(target=sample)
    sampler.start()
    server_cpu, client_cpu = cpu_seconds(pid), time.process_time()
    try:
        if "--client" in args:
            begin, last_ack, n_errors = submit_with(args["--client"], port, args["--jobs"],
                                                    int(args["--concurrency"]), body_format)
            errors = ["see above"] * n_errors
        else:
            begin, last_ack, errors = submit(port, jobs, int(args["--concurrency"]), body_format)
    finally:
        # A client that failed (serve_load exiting early) ends the run: the sampler,
        # a non-daemon thread, kept the interpreter waiting for ever.
        done.set()
        sampler.join()
    server_cpu, client_cpu = cpu_seconds(pid) - server_cpu, time.process_time() - client_cpu
    submitted = len(jobs) - len(errors)
    if "--client" not in args:
        print("submitted: %d jobs in %.2f s over %s connections: %.0f submissions/s (%d errors)"
              % (submitted, last_ack - begin, args["--concurrency"],
                 submitted / (last_ack - begin), len(errors)))
        for e in errors[:5]:
            print("  error:", e)
    # The Python process's CPU includes the sampler thread (one GET each 0.2 s).
    print("CPU while submitting: server %.2f s, Python client process %.2f s (%.2f s wall, %d cores)"
          % (server_cpu, client_cpu, last_ack - begin, os.cpu_count()))

    admitted, last_growth, last_admitted = 0, last_ack, -1
    while True:
        now = time.monotonic()
        admitted, pending, used_gpus = queue_counts(port)
        if admitted > last_admitted:
            last_admitted, last_growth = admitted, now
        if admitted + pending >= submitted and now - last_growth >= settle:
            break
        if now - last_ack > 600:
            print("gave up waiting after 600 s")
            break
        time.sleep(0.05)
    reached = min([t for t, a in samples if a >= admitted] + [last_growth])
    print("running: %d jobs (%d pending), %d of %d GPUs in use; all running %.2f s after the "
          "last submission (%.2f s after the first)"
          % (admitted, pending, used_gpus, nodes * gpus_per_node,
             max(0.0, reached - last_ack), reached - begin))

    # Does any pending job still fit? (pods' nodes and requests; gen's jobs request
    # the same GPUs in every pod).
    free = {}
    pods = get_json(port, "/api/v1/pods")["items"]
    for pod in pods:
        if pod.get("status", {}).get("phase") != "Running":
            continue
        node = pod["spec"].get("nodeName", "")
        for c in pod["spec"].get("containers", []):
            g = int(c.get("resources", {}).get("requests", {}).get("nvidia.com/gpu", "0"))
            free[node] = free.get(node, gpus_per_node) - g
    max_node_free = max(list(free.values()) + ([gpus_per_node] if len(free) < nodes else []))
    total_free = nodes * gpus_per_node - used_gpus
    workloads = get_json(port, "/apis/kueue.x-k8s.io/v1beta1/workloads")["items"]
    pending_jobs = [w for w in workloads
                    if not any(c.get("type") == "Admitted" and c.get("status") == "True"
                               for c in w.get("status", {}).get("conditions", []))]
    by_name = {re.search(r"^  name: (\S+)", j["body"], re.M).group(1): j for j in jobs}
    fits = 0
    for w in pending_jobs:
        name = w["metadata"]["name"].split("-", 1)[1]
        j = by_name.get(name)
        if j and j["gpus_per_pod"] <= max_node_free and j["gpus_per_pod"] * j["pods"] <= total_free:
            fits += 1
    print("capacity check: %d GPUs free, at most %d on one node; %d of %d pending jobs could "
          "still fit by that bound" % (total_free, max_node_free, fits, len(pending_jobs)))

    list_jobs(port, pid)

    rss = rss_bytes(pid)
    running_pods = sum(1 for p in pods if p.get("status", {}).get("phase") == "Running")
    print("server RSS: %.1f MiB before submissions (%d nodes: %.0f bytes/node), "
          "%.1f MiB after (%d jobs, %d running pods: %.0f bytes per job)"
          % (rss_before / 2**20, nodes, rss_before / nodes, rss / 2**20, submitted,
             running_pods, (rss - rss_before) / max(1, submitted)))
    return 0 if not errors else 1


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "split":
        split(*sys.argv[2:6])
        return 0
    if len(sys.argv) >= 2 and sys.argv[1] == "run":
        rest = sys.argv[2:]
        return run(dict(zip(rest[::2], rest[1::2])))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
