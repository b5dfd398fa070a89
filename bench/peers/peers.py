#!/usr/bin/python3
"""muster's half of bench/peers/run.sh, and the report (stdlib only).

  peers.py manifests JOBS.txt NODES DURATION CONFIG_OUT JOBS_OUT
      Turns run_peer.sh's job list (one line of sbatch arguments per job, made by the
      generator inside ../shared/peers/slurm/run_peer.sh with the same seed) into
      Kubernetes objects for `muster serve`: CONFIG_OUT holds NODES emulated Nodes
      (64 CPUs, 512000 MB, 8 GPUs, as gen_conf.sh's slurmd nodes), one ResourceFlavor,
      ClusterQueues team-a and team-b (half the cluster each, cohort `gpus`, borrowing
      unbounded, so either team may use every GPU like a Slurm account), their
      LocalQueues in namespaces team-a and team-b, and WorkloadPriorityClasses `high`
      (partition prio) and `normal` (partition batch). JOBS_OUT has one JSON line per job
      in bench/serve_emulated.py's format: a batch/v1 Job, Indexed with parallelism =
      nodes for gangs, each pod requesting what sbatch asked per node, running
      DURATION seconds (sim.muster.dev/duration).
  peers.py muster --port P --pid PID --jobs JOBS_OUT --par N --nodes N --settle S --tag T
      Submits every job over N persistent connections (serve_emulated.py's client)
      while sampling the ClusterQueues' admitted counts, waits until every job is
      counted and the admitted count has not grown for S seconds, and prints a
      MUSTERPEER key=value line: sched_s is when the admitted count first reached its
      final value, from the first submission (the definition of run_peer.sh's
      MODE=online sched_s). CPU seconds and RSS are the server process's.
  peers.py report FILE
      Reads the MUSTERPEER and SLURMPEER lines of FILE (in run order) and prints a
      table per run, the medians, and each run pair's ratios muster/Slurm.
"""

import json
import os
import re
import shlex
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import serve_emulated  # noqa: E402  (the API client: submit, queue_counts, get_json)

NODE_CPU, NODE_MEM_MB, NODE_GPU = 64, 512000, 8
TEAMS = {"teamA": "team-a", "teamB": "team-b"}  # Slurm account: namespace, queues


def parse_sbatch(line):
    """The fields run_peer.sh's generator writes: -J kind -p part --account=A
    [--nice=N] --time=T -N nodes [--ntasks-per-node=1] --gres=gpu:G -c C --mem=M."""
    args = shlex.split(line)
    job = {"nice": 0}
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-J", "-p", "-N", "-c", "-o"):
            job[a] = args[i + 1]
            i += 2
            continue
        if a[:2] in ("-J", "-p", "-N", "-c", "-o"):  # -N1
            job[a[:2]] = a[2:]
        if a.startswith("--") and "=" in a:
            k, v = a[2:].split("=", 1)
            job[k] = v
        i += 1
    return {
        "kind": job["-J"], "partition": job["-p"], "account": job["account"],
        "nice": int(job["nice"]), "time_min": int(job["time"]), "nodes": int(job["-N"]),
        "gpus": int(job["gres"].split(":")[-1]), "cpus": int(job["-c"]),
        "mem": job["mem"],
    }


