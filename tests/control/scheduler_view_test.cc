// BuildSchedulerView on a hand-computable cluster: two 4-GPU nodes in two racks (one
// with two NUMA zones), a cohort of two ClusterQueues, and gangs that borrow, wait for
// quota and could preempt.
#include "control/scheduler_view.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "api/decode.h"

namespace muster::control {
namespace {

class FixedClock : public Clock {
 public:
  Time Now() const override { return now; }
  Time now = 1000;
};

// team-a: 4 GPUs nominal, may borrow 4 more; team-b: 4 GPUs nominal, lends all.
// Jobs (1 GPU per pod, 1 cpu per pod), all in team-a:
//   a1: 6 pods, priority 0   -> admitted: 4 of team-a's own + 2 borrowed from team-b
//   a2: 12 pods, priority 10 -> waits: team-a can use 2 more (8 - 6); 10 missing, and
//                               preempting a1 (allowed: lower priority) would not be enough
//   a3: 3 pods, priority 0   -> waits behind a2 (position 1): 1 missing
constexpr const char* kCluster = R"(
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {kubernetes.io/hostname: n1, topology.kubernetes.io/rack: r1}
status:
  allocatable: {cpu: "32", memory: 128Gi, nvidia.com/gpu: "4", pods: "110"}
---
apiVersion: v1
kind: Node
metadata:
  name: n2
  labels: {kubernetes.io/hostname: n2, topology.kubernetes.io/rack: r2}
status:
  allocatable: {cpu: "32", memory: 128Gi, nvidia.com/gpu: "4", pods: "110"}
---
apiVersion: topology.node.k8s.io/v1alpha2
kind: NodeResourceTopology
metadata: {name: n1}
topologyPolicies: ["SingleNUMANodeContainerLevel"]
zones:
- name: node-0
  type: Node
  resources:
  - {name: cpu, capacity: "16", allocatable: "16", available: "16"}
  - {name: nvidia.com/gpu, capacity: "2", allocatable: "2", available: "2"}
- name: node-1
  type: Node
  resources:
  - {name: cpu, capacity: "16", allocatable: "16", available: "16"}
  - {name: nvidia.com/gpu, capacity: "2", allocatable: "2", available: "2"}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: gpu}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-a}
spec:
  cohort: org
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: gpu
      resources:
      - {name: cpu, nominalQuota: "64"}
      - {name: nvidia.com/gpu, nominalQuota: "4", borrowingLimit: "4"}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-b}
spec:
  cohort: org
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: gpu
      resources:
      - {name: cpu, nominalQuota: "64"}
      - {name: nvidia.com/gpu, nominalQuota: "4"}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: a, namespace: ml}
spec: {clusterQueue: team-a}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 10
)";

std::string Job(const std::string& name, int pods, const std::string& priority_class = "") {
  std::string yaml = R"(
---
apiVersion: batch/v1
kind: Job
metadata:
  name: )" + name + R"(
  namespace: ml
  labels: {kueue.x-k8s.io/queue-name: a}
spec:
  parallelism: )" + std::to_string(pods) +
                     R"(
  completions: )" + std::to_string(pods) +
                     R"(
  template:
    spec:
      restartPolicy: Never
)";
  if (!priority_class.empty()) yaml += "      priorityClassName: " + priority_class + "\n";
  yaml += R"(      containers:
      - name: c
        image: x
        resources:
          requests: {cpu: "1", nvidia.com/gpu: "1"}
)";
  return yaml;
}

struct Fixture {
  FixedClock clock;
  model::ManifestSet manifests;
  std::unique_ptr<engine::Engine> engine;

  explicit Fixture(const std::string& yaml) {
    api::DecodeResult decoded;
    api::DecodeText(yaml, "test.yaml", decoded);
    EXPECT_FALSE(decoded.HasErrors());
    manifests = decoded.manifests;
    auto e = engine::Engine::Create(manifests, clock);
    EXPECT_TRUE(e.ok()) << e.status().message();
    engine = std::move(*e);
  }
  void Submit(const std::string& key) { ASSERT_TRUE(engine->Submit(key).ok()) << key; }
  SchedulerView View(const SchedulerView* previous = nullptr) {
    ViewInputs in;
    in.engine = engine.get();
    in.config = &manifests;
    in.now = clock.now;
    return BuildSchedulerView(in, previous);
  }
};

