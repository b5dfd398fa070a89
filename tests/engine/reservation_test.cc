// Reservations for starving gangs (engine/reservations.h), driven through the
// engine with a hand-moved clock: a 32-GPU gang on 4 x 8 GPUs that small 1-GPU jobs
// would otherwise keep from starting, backfill that ends before the gang's earliest
// start, and the ways a reservation ends.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "engine/engine.h"
#include "engine/reservations.h"
#include "engine/scenario.h"
#include "workloads/keys.h"

namespace muster::engine {
namespace {

using testing::AddQueues;
using testing::MakeJob;
using testing::MakeNode;
using testing::ManualClock;
using testing::Number;

// A 1-pod job with `gpus` GPUs and, when given, a declared duration.
model::BatchJob Job(const std::string& name, int pods, int gpus,
                    std::optional<int> duration = std::nullopt,
                    const std::string& priority_class = "") {
  model::BatchJob job = MakeJob(name, pods, gpus, "lq", priority_class);
  if (duration) {
    job.meta.annotations[std::string(workloads::kDurationAnnotation)] = std::to_string(*duration);
  }
  return job;
}

class ReservationTest : public ::testing::Test {
 protected:
  // Four 8-GPU nodes; quota far above the cluster so only nodes can be short.
  void Cluster(std::optional<double> reservation_after, int nodes = 4) {
    AddQueues(manifests_, 1000);
    for (int i = 1; i <= nodes; ++i) {
      manifests_.nodes.push_back(MakeNode("gpu-" + std::to_string(i), 8));
    }
    model::SchedulerConfiguration config;
    config.reservation_after_seconds = reservation_after;
    manifests_.scheduler_config = config;
  }
  void Build() {
    Number(manifests_);
    EngineOptions options;
    options.check_invariants = true;
    auto engine = Engine::Create(manifests_, clock_, options);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
  }
  void At(Time t) { clock_.Set(t); }
  void Submit(const std::string& name) { ASSERT_TRUE(engine_->Submit("ml/" + name).ok()) << name; }
  void Finish(const std::string& name) { ASSERT_TRUE(engine_->Succeed("ml/" + name).ok()) << name; }
  void Cycle() {
    Status st = engine_->RunCycle();
    ASSERT_TRUE(st.ok()) << st.ToString() << "\n" << engine_->log().ToString();
  }
  Phase PhaseOf(const std::string& name) { return engine_->Find("ml/" + name)->phase; }
  std::vector<std::string> Logged(const std::string& action) {
    std::vector<std::string> out;
    for (const auto& e : engine_->log().entries()) {
      if (e.action == action) out.push_back(e.workload + " " + e.reason);
    }
    return out;
  }
  const LogEntry* LastPending(const std::string& key) {
    const LogEntry* last = nullptr;
    for (const auto& e : engine_->log().entries()) {
      if (e.workload == key && e.action == "Pending") last = &e;
    }
    return last;
  }

  // t=0: eight 1-GPU jobs (duration 100) and the 32-GPU gang; t=30 one more
  // (ends at 130). t=60: the gang has waited 60 s; "late" (100 s) and "short"
  // (50 s, ends at 110) arrive. Then the first eight end at 100, short at 110 and
  // mid at 130.
  void StarvationScenario(bool with_short = true) {
    for (int i = 0; i < 8; ++i)
      manifests_.jobs.push_back(Job("early-" + std::to_string(i), 1, 1, 100));
    manifests_.jobs.push_back(Job("big", 4, 8, 300));
    manifests_.jobs.push_back(Job("mid", 1, 1, 100));
    manifests_.jobs.push_back(Job("late", 1, 1, 100));
    if (with_short) manifests_.jobs.push_back(Job("short", 1, 1, 50));
    Build();
    At(0);
    for (int i = 0; i < 8; ++i) Submit("early-" + std::to_string(i));
    Submit("big");
    Cycle();
    At(30);
    Submit("mid");
    Cycle();
    At(60);
    Submit("late");
    if (with_short) Submit("short");
    Cycle();
  }

