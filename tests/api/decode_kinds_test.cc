// Per-kind decoding: fields and upstream defaults.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace muster::api {
namespace {

using testing::Decode;
using ::testing::IsEmpty;
using testing::Lines;

Quantity Q(const char* s) { return *Quantity::Parse(s); }

TEST(DecodeNode, CapacityTaintsAndSimAnnotations) {
  auto r = Decode(R"(apiVersion: v1
kind: Node
metadata:
  name: gpu-1
  namespace: ignored
  labels: {kubernetes.io/hostname: gpu-1, rack: "7"}
  annotations:
    sim.muster.dev/fail-at: "1h30m"
    sim.muster.dev/recover-at: "1.5"
spec:
  unschedulable: true
  taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
status:
  capacity: {cpu: "8", nvidia.com/gpu: 8}
  allocatable: {cpu: 7500m, memory: 16Gi, nvidia.com/gpu: 8}
)");
  ASSERT_THAT(Lines(r), IsEmpty());
  ASSERT_EQ(r.manifests.nodes.size(), 1u);
  const auto& n = r.manifests.nodes[0];
  EXPECT_EQ(n.meta.name, "gpu-1");
  EXPECT_EQ(n.meta.namespace_, "");  // cluster-scoped
  EXPECT_EQ(n.meta.labels.at("rack"), "7");
  EXPECT_EQ(n.allocatable.Get(kCpu), 7500);
  EXPECT_EQ(n.allocatable.Get(kMemory), int64_t{16} << 30);
  EXPECT_EQ(n.allocatable.Get(kNvidiaGpu), 8);
  EXPECT_TRUE(n.unschedulable);
  ASSERT_EQ(n.taints.size(), 1u);
  EXPECT_EQ(n.taints[0].effect, model::TaintEffect::kNoSchedule);
  EXPECT_DOUBLE_EQ(*n.sim.fail_at, 5400);
  EXPECT_DOUBLE_EQ(*n.sim.recover_at, 1.5);
  EXPECT_FALSE(n.sim.reclaim_at);
  EXPECT_EQ(n.meta.source.file, "t.yaml");
  EXPECT_EQ(n.meta.source.line, 1);
}

TEST(DecodeNode, NodeResourceTopologyAttributesAndLegacyPolicies) {
  auto r = Decode(R"(apiVersion: topology.node.k8s.io/v1alpha2
kind: NodeResourceTopology
metadata: {name: dgx}
attributes:
- {name: topologyManagerPolicy, value: single-numa-node}
- {name: topologyManagerScope, value: pod}
zones:
- name: node-1
  type: Node
  costs: [{name: node-0, value: 20}, {name: node-1, value: 10}]
  resources:
  - {name: cpu, capacity: "32", allocatable: "30"}
  - {name: nvidia.com/gpu, capacity: "4"}
- {name: socket-0, type: Socket}
---
apiVersion: topology.node.k8s.io/v1alpha2
kind: NodeResourceTopology
metadata: {name: old}
topologyPolicies: ["SingleNUMANodePodLevel"]
zones: []
)");
  ASSERT_THAT(Lines(r), IsEmpty());
  ASSERT_EQ(r.manifests.node_topologies.size(), 2u);
  const auto& t = r.manifests.node_topologies[0];
  EXPECT_EQ(t.policy, model::TopologyManagerPolicy::kSingleNumaNode);
  EXPECT_EQ(t.scope, model::TopologyManagerScope::kPod);
  ASSERT_EQ(t.zones.size(), 1u);  // the Socket zone is not a NUMA node
  EXPECT_EQ(t.zones[0].id, 1);
  EXPECT_EQ(t.zones[0].allocatable.Get(kCpu), 30000);
  EXPECT_EQ(t.zones[0].allocatable.Get(kNvidiaGpu), 4);
  EXPECT_EQ(t.zones[0].costs.at("node-0"), 20);
  EXPECT_EQ(r.manifests.node_topologies[1].policy, model::TopologyManagerPolicy::kSingleNumaNode);
  EXPECT_EQ(r.manifests.node_topologies[1].scope, model::TopologyManagerScope::kPod);
}

TEST(DecodeKueue, ClusterQueueDefaults) {
  auto r = Decode(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  cohort: ml
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: gpu
      resources:
      - {name: cpu, nominalQuota: 64}
      - {name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 4, lendingLimit: "2"}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: gpu}
)");
  ASSERT_THAT(Lines(r), IsEmpty());
  const auto& cq = r.manifests.cluster_queues.at(0);
  EXPECT_EQ(cq.cohort, "ml");
  EXPECT_EQ(cq.queueing_strategy, model::QueueingStrategy::kBestEffortFIFO);
  EXPECT_FALSE(cq.namespace_selector.has_value());  // absent: matches nothing
  EXPECT_EQ(cq.preemption.within_cluster_queue, model::PreemptionPolicy::kNever);
  EXPECT_EQ(cq.preemption.reclaim_within_cohort, model::PreemptionPolicy::kNever);
  EXPECT_EQ(cq.preemption.borrow_within_cohort.policy, model::PreemptionPolicy::kNever);
  EXPECT_EQ(cq.flavor_fungibility.when_can_borrow, model::FungibilityPolicy::kMayStopSearch);
  EXPECT_EQ(cq.flavor_fungibility.when_can_preempt, model::FungibilityPolicy::kTryNextFlavor);
  EXPECT_EQ(cq.fair_sharing.weight_milli, 1000);
  EXPECT_EQ(cq.stop_policy, model::StopPolicy::kNone);
  const auto& rq = cq.resource_groups.at(0).flavors.at(0).resources;
  EXPECT_EQ(rq.at(0).nominal_quota, Q("64"));
  EXPECT_FALSE(rq.at(0).borrowing_limit);
  EXPECT_EQ(*rq.at(1).borrowing_limit, Q("4"));
  EXPECT_EQ(*rq.at(1).lending_limit, Q("2"));
}

