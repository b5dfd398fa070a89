#!/usr/bin/python3
"""muster kube against the stock kube-scheduler on a real kube-apiserver (see README.md).

For each run (one after the other, each on a fresh etcd): start etcd, kube-apiserver
and kube-controller-manager; install muster's CRDs; create --nodes fake Nodes of
--gpus GPUs; start the scheduler under test; create --jobs Indexed Jobs of --pods
one-GPU pods; measure the time from the first Job create until every pod that fits
is bound, the scheduler's CPU and memory, its idle CPU with everything running, and
its memory after every Job is deleted. One RESULT line per run, then the ratios.
"""

import argparse
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from control_plane import (ControlPlane, Process, loadavg,  # noqa: E402
                           machine_busy_seconds)
from fake_kubelet import FakeKubelet  # noqa: E402
from kube_http import wait_for  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAMESPACE = "bench"
RUNS = ("kube-scheduler", "kube-scheduler-matched", "muster")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--gpus", type=int, default=8, help="GPUs per node")
    p.add_argument("--jobs", type=int, default=1250)
    p.add_argument("--pods", type=int, default=8, help="pods per Job (one GPU each)")
    p.add_argument("--runs", default="kube-scheduler,muster",
                   help="comma-separated, in order, from: " + ", ".join(RUNS))
    p.add_argument("--idle-seconds", type=float, default=60)
    p.add_argument("--settle-seconds", type=float, default=10,
                   help="wait before the idle and after-delete samples")
    p.add_argument("--bind-timeout", type=float, default=900,
                   help="give up waiting for all fitting pods bound after this")
    p.add_argument("--stall-timeout", type=float, default=180,
                   help="give up when no pod was bound for this long")
    p.add_argument("--create-threads", type=int, default=8)
    p.add_argument("--kubelet-workers", type=int, default=8)
    p.add_argument("--kcm-qps", type=float, default=1000)
    p.add_argument("--kcm-burst", type=int, default=2000)
    p.add_argument("--concurrent-job-syncs", type=int, default=20)
    p.add_argument("--matched-qps", type=float, default=1000,
                   help="kube-scheduler-matched's client QPS (muster kube's default)")
    p.add_argument("--matched-burst", type=int, default=2000)
    p.add_argument("--scheduler-config-version",
                   help="KubeSchedulerConfiguration version (default: from kube-scheduler "
                   "--version: v1beta3 before v1.25, else v1)")
    p.add_argument("--muster-arg", action="append", default=[],
                   help="extra argument for muster kube (repeatable)")
    p.add_argument("--workdir", help="keep logs here (default: a new temporary directory)")
    p.add_argument("--keep", action="store_true", help="keep etcd data and logs")
    args = p.parse_args()
    for name in args.runs.split(","):
        if name not in RUNS:
            p.error("unknown run %r (allowed: %s)" % (name, ", ".join(RUNS)))
    for flag in ("nodes", "gpus", "jobs", "pods"):
        if not 1 <= getattr(args, flag) <= 100000:
            p.error("--%s must be between 1 and 100000" % flag)
    return args


def binaries(runs):
    found = {}
    wanted = {"etcd": "ETCD", "kube-apiserver": "KUBE_APISERVER",
              "kube-controller-manager": "KUBE_CONTROLLER_MANAGER"}
    if any(r.startswith("kube-scheduler") for r in runs):
        wanted["kube-scheduler"] = "KUBE_SCHEDULER"
    if "muster" in runs:
        wanted["muster"] = "MUSTER"
    defaults = {"etcd": shutil.which("etcd") or "", "muster": os.path.join(ROOT, "build/muster")}
    missing = []
    for name, var in wanted.items():
        path = os.environ.get(var) or defaults.get(name, "")
        if not path or not os.access(path, os.X_OK):
            missing.append("%s=%s (%s)" % (var, path or "<unset>", name))
        found[name] = path
    if missing:
        sys.exit("kube_real: not executable: " + "; ".join(missing) +
                 "\nset the variables to the binaries' paths (see bench/kube_real/README.md)")
    return found


# --- objects -------------------------------------------------------------------------

def install_crds(client):
    names = []
    for path in sorted(glob.glob(os.path.join(ROOT, "deploy/crds/*.yaml"))):
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                if doc:
                    client.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", doc)
                    names.append(doc["metadata"]["name"])

    def established():
        for name in names:
            _, crd = client.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + name)
            conditions = crd.get("status", {}).get("conditions", [])
            if not any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                return False
        return True
    wait_for(established, 60, "the CRDs to be Established")
    return len(names)


