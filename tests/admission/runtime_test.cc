// Runtime changes and ordering details: stop policies changed while running,
// LocalQueues created, stopped and deleted,
// Volcano drf job order, and cached per-cohort results giving the same decisions
// as recomputing everything every cycle.
#include <gtest/gtest.h>

#include "admission/admitter_impl.h"
#include "admission_fixtures.h"

namespace muster::admission::testing {
namespace {

W OrderedCpu(const std::string& key, const std::string& cpu, int64_t order) {
  W w(key, "lq");
  w.PodSet("main", 1, {{"cpu", cpu}}).Order(order);
  return w;
}

struct StopCase {
  std::string name;
  model::StopPolicy policy;
  std::vector<std::string> evicted;  // "key reason"
  bool a_running_while_stopped;
  std::string c_reason;  // the pending one while stopped
};

// The engine enqueues each workload with its record and applies decisions through
// that handle instead of a lookup by key; an admission also names its queues.
TEST(DecisionOwnerTest, DecisionsCarryTheEnqueuedHandleAndAdmissionsTheirQueues) {
  Harness h(CpuQueue("2"));
  int record_a = 0, record_b = 0;  // stand-ins for the engine's records
  h.admitter->Enqueue(std::make_shared<const model::Workload>(OrderedCpu("ns/a", "2", 1)), 0,
                      &record_a);
  h.admitter->Enqueue(std::make_shared<const model::Workload>(OrderedCpu("ns/b", "2", 2)), 0,
                      &record_b);
  h.Submit(OrderedCpu("ns/c", "2", 3));  // no handle
  std::vector<Decision> ds = h.Run();
  int admits = 0, pendings = 0;
  for (const Decision& d : ds) {
    SCOPED_TRACE(d.workload_key);
    void* want = d.workload_key == "ns/a"   ? &record_a
                 : d.workload_key == "ns/b" ? static_cast<void*>(&record_b)
                                            : nullptr;
    EXPECT_EQ(d.owner, want);
    if (d.kind == Decision::Kind::kAdmit) {
      ++admits;
      EXPECT_EQ(d.workload_key, "ns/a");
      EXPECT_EQ(d.queue.local_queue, "lq");
      EXPECT_EQ(d.queue.cluster_queue, "cq");
      EXPECT_FALSE(d.queue.volcano);
    } else if (d.kind == Decision::Kind::kPending) {
      ++pendings;
    }
  }
  EXPECT_EQ(admits, 1);
  EXPECT_EQ(pendings, 2);
}

TEST(StopPolicyTest, UpdateAtRuntime) {
  std::vector<StopCase> cases = {
      {"HoldAndDrain evicts and holds",
       model::StopPolicy::kHoldAndDrain,
       {"ns/a ClusterQueueStopped", "ns/b ClusterQueueStopped"},
       false,
       "ClusterQueueStopped: ClusterQueue cq is stopped"},
      {"Hold keeps admitted ones",
       model::StopPolicy::kHold,
       {},
       true,
       "ClusterQueueStopped: ClusterQueue cq is stopped"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Harness h(CpuQueue("4"));
    h.Submit(OrderedCpu("ns/a", "2", 1));
    h.Submit(OrderedCpu("ns/b", "2", 2));
    h.Submit(OrderedCpu("ns/c", "2", 3));
    h.Run();
    ASSERT_TRUE(h.Running("ns/a") && h.Running("ns/b"));
    ASSERT_TRUE(h.admitter->UpdateStopPolicy("cq", c.policy).ok());
    h.Run();
    std::vector<std::string> evicted;
    for (const auto& [key, evs] : h.evictions) {
      for (const auto& e : evs) evicted.push_back(key + " " + e);
    }
    EXPECT_EQ(evicted, c.evicted);
    EXPECT_EQ(h.Running("ns/a"), c.a_running_while_stopped);
    EXPECT_FALSE(h.Running("ns/c"));
    EXPECT_EQ(h.Reason("ns/c"), c.c_reason);
    // None resumes: the queue admits again in creation order.
    ASSERT_TRUE(h.admitter->UpdateStopPolicy("cq", model::StopPolicy::kNone).ok());
    h.Run();
    EXPECT_TRUE(h.Running("ns/a"));
    EXPECT_TRUE(h.Running("ns/b"));
    EXPECT_EQ(h.Running("ns/c"), false);
    h.Finish("ns/a");
    h.Run();
    EXPECT_TRUE(h.Running("ns/c"));
  }
}

TEST(StopPolicyTest, UnknownQueueIsNotFoundAndChangesNothing) {
  Harness h(CpuQueue("4"));
  h.Submit(OrderedCpu("ns/a", "2", 1));
  EXPECT_EQ(h.admitter->UpdateStopPolicy("nope", model::StopPolicy::kHoldAndDrain).code(),
            StatusCode::kNotFound);
  h.Run();
  EXPECT_TRUE(h.Running("ns/a"));
}

TEST(LocalQueueEditTest, CreatedLateAdmitsWhatWaitedAndStoppedHoldsIt) {
  model::ManifestSet m = CpuQueue("4");
  m.local_queues.clear();
  Harness h(m);
  h.Submit(OrderedCpu("ns/a", "2", 1));
  h.Run();
  EXPECT_FALSE(h.Running("ns/a"));
  EXPECT_EQ(h.Reason("ns/a"), "LocalQueueNotFound: LocalQueue lq doesn't exist");

  ASSERT_TRUE(h.admitter->PutLocalQueue(LQ("ns", "lq", "cq")).ok());
  h.Run();
  EXPECT_TRUE(h.Running("ns/a"));

  // Stopped with Hold: what runs stays, what arrives waits; resumed, it is admitted.
  model::LocalQueue stopped = LQ("ns", "lq", "cq");
  stopped.stop_policy = model::StopPolicy::kHold;
  ASSERT_TRUE(h.admitter->PutLocalQueue(stopped).ok());
  h.Submit(OrderedCpu("ns/b", "2", 2));
  h.Run();
  EXPECT_TRUE(h.Running("ns/a"));
  EXPECT_FALSE(h.Running("ns/b"));
  EXPECT_EQ(h.Reason("ns/b"), "LocalQueueStopped: LocalQueue lq is stopped");
  ASSERT_TRUE(h.admitter->PutLocalQueue(LQ("ns", "lq", "cq")).ok());
  h.Run();
  EXPECT_TRUE(h.Running("ns/b"));

  // spec.clusterQueue is immutable: refused, changing nothing.
  EXPECT_EQ(h.admitter->PutLocalQueue(LQ("ns", "lq", "other")).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_TRUE(h.admitter->CheckInvariants().empty());
}

TEST(LocalQueueEditTest, DeletedKeepsWhatItAdmittedAndHoldsWhatWaits) {
  Harness h(CpuQueue("4"));
  h.Submit(OrderedCpu("ns/a", "4", 1));
  h.Submit(OrderedCpu("ns/b", "2", 2));
  h.Run();
  ASSERT_TRUE(h.Running("ns/a"));
  ASSERT_FALSE(h.Running("ns/b"));
  ASSERT_TRUE(h.admitter->RemoveLocalQueue("ns", "lq").ok());
  EXPECT_EQ(h.admitter->RemoveLocalQueue("ns", "lq").code(), StatusCode::kNotFound);
  h.Finish("ns/a");  // its quota comes back when it finishes, not before
  h.Run();
  EXPECT_FALSE(h.Running("ns/b"));
  EXPECT_EQ(h.Reason("ns/b"), "LocalQueueNotFound: LocalQueue lq doesn't exist");
  EXPECT_TRUE(h.evictions.empty());
  ASSERT_TRUE(h.admitter->PutLocalQueue(LQ("ns", "lq", "cq")).ok());
  h.Run();
  EXPECT_TRUE(h.Running("ns/b"));
  EXPECT_TRUE(h.admitter->CheckInvariants().empty());
}

TEST(LocalQueueEditTest, AStoppedPreemptorLetsGoOfItsNominatedNodes) {
  model::ManifestSet m;
  m.resource_flavors = {RF("default")};
  model::ClusterQueue cq = CQ("cq", "", {Group({"cpu"}, {Flavor("default", {{"cpu", "8"}})})});
  cq.preemption.within_cluster_queue = model::PreemptionPolicy::kLowerPriority;
  m.cluster_queues = {cq};
  m.local_queues = {LQ("ns", "lq", "cq"), LQ("ns", "urgent", "cq")};
  // Quota for both, nodes for one: the preemption is for nodes, which are nominated.
  Harness h(m, FakeOracle(ResourceList::FromQuantities({{"cpu", Q("4")}})));
  h.Submit(OrderedCpu("ns/low", "4", 1));
  h.Run();
  ASSERT_TRUE(h.Running("ns/low"));
  W high("ns/high", "urgent");
  high.PodSet("main", 1, {{"cpu", "4"}}).Order(2).Priority(100);
  h.Submit(high);
  bool preempted = false;
  for (const Decision& d : h.admitter->RunCycle(0, h.oracle)) {
    preempted = preempted || (d.kind == Decision::Kind::kPreempt && d.workload_key == "ns/high");
  }
  ASSERT_TRUE(preempted);

  // Its LocalQueue stops before the eviction lands: held, no cycle visits it, so the
  // next cycle ends its nomination (nodes kept from others for nothing otherwise).
  model::LocalQueue stopped = LQ("ns", "urgent", "cq");
  stopped.stop_policy = model::StopPolicy::kHold;
  ASSERT_TRUE(h.admitter->PutLocalQueue(stopped).ok());
  EXPECT_TRUE(h.oracle.unnominated.empty());
  h.admitter->RunCycle(0, h.oracle);
  EXPECT_EQ(h.oracle.unnominated, std::vector<std::string>{"ns/high"});
  EXPECT_EQ(h.Reason("ns/high"), "LocalQueueStopped: LocalQueue urgent is stopped");
  EXPECT_TRUE(h.admitter->CheckInvariants().empty());
}

TEST(QuotaUpdateTest, RaisedQuotaAdmitsWhatWaitsAndLoweredBelowUseIsRefused) {
  Harness h(CpuQueue("4"));
  h.Submit(OrderedCpu("ns/a", "2", 1));
  h.Submit(OrderedCpu("ns/b", "2", 2));
  h.Submit(OrderedCpu("ns/c", "2", 3));
  h.Run();
  ASSERT_TRUE(h.Running("ns/a") && h.Running("ns/b"));
  ASSERT_FALSE(h.Running("ns/c"));

  auto groups = [](const char* cpu) {
    return std::vector<model::ResourceGroup>{Group({"cpu"}, {Flavor("default", {{"cpu", cpu}})})};
  };
  ASSERT_TRUE(h.admitter->UpdateQuotas("cq", groups("6")).ok());
  h.Run();  // checks the invariants after every cycle
  EXPECT_TRUE(h.Running("ns/c"));

  // Below the 6 in use: refused, nothing changes (the caller rebuilds and evicts).
  EXPECT_EQ(h.admitter->UpdateQuotas("cq", groups("5")).code(), StatusCode::kFailedPrecondition);
  h.Submit(OrderedCpu("ns/d", "1", 4));
  h.Run();
  EXPECT_FALSE(h.Running("ns/d"));
  // A different shape (another flavor, another resource) is not a quota edit.
  EXPECT_EQ(
      h.admitter->UpdateQuotas("cq", {Group({"cpu"}, {Flavor("other", {{"cpu", "9"}})})}).code(),
      StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      h.admitter
          ->UpdateQuotas("cq", {Group({"cpu", "memory"}, {Flavor("default", {{"cpu", "9"}})})})
          .code(),
      StatusCode::kFailedPrecondition);
  EXPECT_EQ(h.admitter->UpdateQuotas("nope", groups("9")).code(), StatusCode::kNotFound);
  // Raised again: the small one fits.
  ASSERT_TRUE(h.admitter->UpdateQuotas("cq", groups("7")).ok());
  h.Run();
  EXPECT_TRUE(h.Running("ns/d"));
}

TEST(QuotaUpdateTest, CohortQuotaLentToItsQueues) {
  model::ManifestSet m;
  m.resource_flavors = {RF("default")};
  m.cluster_queues = {CQ("cq", "pool", {Group({"cpu"}, {Flavor("default", {{"cpu", "2"}})})})};
  model::Cohort pool;
  pool.meta.name = "pool";
  pool.resource_groups = {Group({"cpu"}, {Flavor("default", {{"cpu", "0"}})})};
  m.cohorts = {pool};
  m.local_queues = {LQ("ns", "lq", "cq")};
  Harness h(m);
  h.Submit(OrderedCpu("ns/a", "2", 1));
  h.Submit(OrderedCpu("ns/b", "2", 2));
  h.Run();
  ASSERT_TRUE(h.Running("ns/a"));
  ASSERT_FALSE(h.Running("ns/b"));
  // The cohort's own quota grows: cq borrows it.
  ASSERT_TRUE(
      h.admitter->UpdateQuotas("pool", {Group({"cpu"}, {Flavor("default", {{"cpu", "2"}})})}).ok());
  h.Run();
  EXPECT_TRUE(h.Running("ns/b"));
}

struct DrfCase {
  std::string name;
  int32_t big_priority;
  std::string first;  // the one admitted while the other waits
};

// Volcano's default tiers order jobs by the priority plugin first, then drf
// (lower dominant share first), then creation.
TEST(VolcanoDrfOrderTest, LowerShareFirstAmongEqualPriority) {
  std::vector<DrfCase> cases = {
      {"equal priority: smaller share first, though created later", 0, "v/small"},
      {"higher priority beats a smaller share", 5, "v/big"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    model::ManifestSet m;
    m.volcano_queues = {VQ("q", 1)};
    m.nodes = {GpuNode("n", "8")};
    // Room for one of them at a time.
    Harness h(m, FakeOracle(ResourceList::FromQuantities({{"nvidia.com/gpu", Q("6")}})));
    h.Submit(W("v/big", "")
                 .PodSet("w", 1, {{"nvidia.com/gpu", "6"}})
                 .Volcano("q")
                 .Priority(c.big_priority)
                 .Order(1),
             0);
    h.Submit(W("v/small", "").PodSet("w", 1, {{"nvidia.com/gpu", "1"}}).Volcano("q").Order(2), 5);
    h.Run(5);
    EXPECT_TRUE(h.Running(c.first));
    EXPECT_EQ(h.running.size(), 1u);
  }
}

// Per-cohort caching must not change a single decision: replay the same workload
// stream on two admitters, one of which drops every cache before every cycle (and
// visits every head: no queue sleeps through a run of like heads).
void ExpectSameDecisionsAsRecomputing(model::PreemptionPolicy within) {
  model::ManifestSet m;
  m.resource_flavors = {RF("gpu")};
  for (int co = 0; co < 3; ++co) {
    for (int q = 0; q < 3; ++q) {
      std::string name = "cq" + std::to_string(co) + std::to_string(q);
      auto cq = CQ(name, "co" + std::to_string(co),
                   {Group({"nvidia.com/gpu"}, {Flavor("gpu", {R("nvidia.com/gpu", "4")})})});
      cq.preemption.reclaim_within_cohort = model::PreemptionPolicy::kAny;
      cq.preemption.within_cluster_queue = within;
      m.cluster_queues.push_back(cq);
      m.local_queues.push_back(LQ("ns", name, name));
    }
  }
  auto play = [&](bool invalidate) {
    Harness h(m);
    if (invalidate) {
      h.before_cycle = [&h] { static_cast<AdmitterImpl&>(*h.admitter).DropCaches(); };
      static_cast<AdmitterImpl&>(*h.admitter).StopSharingFlavors();
      static_cast<AdmitterImpl&>(*h.admitter).StopSleeping();
    }
    std::vector<std::string> log;
    uint32_t seed = 7;
    auto next = [&] { return seed = seed * 1103515245u + 12345u, (seed >> 8) % 1000; };
    for (int step = 0; step < 40; ++step) {
      for (int k = 0; k < 4; ++k) {
        int n = step * 4 + k;
        std::string cq = "cq" + std::to_string(next() % 3) + std::to_string(next() % 3);
        W w("ns/w" + std::to_string(n), cq);
        w.PodSet("main", 1, {{"nvidia.com/gpu", std::to_string(1 + next() % 4)}})
            .Priority(static_cast<int32_t>(next() % 3))
            .Order(n);
        h.Submit(w, step);
      }
      if (step % 3 == 2 && !h.running.empty())
        h.Finish(*std::next(h.running.begin(), next() % h.running.size()));
      std::vector<Decision> ds = h.Run(step);
      for (const Decision& d : ds) {
        std::string line = std::to_string(static_cast<int>(d.kind)) + " " + d.workload_key + " " +
                           d.reason + " " + d.message;
        for (const auto& v : d.victims) line += " " + v.workload_key;
        log.push_back(line);
      }
    }
    return log;
  };
  std::vector<std::string> cached = play(false), fresh = play(true);
  EXPECT_GT(cached.size(), 100u);
  EXPECT_EQ(cached.size(), fresh.size());
  for (size_t i = 0; i < cached.size() && i < fresh.size(); ++i) {
    ASSERT_EQ(cached[i], fresh[i]) << "first difference at decision " << i;  // the rest follows
  }
}

TEST(CachingTest, SameDecisionsAsRecomputingEverything) {
  ExpectSameDecisionsAsRecomputing(model::PreemptionPolicy::kLowerPriority);
}

// Here a head's creation decides whether it has candidates: its flavor
// assignment is its own, not shared with the queue's other heads.
TEST(CachingTest, SameDecisionsAsRecomputingWithNewerEqualPriorityVictims) {
  ExpectSameDecisionsAsRecomputing(model::PreemptionPolicy::kLowerOrNewerEqualPriority);
}

}  // namespace
}  // namespace muster::admission::testing