TEST(DecodeKueue, ClusterQueueV1beta2Fields) {
  auto r = Decode(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  cohortName: root
  namespaceSelector: {}
  queueingStrategy: StrictFIFO
  stopPolicy: HoldAndDrain
  fairSharing: {weight: 500m}
  preemption:
    withinClusterQueue: LowerOrNewerEqualPriority
    reclaimWithinCohort: Any
    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}
  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: MayStopSearch}
  resourceGroups: []
)");
  ASSERT_THAT(Lines(r), IsEmpty());
  const auto& cq = r.manifests.cluster_queues.at(0);
  EXPECT_EQ(cq.cohort, "root");
  ASSERT_TRUE(cq.namespace_selector.has_value());  // {}: matches every namespace
  EXPECT_TRUE(cq.namespace_selector->match_labels.empty());
  EXPECT_EQ(cq.queueing_strategy, model::QueueingStrategy::kStrictFIFO);
  EXPECT_EQ(cq.stop_policy, model::StopPolicy::kHoldAndDrain);
  EXPECT_EQ(cq.fair_sharing.weight_milli, 500);
  EXPECT_EQ(cq.preemption.within_cluster_queue,
            model::PreemptionPolicy::kLowerOrNewerEqualPriority);
  EXPECT_EQ(cq.preemption.reclaim_within_cohort, model::PreemptionPolicy::kAny);
  EXPECT_EQ(cq.preemption.borrow_within_cohort.policy, model::PreemptionPolicy::kLowerPriority);
  EXPECT_EQ(*cq.preemption.borrow_within_cohort.max_priority_threshold, 100);
  EXPECT_EQ(cq.flavor_fungibility.when_can_borrow, model::FungibilityPolicy::kTryNextFlavor);
  EXPECT_EQ(cq.flavor_fungibility.when_can_preempt, model::FungibilityPolicy::kMayStopSearch);
}