def node_object(i, gpus):
    name = "node-%05d" % i
    resources = {"cpu": "96", "memory": "1536Gi", "pods": "110", "nvidia.com/gpu": str(gpus),
                 "ephemeral-storage": "1Ti"}
    return name, {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                              "kubernetes.io/os": "linux",
                                              "kubernetes.io/arch": "amd64"}}}, {
        "status": {"capacity": resources, "allocatable": resources,
                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                   "lastHeartbeatTime": None, "lastTransitionTime": None}],
                   "nodeInfo": {"kubeletVersion": "v1.28.7", "architecture": "amd64",
                                "operatingSystem": "linux"}}}


def create_nodes(client, count, gpus, threads):
    def one(i):
        name, node, status = node_object(i, gpus)
        client.create("/api/v1/nodes", node)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        for c in status["status"]["conditions"]:
            c["lastHeartbeatTime"] = c["lastTransitionTime"] = now
        client.merge_patch("/api/v1/nodes/%s/status" % name, status)
        # The API server's TaintNodesByCondition admission taints every new node
        # not-ready; the node lifecycle controller (not run: no heartbeats) would lift
        # it once the node is Ready. Lift it as that controller would.
        client.merge_patch("/api/v1/nodes/" + name, {"spec": {"taints": None}})
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, range(count)))


def create_queues(client, nodes, gpus):
    base = "/apis/kueue.x-k8s.io/v1beta1"
    client.create(base + "/resourceflavors", {
        "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
        "metadata": {"name": "default-flavor"}, "spec": {}})
    client.create(base + "/clusterqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {"namespaceSelector": {}, "resourceGroups": [{
            "coveredResources": ["cpu", "nvidia.com/gpu"],
            "flavors": [{"name": "default-flavor", "resources": [
                {"name": "cpu", "nominalQuota": str(96 * nodes)},
                {"name": "nvidia.com/gpu", "nominalQuota": str(gpus * nodes)}]}]}]}})
    client.create(base + "/namespaces/%s/localqueues" % NAMESPACE, {
        "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": NAMESPACE}, "spec": {"clusterQueue": "cq"}})


def job_object(i, pods, muster):
    labels = {"kueue.x-k8s.io/queue-name": "lq"} if muster else {}
    spec = {"restartPolicy": "Never", "terminationGracePeriodSeconds": 30,
            "containers": [{"name": "worker", "image": "registry.invalid/trainer:1",
                            "command": ["sleep", "infinity"],
                            "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "1"},
                                          "limits": {"nvidia.com/gpu": "1"}}}]}
    if muster:
        spec["schedulerName"] = "muster"
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "train-%05d" % i, "namespace": NAMESPACE, "labels": labels},
            "spec": {"completionMode": "Indexed", "completions": pods, "parallelism": pods,
                     "backoffLimit": 0, "suspend": bool(muster),
                     "template": {"metadata": {"labels": labels}, "spec": spec}}}


# --- schedulers ----------------------------------------------------------------------

SCHEDULER_CONFIG = """apiVersion: kubescheduler.config.k8s.io/%(version)s
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %(kubeconfig)s
%(qps)sleaderElection:
  leaderElect: false
"""


def start_scheduler(run, cp, bins, args):
    log = cp.path("scheduler.log")
    if run == "muster":
        argv = [bins["muster"], "kube", "--kubeconfig", cp.kubeconfig] + args.muster_arg
        proc = Process("muster", argv, log)
        queue = "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq"
        # Ready once it has listed everything and written the ClusterQueue's status.
        wait_for(lambda: _check(proc) and "status" in cp.client.get(queue)[1], 120,
                 "muster kube to write the ClusterQueue status (log: %s)" % log, 0.5)
        return proc
    qps = ""
    if run == "kube-scheduler-matched":
        qps = "  qps: %g\n  burst: %d\n" % (args.matched_qps, args.matched_burst)
    # The configuration's v1 came with v1.25; v1.23 and v1.24 read v1beta3.
    usage = subprocess.run([bins["kube-scheduler"], "--version"], capture_output=True, text=True)
    minor = re.search(r"v1\.(\d+)\.", usage.stdout)
    version = "v1beta3" if minor and int(minor.group(1)) < 25 else "v1"
    if args.scheduler_config_version:
        version = args.scheduler_config_version
    with open(cp.path("scheduler-config.yaml"), "w") as f:
        f.write(SCHEDULER_CONFIG % {"kubeconfig": cp.kubeconfig, "qps": qps, "version": version})
    proc = Process("kube-scheduler", [
        bins["kube-scheduler"], "--config", cp.path("scheduler-config.yaml"),
        "--secure-port", "0", "--v", "1"], log)

    def synced():
        _check(proc)
        with open(log, errors="replace") as f:
            return "Starting Kubernetes Scheduler" in f.read()
    wait_for(synced, 60, "kube-scheduler to start (log: %s)" % log, 0.5)
    time.sleep(3)  # its informers list the 1,000 nodes
    return proc


def _check(proc):
    if not proc.alive():
        raise RuntimeError("%s exited:\n%s" % (proc.name, proc.tail()))
    return True