def manifests(jobs_txt, nodes, duration, config_out, jobs_out):
    nodes, duration = int(nodes), int(duration)
    docs = []
    for i in range(nodes):
        docs.append(
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: gn%04d\n  labels:\n"
            "    kubernetes.io/hostname: gn%04d\nstatus:\n  allocatable: {cpu: \"%d\", "
            "memory: %dMi, nvidia.com/gpu: \"%d\", pods: \"110\"}\n"
            % (i, i, NODE_CPU, NODE_MEM_MB, NODE_GPU))
    docs.append("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
                "metadata:\n  name: gpu-node\n")
    for team, ns in TEAMS.items():
        # Half the cluster each (the first team gets an odd node's share), one cohort:
        # either team may borrow all of the other's idle quota.
        share = nodes // 2 + (nodes % 2 if team == "teamA" else 0)
        docs.append(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n" % ns)
        docs.append(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n"
            "  name: %s\nspec:\n  cohort: gpus\n  namespaceSelector: {}\n"
            "  queueingStrategy: BestEffortFIFO\n  resourceGroups:\n"
            "  - coveredResources: [\"cpu\", \"memory\", \"nvidia.com/gpu\"]\n"
            "    flavors:\n    - name: gpu-node\n      resources:\n"
            "      - {name: cpu, nominalQuota: %d}\n"
            "      - {name: memory, nominalQuota: %dMi}\n"
            "      - {name: nvidia.com/gpu, nominalQuota: %d}\n"
            % (ns, share * NODE_CPU, share * NODE_MEM_MB, share * NODE_GPU))
        docs.append(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n"
            "  name: %s\n  namespace: %s\nspec:\n  clusterQueue: %s\n" % (ns, ns, ns))
    # Slurm's partition prio has PriorityTier 10, batch 1 (gen_conf.sh).
    for name, value in (("high", 10000), ("normal", 100)):
        docs.append("apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\n"
                    "metadata:\n  name: %s\nvalue: %d\n" % (name, value))
    with open(config_out, "w") as f:
        f.write("---\n".join(docs))

    with open(jobs_txt) as src, open(jobs_out, "w") as out:
        for i, line in enumerate(src):
            j = parse_sbatch(line)
            ns = TEAMS[j["account"]]
            name = "j%05d-%s" % (i, j["kind"])
            prio = "high" if j["partition"] == "prio" else "normal"
            mem = j["mem"][:-1] + "Gi" if j["mem"].endswith("G") else j["mem"]
            body = (
                "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  namespace: %s\n"
                "  labels:\n    kueue.x-k8s.io/queue-name: %s\n"
                "    kueue.x-k8s.io/priority-class: %s\n"
                "  annotations:\n    sim.muster.dev/duration: \"%ds\"\n"
                "spec:\n  parallelism: %d\n  completions: %d\n  completionMode: Indexed\n"
                "  activeDeadlineSeconds: %d\n"
                "  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
                "      - name: main\n        image: busybox\n"
                "        command: [\"sleep\", \"%d\"]\n"
                "        resources:\n"
                "          requests: {cpu: \"%d\", memory: %s, nvidia.com/gpu: \"%d\"}\n"
                "          limits: {nvidia.com/gpu: \"%d\"}\n"
                % (name, ns, ns, prio, duration, j["nodes"], j["nodes"],
                   j["time_min"] * 60, duration, j["cpus"], mem, j["gpus"], j["gpus"]))
            out.write(json.dumps({
                "path": "/apis/batch/v1/namespaces/%s/jobs" % ns, "body": body,
                "gpus_per_pod": j["gpus"], "pods": j["nodes"]}) + "\n")


def proc_cpu_s(pid):
    """utime + stime of a process, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_status_mb(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def run_muster(args):
    port, pid = int(args["--port"]), int(args["--pid"])
    nodes, settle = int(args["--nodes"]), float(args["--settle"])
    par, tag = int(args["--par"]), args["--tag"]
    max_wait = float(args.get("--max-wait", "900"))
    jobs = [json.loads(line) for line in open(args["--jobs"])]
    cpu0 = proc_cpu_s(pid)

    samples, done = [], threading.Event()

    def sample():
        while not done.is_set():
            try:
                samples.append((time.monotonic(), serve_emulated.queue_counts(port)[0]))
            except (OSError, RuntimeError, ValueError):
                pass
            done.wait(0.25)

    sampler = threading.Thread(target=sample)
    sampler.start()
    begin, last_ack, errors = serve_emulated.submit(port, jobs, par)
    done.set()
    sampler.join()
    submitted = len(jobs) - len(errors)
    for e in errors[:5]:
        print("  error:", e, file=sys.stderr)

    last_admitted, last_growth = -1, last_ack
    while True:
        now = time.monotonic()
        admitted, pending, gpus_used = serve_emulated.queue_counts(port)
        if admitted > last_admitted:
            last_admitted, last_growth = admitted, now
        if admitted + pending >= submitted and now - last_growth >= settle:
            break
        if now - begin > max_wait:
            print("MAXWAIT reached", file=sys.stderr)
            break
        time.sleep(0.25)
    reached = min([t for t, a in samples if a >= admitted] + [last_growth])
    sched_s = reached - begin
    t50 = min([t for t, a in samples if a >= admitted / 2] + [reached]) - begin
    cpu1 = proc_cpu_s(pid)
    by_kind = {}
    for w in serve_emulated.get_json(port, "/apis/kueue.x-k8s.io/v1beta1/workloads")["items"]:
        if any(c.get("type") == "Admitted" and c.get("status") == "True"
               for c in w.get("status", {}).get("conditions", [])):
            m = re.search(r"-(g1|g4|g8|gang\d+)(-|$)", w["metadata"]["name"])
            kind = m.group(1) if m else "?"
            by_kind[kind] = by_kind.get(kind, 0) + 1
    sub_s = last_ack - begin
    fields = [
        ("tag", tag), ("mode", "online"), ("nodes", nodes), ("gpus", nodes * NODE_GPU),
        ("jobs", len(jobs)), ("submitted", submitted), ("submit_errors", len(errors)),
        ("submit_s", "%.3f" % sub_s), ("submit_jps", "%.1f" % (submitted / sub_s)),
        ("par", par), ("started", admitted), ("sched_s", "%.3f" % sched_s),
        ("t50_s", "%.3f" % t50), ("pending", pending), ("gpus_used", gpus_used),
        ("cpu_s", "%.2f" % (cpu1 - cpu0)),
        ("peak_rss_mb", "%.1f" % proc_status_mb(pid, "VmHWM")),
        ("rss_mb", "%.1f" % proc_status_mb(pid, "VmRSS")),
        ("load1", open("/proc/loadavg").read().split()[0]),
        ("running_by_kind", ",".join("%s:%d" % kv for kv in sorted(by_kind.items()))),
    ]
    print("MUSTERPEER " + " ".join("%s=%s" % kv for kv in fields))
    return 0 if not errors else 1


def kv(line):
    return dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)


def report(path):
    runs = []
    for line in open(path):
        if line.startswith("MUSTERPEER ") or line.startswith("SLURMPEER "):
            runs.append((line.split()[0], kv(line)))
    if not runs:
        print("no runs")
        return 1
    cols = [("submit_jps", "subm/s"), ("sched_s", "all-fit s"), ("started", "running"),
            ("gpus_used", "GPUs busy"), ("cpu_s", "CPU s"), ("peak_rss_mb", "peak RSS MB"),
            ("node_cpu_s", "slurmd CPU s"), ("node_rss_mb", "slurmd RSS MB")]
    print("%-8s %-10s" % ("peer", "tag") + "".join("%14s" % c[1] for c in cols))
    for peer, r in runs:
        print("%-8s %-10s" % (peer[:-4].lower(), r.get("tag", "")[-10:])
              + "".join("%14s" % r.get(k, "-") for k, _ in cols))
    med = {}
    for peer in ("MUSTERPEER", "SLURMPEER"):
        rs = [r for p, r in runs if p == peer]
        if not rs:
            continue
        med[peer] = {}
        for k, _ in cols:
            vals = [float(r[k]) for r in rs if k in r and r[k] not in ("", "-")]
            if vals:
                med[peer][k] = statistics.median(vals)
        print("%-8s %-10s" % (peer[:-4].lower(), "median")
              + "".join("%14s" % ("%.1f" % med[peer][k] if k in med[peer] else "-")
                        for k, _ in cols))
    # Ratios within each round (a muster run and the Slurm run after it), never across.
    ratios = {"submit_jps": [], "sched_s": [], "cpu_s": [], "peak_rss_mb": [],
              "gpus_used": []}
    m = None
    for peer, r in runs:
        if peer == "MUSTERPEER":
            m = r
        elif m is not None:
            for k in ratios:
                try:
                    ratios[k].append(float(m[k]) / float(r[k]))
                except (KeyError, ValueError, ZeroDivisionError):
                    pass
            m = None
    for k, vals in ratios.items():
        if vals:
            print("ratio muster/slurm %-12s per round: %s  median %.3f"
                  % (k, " ".join("%.3f" % v for v in vals), statistics.median(vals)))
    # One machine-readable line per peer: medians over its runs, and for muster the
    # median of the per-round ratios.
    for peer, name in (("MUSTERPEER", "muster"), ("SLURMPEER", "slurm")):
        if peer not in med:
            continue
        rs = [r for p, r in runs if p == peer]
        line = "PEERS peer=%s runs=%d nodes=%s jobs=%s par=%s" % (
            name, len(rs), rs[0].get("nodes"), rs[0].get("jobs"), rs[0].get("par"))
        line += "".join(" %s=%.3f" % (k, v) for k, v in med[peer].items())
        if name == "muster":
            line += "".join(" ratio_%s=%.3f" % (k, statistics.median(v))
                            for k, v in ratios.items() if v)
        print(line)
    return 0


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "manifests" and len(sys.argv) == 7:
        manifests(*sys.argv[2:7])
        return 0
    if cmd == "muster":
        rest = sys.argv[2:]
        return run_muster(dict(zip(rest[::2], rest[1::2])))
    if cmd == "report" and len(sys.argv) == 3:
        return report(sys.argv[2])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