const WorkloadView& FindWorkload(const SchedulerView& v, const std::string& name) {
  for (const auto& w : v.workloads) {
    if (w.name == name) return w;
  }
  ADD_FAILURE() << "no workload " << name;
  static WorkloadView none;
  return none;
}

const QueueView& FindQueue(const SchedulerView& v, const std::string& name) {
  for (const auto& q : v.queues) {
    if (q.name == name) return q;
  }
  ADD_FAILURE() << "no queue " << name;
  static QueueView none;
  return none;
}

const QuotaView& Gpu(const QueueView& q) {
  for (const auto& c : q.quota) {
    if (c.resource == "nvidia.com/gpu") return c;
  }
  ADD_FAILURE() << "no GPU quota in " << q.name;
  static QuotaView none;
  return none;
}

TEST(SchedulerViewTest, QueueTreeQuotaBorrowingAndLending) {
  Fixture f(std::string(kCluster) + Job("a1", 6));
  f.Submit("ml/a1");
  ASSERT_TRUE(f.engine->RunCycle().ok());
  SchedulerView v = f.View();

  ASSERT_EQ(v.queues.size(), 3u);  // sorted by name
  EXPECT_EQ(v.queues[0].name, "clusterqueue.team-a");
  EXPECT_EQ(v.queues[1].name, "clusterqueue.team-b");
  EXPECT_EQ(v.queues[2].name, "cohort.org");
  const QueueView& org = FindQueue(v, "cohort.org");
  EXPECT_EQ(org.kind, "Cohort");
  EXPECT_EQ(org.children, (std::vector<std::string>{"clusterqueue.team-a", "clusterqueue.team-b"}));
  EXPECT_EQ(org.admitted, 1);

  const QuotaView& a = Gpu(FindQueue(v, "clusterqueue.team-a"));
  EXPECT_EQ(a.nominal, 4);
  EXPECT_EQ(a.borrowing_limit, 4);
  EXPECT_EQ(a.used, 6);
  EXPECT_EQ(a.borrowed, 2);  // 6 - 4
  EXPECT_EQ(a.lent, 0);
  EXPECT_EQ(a.available, 2);  // min(4 + 4, 8) - 6
  const QuotaView& b = Gpu(FindQueue(v, "clusterqueue.team-b"));
  EXPECT_EQ(b.used, 0);
  EXPECT_EQ(b.borrowed, 0);
  EXPECT_EQ(b.lent, 2);       // the only lender: all of team-a's borrowing
  EXPECT_EQ(b.available, 2);  // its 4 minus the 2 team-a borrows
  EXPECT_EQ(Gpu(org).used, 6);
  EXPECT_EQ(Gpu(org).nominal, 8);   // the members' 4 + 4 (the cohort has none of its own)
  EXPECT_EQ(Gpu(org).borrowed, 0);  // a root cohort borrows from no one
  EXPECT_GT(FindQueue(v, "clusterqueue.team-a").weighted_share, 0);  // it borrows
  EXPECT_EQ(FindQueue(v, "clusterqueue.team-b").weighted_share, 0);
}