# --- one run -------------------------------------------------------------------------

def write_counts(client):
    """The API server's apiserver_request_total for writes (every client's), by verb and
    resource[/subresource]: what a run made the API server store."""
    _, text = client.request("GET", "/metrics", allow=(403, 404))
    counts = {}
    if not isinstance(text, str):
        return counts
    for line in text.splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels, value = line.rsplit(" ", 1)
        d = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        if d.get("verb") in ("GET", "LIST", "WATCH", "CONNECT"):
            continue
        key = "%s:%s" % (d.get("verb"), d.get("resource", ""))
        if d.get("subresource"):
            key += "/" + d["subresource"]
        counts[key] = counts.get(key, 0) + float(value)
    return counts


def measure(run, args, bins, workdir):
    directory = os.path.join(workdir, run)
    os.makedirs(directory)
    cp = ControlPlane(directory, bins, args.kcm_qps, args.kcm_burst, args.concurrent_job_syncs)
    sched = kubelet = None
    r = {"run": run}
    try:
        cp.start()
        client = cp.client
        r["crds"] = install_crds(client)
        client.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                             "metadata": {"name": NAMESPACE}})
        wait_for(lambda: client.get("/api/v1/namespaces/%s/serviceaccounts/default"
                                    % NAMESPACE)[0] == 200, 60, "the default ServiceAccount")
        t = time.monotonic()
        create_nodes(client, args.nodes, args.gpus, args.create_threads)
        r["nodes_s"] = time.monotonic() - t
        if run == "muster":
            create_queues(client, args.nodes, args.gpus)
        sched = start_scheduler(run, cp, bins, args)
        kubelet = FakeKubelet(client, NAMESPACE, args.kubelet_workers)
        kubelet.start()

        gangs_fit = (args.nodes * args.gpus) // args.pods
        fitting = min(args.jobs, gangs_fit) * args.pods
        if run != "muster":  # no gangs: any pod fits while GPUs are free
            fitting = min(args.jobs * args.pods, args.nodes * args.gpus)
        r["fitting"] = fitting
        procs = dict(cp.processes, scheduler=sched)
        cpu0 = {n: p.cpu() for n, p in procs.items()}
        busy0, self0 = machine_busy_seconds(), sum(os.times()[:2])
        writes0 = write_counts(client)
        r["load_start"] = loadavg()
        t0 = time.monotonic()

        def create(i):
            client.create("/apis/batch/v1/namespaces/%s/jobs" % NAMESPACE,
                          job_object(i, args.pods, run == "muster"))
        with concurrent.futures.ThreadPoolExecutor(args.create_threads) as pool:
            list(pool.map(create, range(args.jobs)))
        r["create_s"] = time.monotonic() - t0

        last_progress, last_bound, last_report = time.monotonic(), -1, t0
        while True:
            bound, live, _, _ = kubelet.counts()
            now = time.monotonic()
            if now - last_report >= 30:
                last_report = now
                print("  %s: %.0f s, %d pods, %d of %d bound, load %s"
                      % (run, now - t0, live, bound, fitting, loadavg()), flush=True)
            if bound >= fitting:
                break
            if bound != last_bound:
                last_bound, last_progress = bound, now
            if now - t0 > args.bind_timeout or now - last_progress > args.stall_timeout:
                r["stalled"] = "bound %d of %d" % (bound, fitting)
                break
            _check(sched)
            cp.check_alive()
            time.sleep(0.1)
        times = kubelet.bound_times()
        r["bound"] = len(times)
        done = times[min(fitting, len(times)) - 1] if times else t0
        r["bind_s"] = done - t0
        r["first_bind_s"] = (times[0] - t0) if times else float("nan")
        r["pods_per_s"] = len(times[:fitting]) / r["bind_s"] if r["bind_s"] > 0 else 0
        cpu1 = {n: p.cpu() for n, p in procs.items()}
        elapsed = time.monotonic() - t0
        for n in procs:
            r["cpu_" + n] = cpu1[n] - cpu0[n]
        ours = sum(r["cpu_" + n] for n in procs) + (sum(os.times()[:2]) - self0)
        r["other_cores"] = max(0.0, (machine_busy_seconds() - busy0 - ours) / elapsed)
        r["load_bound"] = loadavg()
        r["ms_per_pod"] = 1000 * r["cpu_scheduler"] / max(1, r["bound"])
        writes1 = write_counts(client)
        r["writes"] = {k: int(v - writes0.get(k, 0)) for k, v in writes1.items()
                       if v - writes0.get(k, 0) >= 1}

        # Everything running: wait for the fake kubelet, settle, then idle CPU.
        wait_for(lambda: kubelet.counts()[2] >= r["bound"], 300, "bound pods Running")
        time.sleep(args.settle_seconds)
        c0, ta = sched.cpu(), time.monotonic()
        time.sleep(args.idle_seconds)
        _check(sched)
        r["idle_pct"] = 100 * (sched.cpu() - c0) / (time.monotonic() - ta)
        r["rss_mb"], r["hwm_mb"] = sched.memory_mb()
        r["apiserver_rss_mb"] = cp.processes["kube-apiserver"].memory_mb()[0]

        # Delete every Job (the garbage collector deletes their pods), then memory.
        # One DELETE per Job, as users do: a single DELETE of the collection can run
        # past the API server's 60 s request timeout at this size.
        t = time.monotonic()

        def delete(i):
            client.delete("/apis/batch/v1/namespaces/%s/jobs/train-%05d" % (NAMESPACE, i),
                          {"kind": "DeleteOptions", "apiVersion": "v1",
                           "propagationPolicy": "Background"})
        with concurrent.futures.ThreadPoolExecutor(args.create_threads) as pool:
            list(pool.map(delete, range(args.jobs)))
        try:
            wait_for(lambda: kubelet.counts()[1] == 0, 600, "every pod deleted", 0.5)
        except TimeoutError as e:
            r["delete_error"] = "%s (%d pods left)" % (e, kubelet.counts()[1])
        r["delete_s"] = time.monotonic() - t
        time.sleep(args.settle_seconds)
        _check(sched)
        r["rss_after_delete_mb"] = sched.memory_mb()[0]
        r["kubelet_errors"] = kubelet.errors
        if kubelet.errors:
            r["kubelet_last_error"] = kubelet.last_error
    except Exception as e:  # noqa: BLE001 - report the run as failed, go on with the next
        r["error"] = str(e)
    finally:
        if kubelet:
            kubelet.stop_event.set()
        if sched:
            r["stop_s"] = sched.stop()
        if kubelet:
            kubelet.stop()
        cp.stop()
        if not args.keep:
            shutil.rmtree(cp.path("etcd-data"), ignore_errors=True)
    return r


