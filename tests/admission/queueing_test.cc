// Queueing: LocalQueue -> ClusterQueue routing, stop policies, namespace selectors,
// ordering, parking, quota-free workloads, several admissions per queue per cycle.
#include <gtest/gtest.h>

#include "admission/cluster_queue.h"
#include "admission_fixtures.h"

namespace muster::admission::testing {
namespace {

model::ManifestSet OneQueue(const std::string& cpu = "4") {
  model::ManifestSet m;
  m.resource_flavors = {RF("default")};
  m.cluster_queues = {CQ("cq", "", {Group({"cpu"}, {Flavor("default", {{"cpu", cpu.c_str()}})})})};
  m.local_queues = {LQ("ns", "lq", "cq")};
  return m;
}

W Cpu(const std::string& key, const std::string& cpu, int32_t prio = 0,
      const std::string& lq = "lq") {
  W w(key, lq);
  w.PodSet("main", 1, {{"cpu", cpu}}).Priority(prio);
  return w;
}

TEST(QueueingTest, MissingLocalQueue) {
  Harness h(OneQueue());
  h.Submit(Cpu("ns/a", "1", 0, "nope"));
  h.Run();
  EXPECT_EQ(h.Reason("ns/a"), "LocalQueueNotFound: LocalQueue nope doesn't exist");
  EXPECT_TRUE(h.admitter->CheckInvariants().empty());
}

// ClusterQueues are found by name: a second one of a name is refused, and a
// LocalQueue naming one that does not exist holds its workloads.
TEST(QueueingTest, ClusterQueuesByName) {
  auto twice = OneQueue();
  twice.cluster_queues.push_back(twice.cluster_queues[0]);
  auto refused = MakeAdmitter(twice);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "ClusterQueue cq defined twice");