TEST(DecodeKueue, OtherKinds) {
  auto r = Decode(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec: {}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: child}
spec:
  parentName: root
  fairSharing: {weight: "2"}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: f, resources: [{name: cpu, nominalQuota: 10}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: f}
spec:
  nodeLabels: {pool: a}
  nodeTaints: [{key: spot, value: "true", effect: NoExecute}]
  tolerations: [{key: spot, operator: Exists}]
  topologyName: topo
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Topology
metadata: {name: topo}
spec: {levels: [{nodeLabel: rack}, {nodeLabel: kubernetes.io/hostname}]}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: high}
value: 10000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: -5
preemptionPolicy: Never
globalDefault: true
)");
  ASSERT_THAT(Lines(r), IsEmpty());
  EXPECT_EQ(r.manifests.local_queues.at(0).meta.namespace_, "default");
  EXPECT_EQ(r.manifests.local_queues.at(0).cluster_queue, "cq");
  EXPECT_EQ(r.manifests.cohorts.at(0).parent, "root");
  EXPECT_EQ(r.manifests.cohorts.at(0).fair_sharing.weight_milli, 2000);
  EXPECT_EQ(r.manifests.cohorts.at(0).resource_groups.at(0).flavors.at(0).name, "f");
  const auto& rf = r.manifests.resource_flavors.at(0);
  EXPECT_EQ(rf.node_labels.at("pool"), "a");
  EXPECT_EQ(rf.node_taints.at(0).effect, model::TaintEffect::kNoExecute);
  EXPECT_EQ(rf.tolerations.at(0).op, model::TolerationOperator::kExists);
  EXPECT_EQ(rf.topology_name, "topo");
  EXPECT_THAT(r.manifests.topologies.at(0).levels,
              ::testing::ElementsAre("rack", "kubernetes.io/hostname"));
  EXPECT_EQ(r.manifests.workload_priority_classes.at(0).value, 10000);
  const auto& pc = r.manifests.priority_classes.at(0);
  EXPECT_EQ(pc.value, -5);
  EXPECT_TRUE(pc.preemption_never);
  EXPECT_TRUE(pc.global_default);
  // Input order across kinds.
  EXPECT_EQ(r.manifests.local_queues.at(0).meta.order, 0);
  EXPECT_EQ(r.manifests.priority_classes.at(0).meta.order, 6);
}

TEST(DecodeVolcano, QueuePodGroupHyperNode) {
  auto r = Decode(R"(apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: q}
spec:
  capability: {cpu: 10}
  guarantee: {resource: {cpu: 2}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg, namespace: ns}
spec:
  minMember: 4
  minTaskMember: {worker: 3}
  minResources: {nvidia.com/gpu: 4}
  networkTopology: {mode: soft, highestTierAllowed: 2}
---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: s0}
spec:
  tier: 1
  members:
  - {type: Node, selector: {regexMatch: {pattern: "node-[0-3]"}}}
  - {type: Node, selector: {exactMatch: {name: node-9}}}
  - {type: HyperNode, selector: {labelMatch: {matchLabels: {zone: a}}}}
)");
  ASSERT_THAT(Lines(r), IsEmpty());
  const auto& q = r.manifests.volcano_queues.at(0);
  EXPECT_EQ(q.weight, 1);
  EXPECT_TRUE(q.reclaimable);
  EXPECT_TRUE(q.open);
  EXPECT_EQ(q.capability.at("cpu"), Q("10"));
  EXPECT_EQ(q.guarantee.at("cpu"), Q("2"));
  const auto& pg = r.manifests.pod_groups.at(0);
  EXPECT_EQ(pg.min_member, 4);
  EXPECT_EQ(pg.min_task_member.at("worker"), 3);
  EXPECT_EQ(pg.queue, "default");
  EXPECT_EQ(pg.network_topology->mode, model::NetworkTopologyMode::kSoft);
  EXPECT_EQ(*pg.network_topology->highest_tier_allowed, 2);
  const auto& hn = r.manifests.hyper_nodes.at(0);
  ASSERT_EQ(hn.members.size(), 3u);
  EXPECT_EQ(hn.members[0].regex, "node-[0-3]");
  EXPECT_EQ(hn.members[1].exact_name, "node-9");
  EXPECT_EQ(hn.members[2].type, model::HyperNodeMember::Type::kHyperNode);
  EXPECT_EQ(hn.members[2].labels.at("zone"), "a");
}

