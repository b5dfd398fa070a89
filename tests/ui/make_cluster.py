#!/usr/bin/env python3
"""Manifests for the dashboard's browser test: a small emulated GPU cluster with
everything the pages show, and the jobs that fill it.

  make_cluster.py cluster OUT.yaml   nodes (2 blocks x 2 racks x 2 nodes of 8 GPUs in two
                                     NUMA zones), a Kueue Topology, two flavors, a cohort
                                     of two ClusterQueues that lend and borrow, LocalQueues,
                                     priority classes and a Volcano queue
  make_cluster.py jobs OUT.yaml      jobs that run (long sim.muster.dev/duration, so they
                                     stay running through the test), a gang that borrows,
                                     and jobs that wait for quota
  make_cluster.py job NAME GPUS      one PyTorchJob (master + workers) as JSON on stdout
  make_cluster.py restricted-job NAMESPACE NAME
                                     one small batch Job without a queue as JSON on stdout

Deterministic: the same arguments give the same bytes.
"""
import json
import sys


def doc(obj):
    return "---\n" + json.dumps(obj, indent=1) + "\n"


def cluster():
    out = []
    for b in (1, 2):
        flavor = "a100" if b == 1 else "h100"
        for r in (1, 2):
            for n in (1, 2):
                name = f"gpu-b{b}-r{r}-n{n}"
                out.append({
                    "apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": name, "labels": {
                        "kubernetes.io/hostname": name,
                        "cloud.provider.com/topology-block": f"block-{b}",
                        "cloud.provider.com/topology-rack": f"rack-{b}{r}",
                        "gpu.example.com/model": flavor}},
                    "status": {"allocatable": {"cpu": "96", "memory": "1024Gi",
                                               "nvidia.com/gpu": "8", "pods": "110"}}})
                out.append({
                    "apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "NodeResourceTopology",
                    "metadata": {"name": name},
                    "topologyPolicies": ["SingleNUMANodeContainerLevel"],
                    "zones": [{"name": f"node-{z}", "type": "Node", "resources": [
                        {"name": "cpu", "capacity": "48", "allocatable": "48", "available": "48"},
                        {"name": "memory", "capacity": "512Gi", "allocatable": "512Gi", "available": "512Gi"},
                        {"name": "nvidia.com/gpu", "capacity": "4", "allocatable": "4", "available": "4"}]}
                        for z in (0, 1)]})
    out.append({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Topology",
                "metadata": {"name": "default"},
                "spec": {"levels": [{"nodeLabel": "cloud.provider.com/topology-block"},
                                    {"nodeLabel": "cloud.provider.com/topology-rack"},
                                    {"nodeLabel": "kubernetes.io/hostname"}]}})
    for flavor in ("a100", "h100"):
        out.append({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
                    "metadata": {"name": flavor},
                    "spec": {"nodeLabels": {"gpu.example.com/model": flavor}}})
    out.append({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Cohort",
                "metadata": {"name": "org"}, "spec": {}})
    # research: 16 a100 + 8 h100, may borrow 8 more of each; prod: 16 a100 + 24 h100 and
    # lends at most 8 of its h100.
    queues = {
        "research": {"a100": ("16", "8", None), "h100": ("8", "8", None)},
        "prod": {"a100": ("16", None, None), "h100": ("24", None, "8")},
    }
    for cq, flavors in queues.items():
        fl = []
        for flavor, (nominal, borrow, lend) in flavors.items():
            gpu = {"name": "nvidia.com/gpu", "nominalQuota": nominal}
            if borrow:
                gpu["borrowingLimit"] = borrow
            if lend:
                gpu["lendingLimit"] = lend
            fl.append({"name": flavor, "resources": [
                {"name": "cpu", "nominalQuota": "192"}, {"name": "memory", "nominalQuota": "2Ti"}, gpu]})
        out.append({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
                    "metadata": {"name": cq},
                    "spec": {"cohort": "org", "namespaceSelector": {},
                             "preemption": {"withinClusterQueue": "LowerPriority",
                                            "reclaimWithinCohort": "Any"},
                             "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                                                 "flavors": fl}]}})
        out.append({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
                    "metadata": {"name": cq, "namespace": "team-" + cq},
                    "spec": {"clusterQueue": cq}})
    for name, value in (("low", 0), ("high", 1000)):
        out.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                    "metadata": {"name": name}, "value": value})
    out.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                "metadata": {"name": "batch"}, "spec": {"weight": 2, "reclaimable": True}})
    return "".join(doc(o) for o in out)


def pytorch_job(name, namespace, queue, workers, gpus, priority="low", duration="36000s"):
    def replica(n):
        return {"replicas": n, "restartPolicy": "OnFailure", "template": {"spec": {
            "priorityClassName": priority,
            "containers": [{"name": "pytorch", "image": "trainer:latest",
                            "command": ["python3", "-c", "print('step 1')"],
                            "resources": {"requests": {"cpu": "8", "memory": "64Gi",
                                                       "nvidia.com/gpu": str(gpus)}}}]}}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {"kueue.x-k8s.io/queue-name": queue},
                         "annotations": {"sim.muster.dev/duration": duration}},
            "spec": {"pytorchReplicaSpecs": {"Master": replica(1), "Worker": replica(workers)}}}


def batch_job(name, namespace, queue, pods, gpus, priority="low", duration="36000s"):
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {"kueue.x-k8s.io/queue-name": queue},
                         "annotations": {"sim.muster.dev/duration": duration}},
            "spec": {"parallelism": pods, "completions": pods, "template": {"spec": {
                "restartPolicy": "Never", "priorityClassName": priority,
                "containers": [{"name": "main", "image": "worker:latest", "command": ["true"],
                                "resources": {"requests": {"cpu": "4", "memory": "32Gi",
                                                           "nvidia.com/gpu": str(gpus)}}}]}}}}


def jobs():
    out = [
        # research: 16 a100 of its own are used by llm-pretrain (4 pods x 4 GPUs), then
        # it borrows h100 for the sweep (8 own + 4 borrowed).
        pytorch_job("llm-pretrain", "team-research", "research", 3, 4),
        batch_job("sweep-h100", "team-research", "research", 3, 4),
        # prod: eval and serving-canary run on a100; ranking on h100.
        pytorch_job("ranking", "team-prod", "prod", 3, 4),
        batch_job("eval-nightly", "team-prod", "prod", 2, 4),
        batch_job("embeddings", "team-prod", "prod", 1, 2),
        # Waits: more a100 than research can get (16 own + 8 borrowable, all a100 busy).
        pytorch_job("llm-finetune", "team-research", "research", 3, 8, priority="high"),
        batch_job("ablation-1", "team-research", "research", 2, 4),
        batch_job("ablation-2", "team-research", "research", 2, 4),
    ]
    return "".join(doc(o) for o in out)


def main():
    what = sys.argv[1]
    if what == "cluster":
        open(sys.argv[2], "w").write(cluster())
    elif what == "jobs":
        open(sys.argv[2], "w").write(jobs())
    elif what == "job":
        print(json.dumps(pytorch_job(sys.argv[2], "team-prod", "prod", 1, int(sys.argv[3]),
                                     duration="36000s")))
    elif what == "restricted-job":
        job = batch_job(sys.argv[3], sys.argv[2], "", 1, 0)
        del job["metadata"]["labels"]
        job["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
        del job["spec"]["template"]["spec"]["priorityClassName"]
        print(json.dumps(job))
    else:
        sys.exit("usage: make_cluster.py cluster|jobs OUT.yaml | job NAME GPUS | "
                 "restricted-job NAMESPACE NAME")


if __name__ == "__main__":
    main()