def result_line(r):
    keys = ["bound", "fitting", "bind_s", "pods_per_s", "first_bind_s", "create_s",
            "cpu_scheduler", "ms_per_pod", "idle_pct", "rss_mb", "hwm_mb",
            "rss_after_delete_mb", "cpu_kube-apiserver", "cpu_etcd",
            "cpu_kube-controller-manager", "other_cores", "delete_s", "stop_s"]
    parts = ["RESULT run=%s" % r["run"]]
    for k in keys:
        if k in r:
            v = r[k]
            parts.append("%s=%s" % (k, ("%.3f" % v if k == "ms_per_pod" else "%.1f" % v)
                                    if isinstance(v, float) else v))
    for k in ("load_start", "load_bound"):
        if k in r:
            parts.append("%s=%s" % (k, r[k].replace(" ", "/")))
    for k in ("stalled", "error", "delete_error", "kubelet_errors", "kubelet_last_error"):
        if r.get(k):
            parts.append("%s=%r" % (k, r[k]))
    return " ".join(parts)


def main():
    args = parse_args()
    runs = args.runs.split(",")
    bins = binaries(runs)
    workdir = args.workdir or tempfile.mkdtemp(prefix="muster-kube-real.")
    os.makedirs(workdir, exist_ok=True)
    print("kube_real: %d nodes x %d GPUs, %d Indexed Jobs x %d one-GPU pods; runs %s; "
          "%d cores, load %s; logs in %s" % (args.nodes, args.gpus, args.jobs, args.pods,
                                             ",".join(runs), os.cpu_count(), loadavg(),
                                             workdir), flush=True)
    results = {}
    for run in runs:
        results[run] = measure(run, args, bins, workdir)
        print(result_line(results[run]), flush=True)
        writes = results[run].get("writes", {})
        if writes:
            # Every client's writes in the binding window, most first.
            print("WRITES run=%s total=%d %s" % (
                run, sum(writes.values()),
                " ".join("%s=%d" % kv for kv in sorted(writes.items(), key=lambda kv: -kv[1]))),
                flush=True)
    m = results.get("muster")
    for base in ("kube-scheduler", "kube-scheduler-matched"):
        k = results.get(base)
        if not (m and k) or "error" in m or "error" in k:
            continue
        ratio = lambda a, b: a / b if b else float("inf")  # noqa: E731
        print("RATIO %s/muster time_to_bound=%.2fx cpu_per_pod=%.2fx idle_cpu=%.2fx rss=%.2fx"
              % (base, ratio(k["bind_s"], m["bind_s"]), ratio(k["ms_per_pod"], m["ms_per_pod"]),
                 ratio(k.get("idle_pct", 0), m.get("idle_pct", 0)),
                 ratio(k.get("rss_mb", 0), m.get("rss_mb", 0))), flush=True)
    return 1 if any("error" in r for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