  auto m = OneQueue();
  m.cluster_queues.push_back(
      CQ("other", "", {Group({"cpu"}, {Flavor("default", {{"cpu", "4"}})})}));
  m.local_queues.push_back(LQ("ns", "to-other", "other"));
  m.local_queues.push_back(LQ("ns", "to-none", "none"));
  Harness h(m);
  h.Submit(Cpu("ns/a", "1", 0, "to-other"));
  h.Submit(Cpu("ns/b", "1", 0, "to-none"));
  h.Run();
  EXPECT_TRUE(h.Running("ns/a"));
  EXPECT_EQ(h.admitter->QueueOf("ns/a").cluster_queue, "other");
  EXPECT_EQ(h.Reason("ns/b"), "ClusterQueueNotFound: ClusterQueue none doesn't exist");
}

TEST(QueueingTest, StoppedClusterQueueHolds) {
  auto m = OneQueue();
  m.cluster_queues[0].stop_policy = model::StopPolicy::kHold;
  Harness h(m);
  h.Submit(Cpu("ns/a", "1"));
  h.Run();
  EXPECT_EQ(h.Reason("ns/a"), "ClusterQueueStopped: ClusterQueue cq is stopped");
}

TEST(QueueingTest, StoppedLocalQueueHolds) {
  auto m = OneQueue();
  m.local_queues[0].stop_policy = model::StopPolicy::kHoldAndDrain;
  Harness h(m);
  h.Submit(Cpu("ns/a", "1"));
  h.Run();
  EXPECT_EQ(h.Reason("ns/a"), "LocalQueueStopped: LocalQueue lq is stopped");
}

TEST(QueueingTest, NamespaceSelector) {
  auto m = OneQueue();
  m.cluster_queues[0].namespace_selector = std::nullopt;  // matches no namespace
  Harness h(m);
  h.Submit(Cpu("ns/a", "1"));
  h.Run();
  EXPECT_EQ(h.admitter->PendingReason("ns/a")->reason, "NamespaceMismatch");

  auto m2 = OneQueue();
  m2.cluster_queues[0].namespace_selector =
      model::LabelSelector{{{"kubernetes.io/metadata.name", "ns"}}, {}};
  Harness h2(m2);
  h2.Submit(Cpu("ns/a", "1"));
  h2.Run();
  EXPECT_TRUE(h2.Running("ns/a"));
}

// A Namespace's own labels, as Kueue reads them; without one, only its name label.
TEST(QueueingTest, NamespaceSelectorReadsTheNamespacesLabels) {
  const std::optional<model::LabelSelector> team =
      model::LabelSelector{{{"team", "ml"}}, {{"tier", "NotIn", {"batch"}}}};
  const model::StringMap ml = {{"kubernetes.io/metadata.name", "ns"}, {"team", "ml"}};
  const model::StringMap batch = {{"team", "ml"}, {"tier", "batch"}};
  EXPECT_TRUE(NamespaceMatches(team, "ns", &ml));
  EXPECT_FALSE(NamespaceMatches(team, "ns", &batch));
  EXPECT_FALSE(NamespaceMatches(team, "ns"));
  const std::optional<model::LabelSelector> exists =
      model::LabelSelector{{}, {{"team", "Exists", {}}}};
  EXPECT_TRUE(NamespaceMatches(exists, "ns", &ml));
  EXPECT_FALSE(NamespaceMatches(exists, "team"));
  const std::optional<model::LabelSelector> by_name =
      model::LabelSelector{{{"kubernetes.io/metadata.name", "ns"}}, {}};
  EXPECT_TRUE(NamespaceMatches(by_name, "ns"));
  EXPECT_TRUE(NamespaceMatches(by_name, "ns", &ml));
  EXPECT_FALSE(NamespaceMatches(by_name, "ns", &batch));

  auto m = OneQueue();
  m.cluster_queues[0].namespace_selector = model::LabelSelector{{{"team", "ml"}}, {}};
  model::Namespace ns;
  ns.meta.name = "ns";
  ns.meta.labels = {{"team", "research"}};
  m.namespaces = {ns};
  Harness h(m);
  h.Submit(Cpu("ns/a", "1"));
  h.Run();
  EXPECT_EQ(h.Reason("ns/a"),
            "NamespaceMismatch: Workload namespace ns doesn't match ClusterQueue cq selector");
  // Relabelled: it queues and is admitted; relabelled back, what runs runs on and a
  // new one waits.
  ns.meta.labels = {{"team", "ml"}};
  ASSERT_TRUE(h.admitter->PutNamespace(ns).ok());
  h.Run(1);
  EXPECT_TRUE(h.Running("ns/a"));
  ns.meta.labels = {};
  ASSERT_TRUE(h.admitter->PutNamespace(ns).ok());
  h.Submit(Cpu("ns/b", "1"), 2);
  h.Run(2);
  EXPECT_TRUE(h.Running("ns/a"));
  EXPECT_EQ(h.admitter->PendingReason("ns/b")->reason, "NamespaceMismatch");
  // Deleted: the namespace reads as having its name label only.
  ASSERT_TRUE(h.admitter->RemoveNamespace("ns").ok());
  EXPECT_EQ(h.admitter->RemoveNamespace("ns").code(), StatusCode::kNotFound);
  h.Run(3);
  EXPECT_EQ(h.admitter->PendingReason("ns/b")->reason, "NamespaceMismatch");
  EXPECT_TRUE(h.admitter->CheckInvariants().empty());
}

TEST(QueueingTest, PriorityThenCreationOrder) {
  Harness h(OneQueue("2"));
  h.Submit(Cpu("ns/low-old", "2", 0).Order(1), 0);
  h.Submit(Cpu("ns/high-new", "2", 10).Order(2), 5);
  h.Submit(Cpu("ns/low-new", "2", 0).Order(3), 5);
  h.Run(5);
  EXPECT_TRUE(h.Running("ns/high-new"));
  h.Finish("ns/high-new");
  h.Run(6);
  EXPECT_TRUE(h.Running("ns/low-old"));
  EXPECT_FALSE(h.Running("ns/low-new"));
}

TEST(QueueingTest, SeveralAdmissionsPerQueuePerCycle) {
  Harness h(OneQueue("4"));
  for (int i = 0; i < 6; ++i) h.Submit(Cpu("ns/w" + std::to_string(i), "1").Order(i));
  auto ds = h.admitter->RunCycle(0, h.oracle);
  int admits = 0;
  for (const auto& d : ds) admits += d.kind == Decision::Kind::kAdmit;
  EXPECT_EQ(admits, 4);  // one cycle, quota charged after each
  EXPECT_TRUE(h.admitter->CheckInvariants().empty());
}

TEST(QueueingTest, ParkedUntilCapacityFreed) {
  Harness h(OneQueue("4"));
  h.Submit(Cpu("ns/a", "3").Order(1));
  h.Run();
  h.Submit(Cpu("ns/b", "2").Order(2));
  h.Run();
  EXPECT_FALSE(h.Running("ns/b"));
  int calls = h.oracle.can_place_calls;
  h.Run();  // parked: not even looked at
  EXPECT_EQ(h.oracle.can_place_calls, calls);
  h.Finish("ns/a");
  h.Run();
  EXPECT_TRUE(h.Running("ns/b"));
}

TEST(QueueingTest, QuotaFitsButNodesDoNot) {
  FakeOracle oracle(ResourceList::FromQuantities({{"cpu", Q("2")}}));
  Harness h(OneQueue("4"), oracle);
  h.Submit(Cpu("ns/a", "3"));
  h.Run();
  EXPECT_EQ(h.Reason("ns/a"), "InsufficientResources: insufficient nodes for ns/a");
  h.admitter->NotifyCapacityChanged();
  EXPECT_EQ(h.admitter->RunCycle(0, h.oracle).size(), 0u);  // same reason: nothing new to say
}

// A capacity change outside the quota tree (a preemption elsewhere, a node back)
// unparks every inadmissible workload; a tree where each one would be found short
// of quota again is not retried, which must look the same from outside.
TEST(QueueingTest, QuotaShortTreeReadsUnparkedAfterCapacityChange) {
  Harness h(OneQueue("4"));
  h.Submit(Cpu("ns/a", "3").Order(1));
  h.Submit(Cpu("ns/b", "2").Order(2));
  h.Run();
  ASSERT_FALSE(h.Running("ns/b"));
  auto parked = [&] { return h.admitter->Snapshot().cluster_queues[0].parked; };
  EXPECT_EQ(parked(), std::vector<std::string>{"ns/b"});
  h.admitter->NotifyCapacityChanged();
  EXPECT_TRUE(parked().empty());
  EXPECT_TRUE(h.admitter->RunCycle(0, h.oracle).empty());  // same reason: nothing to say
  EXPECT_EQ(parked(), std::vector<std::string>{"ns/b"});
  EXPECT_EQ(h.admitter->PendingReason("ns/b")->reason, "QuotaExceeded");
  h.admitter->NotifyCapacityChanged();  // now the tree is quiet: ns/b is not retried
  EXPECT_TRUE(parked().empty());
  EXPECT_TRUE(h.admitter->RunCycle(0, h.oracle).empty());
  EXPECT_EQ(parked(), std::vector<std::string>{"ns/b"});
  // A newcomer to the tree stirs it: the next capacity change retries everyone.
  h.Submit(Cpu("ns/c", "1").Order(3));
  h.admitter->NotifyCapacityChanged();
  h.Run();
  EXPECT_TRUE(h.Running("ns/c"));
  EXPECT_FALSE(h.Running("ns/b"));
  // Quota freed in its tree: retried and admitted.
  h.Finish("ns/a");
  h.Run();
  EXPECT_TRUE(h.Running("ns/b"));
  EXPECT_TRUE(h.admitter->CheckInvariants().empty());
}

TEST(QueueingTest, NoQueueWorkloadsNeedOnlyNodes) {
  FakeOracle oracle(ResourceList::FromQuantities({{"cpu", Q("4")}}));
  Harness h(OneQueue("1"), oracle);
  h.Submit(W("ns/free", "").PodSet("main", 2, {{"cpu", "2"}}));
  h.Submit(W("ns/free2", "").PodSet("main", 1, {{"cpu", "2"}}).Order(1));
  h.Run();
  EXPECT_TRUE(h.Running("ns/free"));
  EXPECT_FALSE(h.Running("ns/free2"));
  EXPECT_EQ(h.admitter->QueueOf("ns/free").cluster_queue, "");
  h.Finish("ns/free");
  h.Run();
  EXPECT_TRUE(h.Running("ns/free2"));
}

// RunCycleInto (the engine's, into a vector kept across cycles) decides what
// RunCycle does, in the same order, and replaces whatever the vector held.
TEST(QueueingTest, RunCycleIntoEmptiesItsVectorAndDecidesAsRunCycle) {
  Harness fresh(OneQueue());
  Harness kept(OneQueue());
  for (Harness* h : {&fresh, &kept}) {
    h->Submit(Cpu("ns/a", "2", 0), 0);
    h->Submit(Cpu("ns/b", "2", 0), 1);
    h->Submit(Cpu("ns/c", "3", 0), 2);  // pending: 4 CPUs, 2 + 2 admitted first
  }
  std::vector<Decision> out(3);
  out[0].workload_key = "stale";
  for (int cycle = 0; cycle < 2; ++cycle) {
    std::vector<Decision> want = fresh.admitter->RunCycle(0, fresh.oracle);
    kept.admitter->RunCycleInto(out, 0, kept.oracle);
    ASSERT_EQ(out.size(), want.size()) << "cycle " << cycle;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(out[i].kind, want[i].kind);
      EXPECT_EQ(out[i].workload_key, want[i].workload_key);
      EXPECT_EQ(out[i].reason, want[i].reason);
      EXPECT_EQ(out[i].message, want[i].message);
    }
  }
  EXPECT_TRUE(out.empty()) << "the second cycle changes nothing";
  EXPECT_EQ(kept.admitter->PendingReason("ns/c")->reason, "QuotaExceeded");
}

TEST(QueueingTest, RequeueKeepsOriginalPosition) {
  Harness h(OneQueue("2"));
  h.Submit(Cpu("ns/first", "2").Order(1), 0);
  h.Run(0);
  h.Submit(Cpu("ns/second", "2").Order(2), 10);
  h.Run(10);
  h.oracle.Release("ns/first");
  h.admitter->Requeue("ns/first", 20);
  h.running.erase("ns/first");
  h.Run(20);
  EXPECT_TRUE(h.Running("ns/first"));  // created at 0: ahead of second
  EXPECT_FALSE(h.Running("ns/second"));
}

}  // namespace
}  // namespace muster::admission::testing
