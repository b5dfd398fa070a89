// Runtime changes and ordering details: stop policies changed while running,
// LocalQueues created, stopped and deleted,
// Volcano drf job order, and cached per-cohort results giving the same decisions
// as recomputing everything every cycle.
#include <gtest/gtest.h>

#include <map>

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

// The admitter compiles a head's flavor inputs once for its ClusterQueue (the
// resource groups and flavors it may use); a LocalQueue deleted and created again
// for another ClusterQueue moves its waiting workloads there, and their flavors are
// the new queue's.
TEST(LocalQueueEditTest, RecreatedForAnotherClusterQueueAssignsThatQueuesFlavors) {
  model::ManifestSet m;
  m.resource_flavors = {RF("fa"), RF("fb")};
  m.cluster_queues = {CQ("cq", "", {Group({"cpu"}, {Flavor("fa", {{"cpu", "4"}})})}),
                      CQ("other", "", {Group({"cpu"}, {Flavor("fb", {{"cpu", "4"}})})})};
  m.local_queues = {LQ("ns", "lq", "cq")};
  Harness h(m);
  h.Submit(OrderedCpu("ns/a", "4", 1));
  h.Submit(OrderedCpu("ns/b", "2", 2));
  h.Run();
  ASSERT_TRUE(h.Running("ns/a"));
  ASSERT_FALSE(h.Running("ns/b"));  // assigned flavors in cq (fa), found short
  ASSERT_TRUE(h.admitter->RemoveLocalQueue("ns", "lq").ok());
  ASSERT_TRUE(h.admitter->PutLocalQueue(LQ("ns", "lq", "other")).ok());
  h.Run();
  ASSERT_TRUE(h.Running("ns/b"));
  const Decision* admitted = h.LastAdmit("ns/b");
  ASSERT_NE(admitted, nullptr);
  EXPECT_EQ(admitted->queue.cluster_queue, "other");
  ASSERT_EQ(admitted->assignment.pod_sets.size(), 1u);
  EXPECT_EQ(admitted->assignment.pod_sets[0].flavors.at("cpu"), "fb");
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

// A cycle's decisions, compared as the engine reads them: every workload's own
// decisions in order, and the admissions, preemptions and evictions in order. Where
// a workload's pending decision stands among other workloads' differs when a queue
// sleeps through heads never tried (admission_sleep.cc): it is given when the run
// is parked, not at the head's round.
struct CycleDecisions {
  std::map<std::string, std::vector<std::string>> by_workload;
  std::vector<std::string> moves;  // admissions, preemptions, evictions
  bool operator==(const CycleDecisions&) const = default;
};

CycleDecisions Describe(const std::vector<Decision>& ds) {
  CycleDecisions out;
  for (const Decision& d : ds) {
    std::string line = std::to_string(static_cast<int>(d.kind)) + " " + d.workload_key + " " +
                       d.reason + " " + d.message;
    for (const auto& v : d.victims) line += " " + v.workload_key;
    out.by_workload[d.workload_key].push_back(line);
    if (d.kind != Decision::Kind::kPending) out.moves.push_back(line);
  }
  return out;
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
    std::vector<CycleDecisions> log;
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
      log.push_back(Describe(h.Run(step)));
    }
    return log;
  };
  std::vector<CycleDecisions> cached = play(false), fresh = play(true);
  size_t decisions = 0;
  for (const CycleDecisions& c : cached) {
    for (const auto& [key, lines] : c.by_workload) decisions += lines.size();
  }
  EXPECT_GT(decisions, 100u);
  ASSERT_EQ(cached.size(), fresh.size());
  for (size_t i = 0; i < cached.size(); ++i) {
    ASSERT_TRUE(cached[i] == fresh[i]) << "first difference at step " << i;  // the rest follows
  }
}

// A wave of new workloads behind a full queue: the queue sleeps through the run of
// them, each still gets the pending decision its own visit would give, and far fewer
// heads are tried.
TEST(SleepTest, UntriedHeadsGetTheirPendingDecisions) {
  model::ManifestSet m;
  m.resource_flavors = {RF("gpu")};
  for (const char* name : {"a", "b"}) {
    m.cluster_queues.push_back(
        CQ(name, "co", {Group({"nvidia.com/gpu"}, {Flavor("gpu", {R("nvidia.com/gpu", "4")})})}));
    m.local_queues.push_back(LQ("ns", name, name));
  }
  auto play = [&](bool sleep, int64_t* tried) {
    Harness h(m);
    auto& impl = static_cast<AdmitterImpl&>(*h.admitter);
    if (!sleep) impl.StopSleeping();
    std::vector<CycleDecisions> log;
    h.Submit(W("ns/fill-a", "a").PodSet("main", 1, {{"nvidia.com/gpu", "4"}}).Order(0), 0);
    h.Submit(W("ns/fill-b", "b").PodSet("main", 1, {{"nvidia.com/gpu", "4"}}).Order(1), 0);
    log.push_back(Describe(h.Run(0)));
    const int64_t before = impl.heads_tried();
    for (int n = 0; n < 60; ++n) {
      // Two shapes per queue, one after the other: two runs of like heads.
      W w("ns/w" + std::to_string(100 + n), n % 2 ? "a" : "b");
      w.PodSet("main", 1, {{"nvidia.com/gpu", n < 30 ? "1" : "2"}}).Order(10 + n);
      h.Submit(w, 1);
    }
    log.push_back(Describe(h.Run(1)));
    *tried = impl.heads_tried() - before;
    return log;
  };
  int64_t tried_sleeping = 0, tried_all = 0;
  std::vector<CycleDecisions> sleeping = play(true, &tried_sleeping);
  std::vector<CycleDecisions> visiting = play(false, &tried_all);
  ASSERT_EQ(sleeping.size(), visiting.size());
  for (size_t i = 0; i < sleeping.size(); ++i) EXPECT_TRUE(sleeping[i] == visiting[i]) << i;
  // Every new workload got its own QuotaExceeded decision.
  EXPECT_EQ(sleeping[1].by_workload.size(), 60u);
  for (const auto& [key, lines] : sleeping[1].by_workload) {
    ASSERT_EQ(lines.size(), 1u) << key;
    EXPECT_NE(lines[0].find("QuotaExceeded"), std::string::npos) << lines[0];
  }
  EXPECT_EQ(tried_all, 60);
  EXPECT_LE(tried_sleeping, 8);
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