// LocalQueues of one name in two namespaces are two queues: each counts its own
// positions, while the ClusterQueue orders them all.
TEST(SchedulerViewTest, LocalQueuePositionsAreCountedPerNamespace) {
  std::string dev_job = Job("d1", 3);
  dev_job.replace(dev_job.find("namespace: ml"), 13, "namespace: dev");
  Fixture f(std::string(kCluster) + R"(
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: a, namespace: dev}
spec: {clusterQueue: team-a}
)" + Job("a1", 6) +
            Job("a2", 12, "high") + dev_job + Job("a3", 3));
  f.Submit("ml/a1");
  ASSERT_TRUE(f.engine->RunCycle().ok());
  f.Submit("ml/a2");
  f.Submit("dev/d1");
  f.Submit("ml/a3");
  ASSERT_TRUE(f.engine->RunCycle().ok());
  SchedulerView v = f.View();
  const WorkloadView& a2 = FindWorkload(v, "job-a2");
  const WorkloadView& d1 = FindWorkload(v, "job-d1");
  const WorkloadView& a3 = FindWorkload(v, "job-a3");
  EXPECT_EQ(a2.position_in_cluster_queue, 0);
  EXPECT_EQ(a2.position_in_local_queue, 0);
  EXPECT_EQ(d1.local_queue, "a");
  EXPECT_GT(d1.position_in_cluster_queue, 0);
  EXPECT_EQ(d1.position_in_local_queue, 0);  // the only one of dev/a
  EXPECT_GT(a3.position_in_cluster_queue, 0);
  EXPECT_EQ(a3.position_in_local_queue, 1);  // behind a2 in ml/a
}

TEST(SchedulerViewTest, WhyAWorkloadWaitsInNumbersAndItsPosition) {
  Fixture f(std::string(kCluster) + Job("a1", 6) + Job("a2", 12, "high") + Job("a3", 3));
  f.Submit("ml/a1");
  ASSERT_TRUE(f.engine->RunCycle().ok());
  f.clock.now = 1010;
  f.Submit("ml/a2");
  f.Submit("ml/a3");
  ASSERT_TRUE(f.engine->RunCycle().ok());
  SchedulerView v = f.View();

  const WorkloadView& a1 = FindWorkload(v, "job-a1");
  EXPECT_EQ(a1.state, "Running");
  EXPECT_EQ(a1.namespace_, "ml");
  EXPECT_EQ(a1.key, "ml/a1");
  EXPECT_EQ(a1.cluster_queue, "team-a");
  EXPECT_EQ(a1.local_queue, "a");
  EXPECT_EQ(a1.placement.size(), 6u);
  EXPECT_EQ(a1.flavors.at("main/nvidia.com/gpu"), "gpu");

  const WorkloadView& a2 = FindWorkload(v, "job-a2");
  EXPECT_EQ(a2.state, "Pending");
  EXPECT_EQ(a2.priority, 10);
  EXPECT_EQ(a2.cohort, "org");
  EXPECT_EQ(a2.position_in_cluster_queue, 0);  // priority first
  EXPECT_EQ(a2.position_in_local_queue, 0);
  EXPECT_FALSE(a2.message.empty());
  ASSERT_EQ(a2.shortfall.size(), 1u);  // cpu fits: 12 of 64 + lendable
  EXPECT_EQ(a2.shortfall[0].flavor, "gpu");
  EXPECT_EQ(a2.shortfall[0].resource, "nvidia.com/gpu");
  EXPECT_EQ(a2.shortfall[0].requested, 12);
  EXPECT_EQ(a2.shortfall[0].available, 2);
  // a1 has lower priority in the same queue: the policy allows it as a victim.
  ASSERT_EQ(a2.candidates.size(), 1u);
  EXPECT_EQ(a2.candidates[0].workload, "ml/a1");
  EXPECT_EQ(a2.candidates[0].reason, "InClusterQueue");
  EXPECT_FALSE(a2.candidates[0].preempting);

  const WorkloadView& a3 = FindWorkload(v, "job-a3");
  EXPECT_EQ(a3.state, "Pending");
  EXPECT_EQ(a3.position_in_cluster_queue, 1);
  EXPECT_EQ(a3.position_in_local_queue, 1);
  ASSERT_EQ(a3.shortfall.size(), 1u);
  EXPECT_EQ(a3.shortfall[0].requested, 3);
  EXPECT_EQ(a3.shortfall[0].available, 2);
  EXPECT_TRUE(a3.candidates.empty());  // same priority as a1: LowerPriority forbids it

  EXPECT_EQ(FindQueue(v, "clusterqueue.team-a").pending, 2);
  EXPECT_EQ(FindQueue(v, "clusterqueue.team-a").pending_requests.at("nvidia.com/gpu"), 15);
  EXPECT_EQ(FindQueue(v, "cohort.org").pending, 2);
  EXPECT_EQ(v.cluster.workloads.at("Pending"), 2);
  EXPECT_EQ(v.cluster.workloads.at("Running"), 1);
}

