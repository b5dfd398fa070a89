// `muster bench` scenarios at 1% of their size: the work each one reports is the
// work it did. Timings are never asserted.
#include "sim/bench_scenarios.h"

#include <gtest/gtest.h>

#include <map>

namespace muster::sim {
namespace {

BenchOptions Small() {
  BenchOptions o;
  o.scale = 0.01;
  o.shared_dir = MUSTER_SHARED_DIR;
  return o;
}

std::map<std::string, double> Details(const BenchResult& r) {
  return {r.details.begin(), r.details.end()};
}

TEST(BenchScenariosTest, Placement5kPlacesEveryPodThroughTheEngine) {
  auto r = RunBenchScenario("placement-5k", Small());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->path, "engine");
  EXPECT_EQ(r->work, 500);  // 50 nodes hold 500 one-cpu pods easily
  EXPECT_EQ(Details(*r).at("pending"), 0);
  ASSERT_TRUE(r->p50_ms && r->p99_ms && r->max_ms);
  EXPECT_LE(*r->p50_ms, *r->p99_ms);
  EXPECT_LE(*r->p99_ms, *r->max_ms);
  EXPECT_EQ(r->p99_of, "cycle");
  EXPECT_GT(r->peak_rss_kb, 0);
}

TEST(BenchScenariosTest, Gang10kPlacesEveryGang) {
  auto r = RunBenchScenario("gang-10k", Small());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto d = Details(*r);
  EXPECT_GE(r->work, 1000);
  EXPECT_EQ(d.at("unplaceable"), 0);
  EXPECT_GT(d.at("gangs"), 0);
  ASSERT_TRUE(r->p50_ms && r->p99_ms && r->max_ms);
  EXPECT_LE(*r->p50_ms, *r->p99_ms);
  EXPECT_LE(*r->p99_ms, *r->max_ms);
  EXPECT_EQ(r->p99_of, "gang");
}

TEST(BenchScenariosTest, Admission1kCqAdmitsAndPreempts) {
  auto r = RunBenchScenario("admission-1k-cq", Small());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // 10 queues of 8 GPUs: the first wave alone admits at least 80 GPUs' worth of
  // 1-2 GPU workloads; later waves admit into freed and reclaimed quota.
  EXPECT_GE(r->work, 54);
  EXPECT_LE(r->work, 500 + Details(*r).at("preemptions"));
  // Each admission cycle is timed on its own; every one is part of some wave.
  auto d = Details(*r);
  EXPECT_EQ(r->p99_of, "wave");
  EXPECT_GE(d.at("cycles"), 10);
  EXPECT_LE(d.at("admission_cycle_p50_ms"), d.at("admission_cycle_p99_ms"));
  EXPECT_LE(d.at("admission_cycle_p99_ms"), d.at("admission_cycle_max_ms"));
  EXPECT_LE(d.at("admission_cycle_max_ms"), *r->max_ms);
}

TEST(BenchScenariosTest, KueueBaselineAdmitsEveryWorkload) {
  auto r = RunBenchScenario("kueue-baseline", Small());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // One cohort of 6 queues with 5% of each workload set: 18 + 5 + 3 per queue.
  EXPECT_EQ(r->work, 6 * (18 + 5 + 3));
  auto d = Details(*r);
  EXPECT_EQ(d.at("kueue_avg_admission_s_large"), 16.5);
  EXPECT_GE(d.at("avg_admission_s_small"), 0);
  EXPECT_GT(d.at("usage_pct"), 0);
  EXPECT_LE(d.at("usage_pct"), 500);  // borrowing may exceed nominal, not 5x it
}

TEST(BenchScenariosTest, SimPhillyReplaysTheTracePrefix) {
  auto r = RunBenchScenario("sim-philly", Small());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto d = Details(*r);
  EXPECT_GT(d.at("jobs"), 500);
  // At least one event per submitted job (submission), at most three plus evictions.
  EXPECT_GE(r->work, static_cast<int64_t>(d.at("jobs")));
}

TEST(BenchScenariosTest, UnknownScenarioFails) {
  EXPECT_FALSE(RunBenchScenario("nope", Small()).ok());
  EXPECT_EQ(BenchScenarioNames().size(), 5u);
}

}  // namespace
}  // namespace muster::sim