TEST(DecodeVolcano, JobDefaults) {
  auto r = Decode(R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vj}
spec:
  plugins: {svc: [], env: []}
  policies: [{events: [PodEvicted, PodFailed], action: RestartJob}]
  tasks:
  - replicas: 2
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}
  - name: ps
    replicas: 1
    minAvailable: 0
    policies: [{exitCode: 3, action: AbortJob}]
    template: {spec: {restartPolicy: OnFailure, containers: [{name: c}]}}
)");
  ASSERT_THAT(Lines(r), IsEmpty());
  const auto& j = std::get<model::VolcanoJob>(r.manifests.jobs.at(0));
  EXPECT_EQ(j.meta.namespace_, "default");
  EXPECT_EQ(j.queue, "default");
  EXPECT_EQ(j.max_retry, 3);
  EXPECT_EQ(j.scheduler_name, "volcano");
  EXPECT_EQ(*j.min_available, 2);  // sum of task minAvailable (2 + 0)
  ASSERT_EQ(j.tasks.size(), 2u);
  EXPECT_EQ(j.tasks[0].name, "default0");
  EXPECT_EQ(*j.tasks[0].min_available, 2);
  EXPECT_EQ(j.tasks[0].tmpl.spec.restart_policy, "Always");
  EXPECT_EQ(j.tasks[0].tmpl.spec.termination_grace_period_seconds, 30);
  EXPECT_EQ(j.tasks[1].tmpl.spec.restart_policy, "OnFailure");
  EXPECT_EQ(*j.tasks[1].policies.at(0).exit_code, 3);
  EXPECT_THAT(j.policies.at(0).events, ::testing::ElementsAre("PodEvicted", "PodFailed"));
  EXPECT_EQ(j.plugins.count("svc"), 1u);
}

// Upstream's Job validation: a pod template's restartPolicy defaults to Always, which a
// Job refuses (seed 002's Job omits it).
TEST(DecodeJobs, BatchJobPodsMustNotRestartInPlace) {
  auto r = Decode(R"(apiVersion: batch/v1
kind: Job
metadata: {name: unset}
spec:
  template: {spec: {containers: [{name: c}]}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: always}
spec:
  template: {spec: {restartPolicy: Always, containers: [{name: c}]}}
)");
  EXPECT_THAT(Lines(r), ::testing::ElementsAre(
                            "t.yaml:5: Job default/unset: spec.template.spec.restartPolicy: "
                            "Unsupported value: \"Always\": supported values: "
                            "\"OnFailure\", \"Never\"",
                            "t.yaml:11: Job default/always: spec.template.spec.restartPolicy: "
                            "Unsupported value: \"Always\": supported values: "
                            "\"OnFailure\", \"Never\""));
}