TEST(SchedulerViewTest, NodesShowGpusZonesAndHolders) {
  Fixture f(std::string(kCluster) + Job("a1", 6));
  f.Submit("ml/a1");
  ASSERT_TRUE(f.engine->RunCycle().ok());
  SchedulerView v = f.View();

  ASSERT_EQ(v.nodes.size(), 2u);
  const NodeView& n1 = v.nodes[0];
  EXPECT_EQ(n1.name, "n1");
  ASSERT_EQ(n1.topology.size(), 1u);  // no Kueue Topology: the rack label
  EXPECT_EQ(n1.topology[0].first, "topology.kubernetes.io/rack");
  EXPECT_EQ(n1.topology[0].second, "r1");
  ASSERT_EQ(n1.gpus.size(), 4u);
  ASSERT_EQ(n1.zones.size(), 2u);
  EXPECT_EQ(n1.zones[0].gpus, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(n1.gpus[2].numa_zone, 1);
  // 6 one-GPU pods on 8 GPUs: every GPU held is held by a1, and 6 are held.
  int held = 0;
  for (const auto& n : v.nodes) {
    for (const auto& g : n.gpus) {
      if (g.holder.empty()) continue;
      ++held;
      EXPECT_EQ(g.holder, "ml/a1");
      EXPECT_EQ(g.milli_used, 1000);
      EXPECT_TRUE(g.pod.starts_with("main-"));
    }
  }
  EXPECT_EQ(held, 6);
  EXPECT_EQ(v.cluster.used.at("nvidia.com/gpu"), 6);
  EXPECT_EQ(v.cluster.allocatable.at("nvidia.com/gpu"), 8);
  EXPECT_EQ(v.cluster.largest_free_gpus, 2);
}

TEST(SchedulerViewTest, HistoryAndTimelineCarryForwardAndStayBounded) {
  Fixture f(std::string(kCluster) + Job("a1", 2) + Job("a2", 2));
  f.Submit("ml/a1");
  ASSERT_TRUE(f.engine->RunCycle().ok());
  SchedulerView v1 = f.View();
  EXPECT_EQ(v1.generation, 1);
  ASSERT_EQ(v1.cluster.utilization.size(), 1u);
  EXPECT_EQ(v1.cluster.utilization.gpus_used[0], 2);
  size_t admits = 0;
  for (const auto& e : v1.cluster.timeline) admits += e.action == "Admit";
  EXPECT_EQ(admits, 1u);

  // Nothing changed: no new sample, no repeated timeline entries.
  f.clock.now = 1005;
  SchedulerView v2 = f.View(&v1);
  EXPECT_EQ(v2.generation, 2);
  EXPECT_EQ(v2.cluster.utilization.size(), 1u);
  EXPECT_EQ(v2.cluster.timeline, v1.cluster.timeline);

  f.Submit("ml/a2");
  ASSERT_TRUE(f.engine->RunCycle().ok());
  SchedulerView v3 = f.View(&v2);
  ASSERT_EQ(v3.cluster.utilization.size(), 2u);
  EXPECT_EQ(v3.cluster.utilization.time[1], 1005);
  EXPECT_EQ(v3.cluster.utilization.gpus_used[1], 4);
  EXPECT_EQ(v3.cluster.timeline.back().workload, "ml/a2");
  EXPECT_EQ(v3.cluster.timeline.back().cluster_queue, "team-a");
  EXPECT_FALSE(FindWorkload(v3, "job-a2").decisions.empty());

  // The history is thinned, not cut, when it is full: the first sample stays.
  SchedulerView v = v3;
  auto& u = v.cluster.utilization;
  for (int i = 0; u.size() < kMaxUtilizationSamples; ++i) {
    u.time.push_back(2000 + i);
    for (auto* col :
         {&u.gpus_used, &u.gpus_total, &u.cpu_used, &u.cpu_total, &u.running, &u.pending}) {
      col->push_back(i % 2);
    }
  }
  f.clock.now = 9000;
  SchedulerView thinned = f.View(&v);
  const auto& t = thinned.cluster.utilization;
  EXPECT_LT(t.size(), kMaxUtilizationSamples);
  EXPECT_EQ(t.time.front(), 1000);
  EXPECT_EQ(t.time.back(), 9000);
  EXPECT_EQ(t.gpus_used.size(), t.size());
  EXPECT_EQ(t.pending.size(), t.size());
  EXPECT_TRUE(std::is_sorted(t.time.begin(), t.time.end()));
}

// The reconciler drains the engine's log every step and hands each view only the
// decisions since the previous one: a workload keeps its earlier decisions, the timeline
// gains only the new ones (the dashboard's job page showed none once the log was drained).
TEST(SchedulerViewTest, DrainedDecisionsCarryForward) {
  Fixture f(std::string(kCluster) + Job("a1", 2) + Job("a2", 2));
  auto view = [&](std::vector<engine::LogEntry> fresh, const SchedulerView* previous) {
    ViewInputs in;
    in.engine = f.engine.get();
    in.config = &f.manifests;
    in.now = f.clock.now;
    in.new_decisions = &fresh;
    return BuildSchedulerView(in, previous);
  };
  f.Submit("ml/a1");
  ASSERT_TRUE(f.engine->RunCycle().ok());
  SchedulerView v1 = view(f.engine->TakeLog(), nullptr);
  ASSERT_FALSE(FindWorkload(v1, "job-a1").decisions.empty());
  const size_t a1_decisions = FindWorkload(v1, "job-a1").decisions.size();
  const size_t timeline = v1.cluster.timeline.size();

  f.Submit("ml/a2");
  ASSERT_TRUE(f.engine->RunCycle().ok());
  SchedulerView v2 = view(f.engine->TakeLog(), &v1);
  EXPECT_EQ(FindWorkload(v2, "job-a1").decisions.size(), a1_decisions);
  EXPECT_FALSE(FindWorkload(v2, "job-a2").decisions.empty());
  EXPECT_GT(v2.cluster.timeline.size(), timeline);
  EXPECT_EQ(v2.cluster.timeline.back().workload, "ml/a2");

  // Nothing new: nothing repeated.
  SchedulerView v3 = view({}, &v2);
  EXPECT_EQ(v3.cluster.timeline, v2.cluster.timeline);
  EXPECT_EQ(FindWorkload(v3, "job-a2").decisions, FindWorkload(v2, "job-a2").decisions);
}

TEST(SchedulerViewTest, SameStateSameView) {
  Fixture f(std::string(kCluster) + Job("a1", 6) + Job("a2", 4, "high"));
  f.Submit("ml/a1");
  f.Submit("ml/a2");
  ASSERT_TRUE(f.engine->RunCycle().ok());
  SchedulerView x = f.View();
  SchedulerView y = f.View();
  EXPECT_EQ(x.workloads, y.workloads);
  EXPECT_EQ(x.queues, y.queues);
  EXPECT_EQ(x.nodes, y.nodes);
}

TEST(SchedulerViewTest, NoEngineGivesAnEmptyViewWithTheError) {
  ViewInputs in;
  in.now = 5;
  in.engine_error = "ClusterQueue team-a: flavor x not found";
  SchedulerView v = BuildSchedulerView(in, nullptr);
  EXPECT_EQ(v.cluster.engine_error, in.engine_error);
  EXPECT_TRUE(v.workloads.empty());
  EXPECT_TRUE(v.queues.empty());
}

}  // namespace
}  // namespace muster::control
