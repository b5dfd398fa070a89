// The order of a step's writes: the jobs whose gangs a cycle admitted are written
// before the Workloads of jobs that only wait, so an adapter that cuts a step's writes
// short (serve, under a burst of submissions) never holds an admission behind them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "control/reconciler_harness.h"

namespace muster::control {
namespace {

using testing::Bench;
using testing::Condition;
using testing::IndexedJob;

std::vector<std::string> WorkloadWrites(const Bench& bench, size_t from) {
  std::vector<std::string> out;
  for (size_t i = from; i < bench.sink.log.size(); ++i) {
    if (bench.sink.log[i].rfind("workload ", 0) == 0) out.push_back(bench.sink.log[i]);
  }
  return out;
}

TEST(ReconcilerWriteOrderTest, AdmissionsGoBeforeTheJobsThatWait) {
  Bench bench(ReconcilerMode::kServe);
  bench.Configure(1, 8, 8);
  bench.Build();
  // Ten jobs that can never fit (16 GPUs) sort before the one that does.
  for (int i = 0; i < 10; ++i)
    bench.Create("jobs.batch", "ml", IndexedJob("a" + std::to_string(i), 1, 16));
  bench.Create("jobs.batch", "ml", IndexedJob("z", 1, 8));
  bench.reconciler->Decide();
  const size_t from = bench.sink.log.size();

  // Admissions only: the admitted job alone, and more is left.
  Reconciler::StepResult part = bench.reconciler->Write(32, /*urgent_only=*/true);
  EXPECT_TRUE(part.more);
  ASSERT_EQ(WorkloadWrites(bench, from).size(), 1u);
  EXPECT_EQ(WorkloadWrites(bench, from)[0], "workload workloads.kueue.x-k8s.io ml/job-z");
  EXPECT_FALSE(bench.reconciler->UrgentWritesLeft());

  // The rest in key order on the next calls.
  part = bench.reconciler->Write(4);
  EXPECT_TRUE(part.more);
  std::vector<std::string> writes = WorkloadWrites(bench, from);
  ASSERT_EQ(writes.size(), 5u);
  EXPECT_EQ(writes[1], "workload workloads.kueue.x-k8s.io ml/job-a0");
  while (bench.reconciler->Write(4).more) {
  }
  EXPECT_EQ(WorkloadWrites(bench, from).size(), 11u);
  EXPECT_EQ(Condition(bench.Workload("z"), "Admitted"), "True");
  EXPECT_EQ(Condition(bench.Workload("a9"), "QuotaReserved"), "False");
}

TEST(ReconcilerWriteOrderTest, AnAdmissionDuringAnUnfinishedRoundGoesFirst) {
  Bench bench(ReconcilerMode::kServe);
  bench.Configure(1, 8, 16);
  bench.Build();
  for (int i = 0; i < 10; ++i)
    bench.Create("jobs.batch", "ml", IndexedJob("a" + std::to_string(i), 1, 16));
  bench.reconciler->Decide();
  bench.reconciler->Write(2);  // two of the ten written; eight left in the round
  // A job that fits arrives and is admitted by the next cycle.
  bench.Create("jobs.batch", "ml", IndexedJob("b", 1, 8));
  bench.reconciler->Decide();
  const size_t from = bench.sink.log.size();
  bench.reconciler->Write(1);
  std::vector<std::string> writes = WorkloadWrites(bench, from);
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0], "workload workloads.kueue.x-k8s.io ml/job-b");
}

}  // namespace
}  // namespace muster::control