TEST(DecodeJobs, BatchJobDefaults) {
  auto r = Decode(R"(apiVersion: batch/v1
kind: Job
metadata: {name: a, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  template:
    metadata: {annotations: {kueue.x-k8s.io/podset-required-topology: rack}}
    spec: {restartPolicy: Never, containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: b, namespace: ns}
spec:
  parallelism: 3
  completionMode: Indexed
  completions: 6
  suspend: true
  backoffLimit: 0
  template: {spec: {restartPolicy: OnFailure, containers: [{name: c}]}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: c}
spec:
  parallelism: 4
  template: {spec: {restartPolicy: Never, containers: [{name: c}]}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
)");
  ASSERT_THAT(Lines(r), IsEmpty());
  const auto& a = std::get<model::BatchJob>(r.manifests.jobs.at(0));
  EXPECT_EQ(a.spec.parallelism, 1);
  EXPECT_EQ(*a.spec.completions, 1);
  EXPECT_EQ(a.spec.backoff_limit, 6);
  EXPECT_EQ(a.spec.completion_mode, model::CompletionMode::kNonIndexed);
  EXPECT_EQ(a.spec.tmpl.spec.restart_policy, "Never");
  EXPECT_EQ(a.spec.tmpl.annotations.at("kueue.x-k8s.io/podset-required-topology"), "rack");
  EXPECT_EQ(a.spec.tmpl.spec.containers.at(0).limits.at("nvidia.com/gpu"), Q("1"));
  const auto& b = std::get<model::BatchJob>(r.manifests.jobs.at(1));
  EXPECT_EQ(b.meta.namespace_, "ns");
  EXPECT_EQ(b.spec.parallelism, 3);
  EXPECT_EQ(*b.spec.completions, 6);
  EXPECT_EQ(b.spec.completion_mode, model::CompletionMode::kIndexed);
  EXPECT_TRUE(b.spec.suspend);
  EXPECT_EQ(b.spec.backoff_limit, 0);
  const auto& c = std::get<model::BatchJob>(r.manifests.jobs.at(2));
  EXPECT_EQ(c.spec.parallelism, 4);
  EXPECT_FALSE(c.spec.completions);  // work-queue job
}

TEST(DecodeJobs, KubeflowJobs) {
  auto r = Decode(R"(apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pt}
spec:
  elasticPolicy: {minReplicas: 1, maxReplicas: 4, rdzvBackend: c10d}
  runPolicy: {backoffLimit: 2, schedulingPolicy: {minAvailable: 2}}
  pytorchReplicaSpecs:
    Master:
      template: {spec: {containers: [{name: pytorch}]}}
    worker:
      replicas: 3
      restartPolicy: ExitCode
      template: {spec: {containers: [{name: pytorch}]}}
---
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: tf}
spec:
  tfReplicaSpecs:
    PS: {replicas: 2, template: {spec: {containers: [{name: tensorflow}]}}}
    Worker: {replicas: 4, template: {spec: {containers: [{name: tensorflow}]}}}
---
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: mpi}
spec:
  slotsPerWorker: 8
  launcherCreationPolicy: WaitForWorkersReady
  mpiReplicaSpecs:
    Launcher: {template: {spec: {containers: [{name: l}]}}}
    Worker: {replicas: 2, template: {spec: {containers: [{name: w}]}}}
)");
  ASSERT_THAT(Lines(r), IsEmpty());
  const auto& pt = std::get<model::KubeflowJob>(r.manifests.jobs.at(0));
  EXPECT_EQ(pt.meta.kind, "PyTorchJob");
  ASSERT_EQ(pt.replica_specs.size(), 2u);
  EXPECT_EQ(pt.replica_specs[0].type, "Master");
  EXPECT_EQ(pt.replica_specs[0].replicas, 1);
  EXPECT_EQ(pt.replica_specs[0].restart_policy, "OnFailure");
  EXPECT_EQ(pt.replica_specs[1].type, "Worker");
  EXPECT_EQ(pt.replica_specs[1].replicas, 3);
  EXPECT_EQ(pt.replica_specs[1].restart_policy, "ExitCode");
  EXPECT_EQ(pt.replica_specs[1].tmpl.spec.restart_policy, "Never");
  EXPECT_EQ(*pt.elastic_policy->min_replicas, 1);
  EXPECT_EQ(*pt.run_policy.backoff_limit, 2);
  EXPECT_EQ(*pt.run_policy.scheduling_policy->min_available, 2);
  const auto& tf = std::get<model::KubeflowJob>(r.manifests.jobs.at(1));
  EXPECT_EQ(tf.replica_specs.at(0).type, "PS");
  EXPECT_EQ(tf.replica_specs.at(0).restart_policy, "Never");
  const auto& mpi = std::get<model::KubeflowJob>(r.manifests.jobs.at(2));
  EXPECT_EQ(mpi.slots_per_worker, 8);
  EXPECT_EQ(mpi.mpi_implementation, "OpenMPI");
  EXPECT_TRUE(mpi.launcher_waits_for_workers);
  EXPECT_EQ(mpi.replica_specs.at(0).type, "Launcher");
  EXPECT_EQ(mpi.replica_specs.at(0).replicas, 1);
}