  model::ManifestSet manifests_;
  ManualClock clock_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(ReservationTest, WithoutReservationsSmallJobsKeepTheGangWaiting) {
  Cluster(std::nullopt);
  StarvationScenario();
  EXPECT_EQ(PhaseOf("big"), Phase::kPending);
  EXPECT_EQ(PhaseOf("late"), Phase::kRunning) << "free GPUs go to whoever fits";
  EXPECT_TRUE(Logged("Reserve").empty());
  At(100);
  for (int i = 0; i < 8; ++i) Finish("early-" + std::to_string(i));
  Cycle();
  EXPECT_EQ(PhaseOf("big"), Phase::kPending) << "mid, late and short still hold GPUs";
}

TEST_F(ReservationTest, StarvingGangReservesNodesAndStartsWhenTheyFree) {
  Cluster(60);
  StarvationScenario();
  EXPECT_EQ(PhaseOf("big"), Phase::kPending);
  ASSERT_EQ(Logged("Reserve"), (std::vector<std::string>{"ml/big Starving"}));
  const auto& res = engine_->log().entries();
  auto reserve =
      std::find_if(res.begin(), res.end(), [](const LogEntry& e) { return e.action == "Reserve"; });
  EXPECT_EQ(reserve->time, 60);
  EXPECT_NE(reserve->message.find("reserved 4 nodes (gpu-1, gpu-2, gpu-3 and 1 more)"),
            std::string::npos)
      << reserve->message;
  // It waits for the nine 1-GPU jobs; the latest (mid) ends at 130.
  EXPECT_NE(reserve->message.find("waiting for 9 running workloads, earliest start t=130"),
            std::string::npos)
      << reserve->message;

  // The small job that would end after the gang's earliest start waits, and says why.
  EXPECT_EQ(PhaseOf("late"), Phase::kPending);
  const LogEntry* late = LastPending("ml/late");
  ASSERT_NE(late, nullptr);
  EXPECT_EQ(late->reason, kReasonNodesReserved);
  EXPECT_NE(late->message.find("fits only on nodes reserved for ml/big"), std::string::npos)
      << late->message;
  EXPECT_NE(late->message.find("its 100s would end after the gang's earliest start t=130"),
            std::string::npos)
      << late->message;
  EXPECT_EQ(engine_->PendingMessage("ml/late"), late->message);
  // The gang's own pending message names its reservation.
  std::string big = engine_->PendingMessage("ml/big");
  EXPECT_NE(big.find("holds a reservation on 4 nodes (gpu-1, gpu-2, gpu-3 and 1 more)"),
            std::string::npos)
      << big;

  // Backfill: "short" ends at 110, before the earliest start, so it runs now on a
  // reserved node.
  EXPECT_EQ(PhaseOf("short"), Phase::kRunning);
  ASSERT_EQ(engine_->Find("ml/short")->plan.pods.size(), 1u);

  At(100);
  for (int i = 0; i < 8; ++i) Finish("early-" + std::to_string(i));
  Cycle();
  EXPECT_EQ(PhaseOf("big"), Phase::kPending);
  EXPECT_EQ(PhaseOf("late"), Phase::kPending) << "freed GPUs stay reserved";
  At(110);
  Finish("short");
  Cycle();
  EXPECT_EQ(PhaseOf("late"), Phase::kPending);
  At(130);
  Finish("mid");
  Cycle();
  EXPECT_EQ(PhaseOf("big"), Phase::kRunning);
  EXPECT_EQ(engine_->Find("ml/big")->start_time, 130.0) << "not delayed by the backfill";
  EXPECT_EQ(Logged("ReservationEnd"), (std::vector<std::string>{"ml/big Admitted"}));
  EXPECT_EQ(PhaseOf("late"), Phase::kPending) << "the gang holds every GPU now";
  At(430);
  Finish("big");
  Cycle();
  EXPECT_EQ(PhaseOf("late"), Phase::kRunning);
}

TEST_F(ReservationTest, BackfillLandsOnAReservedNode) {
  Cluster(60);
  StarvationScenario();
  const WorkloadRecord* backfill = engine_->Find("ml/short");
  ASSERT_EQ(backfill->phase, Phase::kRunning);
  EXPECT_EQ(backfill->start_time, 60.0);
  const auto& res = engine_->reservations().current();
  ASSERT_TRUE(res.has_value());
  EXPECT_EQ(res->holder, "ml/big");
  const auto& nodes = res->nodes;
  EXPECT_TRUE(std::binary_search(nodes.begin(), nodes.end(), backfill->plan.pods[0].node));
  // It ends before the earliest start, which it therefore leaves where it was.
  EXPECT_EQ(res->earliest_start, 130.0);
  EXPECT_TRUE(std::binary_search(res->waits_for.begin(), res->waits_for.end(), "ml/short"));
}

TEST_F(ReservationTest, UnknownDurationsNeverBackfill) {
  Cluster(60);
  for (int i = 0; i < 8; ++i)
    manifests_.jobs.push_back(Job("early-" + std::to_string(i), 1, 1, 100));
  manifests_.jobs.push_back(Job("big", 4, 8, 300));
  manifests_.jobs.push_back(Job("no-duration", 1, 1));
  Build();
  At(0);
  for (int i = 0; i < 8; ++i) Submit("early-" + std::to_string(i));
  Submit("big");
  Cycle();
  At(60);
  Submit("no-duration");
  Cycle();
  EXPECT_EQ(PhaseOf("no-duration"), Phase::kPending);
  const LogEntry* why = LastPending("ml/no-duration");
  ASSERT_NE(why, nullptr);
  EXPECT_EQ(why->reason, kReasonNodesReserved);
  EXPECT_NE(why->message.find("its duration is unknown"), std::string::npos) << why->message;
  At(100);
  for (int i = 0; i < 8; ++i) Finish("early-" + std::to_string(i));
  Cycle();
  EXPECT_EQ(PhaseOf("big"), Phase::kRunning);
}

TEST_F(ReservationTest, HigherPriorityIsNotHeldBack) {
  Cluster(60);
  for (int i = 0; i < 8; ++i) {
    manifests_.jobs.push_back(Job("early-" + std::to_string(i), 1, 1, 100, "low"));
  }
  manifests_.jobs.push_back(Job("big", 4, 8, 300, "low"));
  manifests_.jobs.push_back(Job("urgent", 1, 1, 1000, "high"));
  manifests_.jobs.push_back(Job("same", 1, 1, 1000, "low"));
  Build();
  At(0);
  for (int i = 0; i < 8; ++i) Submit("early-" + std::to_string(i));
  Submit("big");
  Cycle();
  At(60);
  Submit("urgent");
  Submit("same");
  Cycle();
  ASSERT_EQ(Logged("Reserve").size(), 1u);
  EXPECT_EQ(PhaseOf("urgent"), Phase::kRunning);
  EXPECT_EQ(PhaseOf("same"), Phase::kPending) << engine_->log().ToString();
}

TEST_F(ReservationTest, QuotaWaitIsNotStarvation) {
  // Quota of 16 GPUs: the 32-GPU gang waits for quota, never for nodes.
  AddQueues(manifests_, 16);
  for (int i = 1; i <= 4; ++i) manifests_.nodes.push_back(MakeNode("gpu-" + std::to_string(i), 8));
  model::SchedulerConfiguration config;
  config.reservation_after_seconds = 60;
  manifests_.scheduler_config = config;
  manifests_.jobs.push_back(Job("big", 4, 8, 300));
  manifests_.jobs.push_back(Job("small", 1, 1, 100));
  Build();
  At(0);
  Submit("big");
  Cycle();
  At(120);
  Submit("small");
  Cycle();
  EXPECT_TRUE(Logged("Reserve").empty());
  EXPECT_EQ(PhaseOf("small"), Phase::kRunning);
}

TEST_F(ReservationTest, DisablingReservationsReleasesTheNodes) {
  Cluster(60);
  StarvationScenario(/*with_short=*/false);
  ASSERT_EQ(PhaseOf("late"), Phase::kPending);
  At(70);
  model::SchedulerConfiguration config;  // reservationAfter unset
  engine_->ConfigurationChanged(config);
  Cycle();
  EXPECT_EQ(Logged("ReservationEnd"), (std::vector<std::string>{"ml/big Disabled"}));
  EXPECT_EQ(PhaseOf("late"), Phase::kRunning);
}

// Five nodes: the gang reserves the four whose jobs end first; when one of them is
// lost the reservation is planned again on the four that are left.
TEST_F(ReservationTest, LostReservedNodeIsReplanned) {
  Cluster(60, 5);
  // One pinned job per node; gpu-5's ends last, so gpu-1..4 are reserved.
  for (int i = 1; i <= 5; ++i) {
    model::BatchJob job = Job("pin-" + std::to_string(i), 1, 1, i == 5 ? 500 : 100 + i);
    job.spec.tmpl.spec.node_selector["kubernetes.io/hostname"] = "gpu-" + std::to_string(i);
    manifests_.jobs.push_back(job);
  }
  manifests_.jobs.push_back(Job("big", 4, 8, 300));
  manifests_.jobs.push_back(Job("tick", 1, 1, 10000));
  Build();
  At(0);
  for (int i = 1; i <= 5; ++i) Submit("pin-" + std::to_string(i));
  Submit("big");
  Cycle();
  At(60);
  Submit("tick");
  Cycle();
  const auto& before = engine_->reservations().current();
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(before->node_names, (std::vector<std::string>{"gpu-1", "gpu-2", "gpu-3", "gpu-4"}));
  EXPECT_EQ(before->earliest_start, 104.0);
  EXPECT_EQ(engine_->cluster().GetNode(engine_->Find("ml/tick")->plan.pods[0].node).meta.name,
            "gpu-5")
      << "a long job stays off the reserved nodes";

  At(70);
  ASSERT_TRUE(engine_->NodeLost("gpu-2", "test").ok());
  Cycle();
  EXPECT_EQ(Logged("ReservationEnd"), (std::vector<std::string>{"ml/big NodesLost"}));
  EXPECT_EQ(Logged("Reserve"), (std::vector<std::string>{"ml/big Starving", "ml/big Starving"}));
  const auto& after = engine_->reservations().current();
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->holder, "ml/big");
  EXPECT_EQ(after->node_names, (std::vector<std::string>{"gpu-1", "gpu-3", "gpu-4", "gpu-5"}));
  EXPECT_EQ(after->earliest_start, 10060.0) << "now it waits for tick on gpu-5 too";
}

TEST_F(ReservationTest, SameInputSameDecisions) {
  std::string first;
  for (int run = 0; run < 2; ++run) {
    manifests_ = {};
    Cluster(60);
    StarvationScenario();
    At(100);
    for (int i = 0; i < 8; ++i) Finish("early-" + std::to_string(i));
    Cycle();
    At(130);
    Finish("mid");
    Cycle();
    if (run == 0) {
      first = engine_->log().ToString();
    } else {
      EXPECT_EQ(engine_->log().ToString(), first);
    }
  }
  EXPECT_NE(first.find("Reserve"), std::string::npos);
}

}  // namespace
}  // namespace muster::engine