TEST(DecodeJobs, JobSet) {
  auto r = Decode(R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  successPolicy: {operator: Any, targetReplicatedJobs: [workers]}
  failurePolicy: {maxRestarts: 2}
  startupPolicy: {startupPolicyOrder: InOrder}
  replicatedJobs:
  - name: leader
    template: {spec: {template: {spec: {containers: [{name: c}]}}}}
  - name: workers
    replicas: 2
    template:
      metadata: {labels: {x: y}}
      spec:
        parallelism: 4
        completions: 4
        template: {spec: {restartPolicy: Never, containers: [{name: c}]}}
)");
  ASSERT_THAT(Lines(r), IsEmpty());
  const auto& js = std::get<model::JobSet>(r.manifests.jobs.at(0));
  ASSERT_EQ(js.replicated_jobs.size(), 2u);
  EXPECT_EQ(js.replicated_jobs[0].replicas, 1);
  EXPECT_EQ(js.replicated_jobs[0].tmpl.completion_mode, model::CompletionMode::kIndexed);
  EXPECT_EQ(js.replicated_jobs[0].tmpl.tmpl.spec.restart_policy, "OnFailure");
  EXPECT_EQ(js.replicated_jobs[1].replicas, 2);
  EXPECT_EQ(js.replicated_jobs[1].tmpl.parallelism, 4);
  EXPECT_EQ(js.replicated_jobs[1].tmpl.tmpl.spec.restart_policy, "Never");
  EXPECT_EQ(js.replicated_jobs[1].template_labels.at("x"), "y");
  EXPECT_EQ(js.success_policy.op, "Any");
  EXPECT_EQ(js.failure_policy.max_restarts, 2);
  EXPECT_EQ(js.startup_policy_order, "InOrder");
}

TEST(DecodeConfig, KueueAndMusterConfiguration) {
  auto r = Decode(R"(apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
fairSharing: {enable: true, preemptionStrategies: [LessThanInitialShare]}
waitForPodsReady:
  enable: true
  timeout: 10m
  requeuingStrategy: {timestamp: Creation, backoffLimitCount: 5, backoffMaxSeconds: 600}
---
apiVersion: muster.dev/v1alpha1
kind: SchedulerConfiguration
metadata: {name: cfg}
scoringPolicy: GpuPacking
binpackWeights: {nvidia.com/gpu: 10, cpu: 1}
reservationAfter: 15m
quotaOnlyAdmission: true
maxAdmissionsPerQueuePerCycle: 4
)");
  ASSERT_THAT(Lines(r), IsEmpty());
  const auto& k = *r.manifests.kueue_config;
  EXPECT_TRUE(k.fair_sharing.enable);
  EXPECT_EQ(k.fair_sharing.preemption_strategies.size(), 1u);
  EXPECT_TRUE(k.wait_for_pods_ready.enable);
  EXPECT_TRUE(k.wait_for_pods_ready.block_admission);
  EXPECT_DOUBLE_EQ(k.wait_for_pods_ready.timeout_seconds, 600);
  EXPECT_EQ(k.wait_for_pods_ready.requeuing_timestamp, "Creation");
  EXPECT_EQ(*k.wait_for_pods_ready.backoff_limit_count, 5);
  EXPECT_DOUBLE_EQ(k.wait_for_pods_ready.backoff_base_seconds, 60);  // Kueue's default
  EXPECT_DOUBLE_EQ(k.wait_for_pods_ready.backoff_max_seconds, 600);
  const auto& s = *r.manifests.scheduler_config;
  EXPECT_EQ(s.scoring, model::ScoringPolicy::kGpuPacking);
  EXPECT_EQ(s.binpack_weights.at("nvidia.com/gpu"), 10);
  EXPECT_DOUBLE_EQ(*s.reservation_after_seconds, 900);
  EXPECT_TRUE(s.quota_only_admission);
  EXPECT_EQ(s.max_admissions_per_queue_per_cycle, 4);
}

TEST(DecodeFormats, JsonInput) {
  auto r = Decode(R"({"apiVersion": "v1", "kind": "Node",
  "metadata": {"name": "j1"},
  "status": {"allocatable": {"cpu": "2", "nvidia.com/gpu": 1}}})");
  ASSERT_THAT(Lines(r), IsEmpty());
  EXPECT_EQ(r.manifests.nodes.at(0).allocatable.Get(kNvidiaGpu), 1);
}

}  // namespace
}  // namespace muster::api
