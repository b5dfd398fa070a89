// LimitRanges in the reconciler (both modes read them the same way): a namespace's
// container defaults become part of its jobs' requests, a job outside its bounds
// waits with Kueue's message, and a changed LimitRange requeues the namespace's
// pending jobs with what it now says.
#include <gtest/gtest.h>

#include <string>

#include "control/reconciler_harness.h"
#include "core/resource_name.h"

namespace muster::control {
namespace {

using testing::Bench;
using testing::Condition;
using testing::IndexedJob;
using testing::json;

json LimitRange(const std::string& max_cpu) {
  return {
      {"apiVersion", "v1"},
      {"kind", "LimitRange"},
      {"metadata", {{"name", "limits"}, {"namespace", "ml"}}},
      {"spec", {{"limits", json::array({{{"type", "Container"}, {"max", {{"cpu", max_cpu}}}}})}}}};
}

// A job whose container asks for `cpu` (none when empty) and one GPU per pod.
json JobAsking(const std::string& name, const std::string& cpu) {
  json job = IndexedJob(name, 2, 1);
  json& requests = job["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"];
  if (cpu.empty()) {
    requests.erase("cpu");
  } else {
    requests["cpu"] = cpu;
  }
  return job;
}

std::string ConditionMessage(const json& object, const std::string& type) {
  for (const auto& c : object["status"].value("conditions", json::array())) {
    if (c.value("type", "") == type) return c.value("message", "");
  }
  return "";
}

class ReconcilerLimitRangeTest : public ::testing::TestWithParam<ReconcilerMode> {
 protected:
  ReconcilerLimitRangeTest() : bench_(GetParam()) {}
  int64_t CpuMilliPerPod(const std::string& job) {
    const engine::WorkloadRecord* r = bench_.reconciler->engine()->Find("ml/" + job);
    return r == nullptr ? -1 : r->workload.pod_sets.at(0).requests.Get(kCpu);
  }
  Bench bench_;
};

TEST_P(ReconcilerLimitRangeTest, DefaultsBoundsAndAChangedRange) {
  bench_.Configure(2, 8, 16);
  bench_.Create("limitranges", "ml", LimitRange("2"));
  bench_.Build();
  // No cpu asked for: the range's default (its max, as upstream defaults it).
  bench_.Create("jobs.batch", "ml", JobAsking("plain", ""));
  // Three cores a pod: above the range's max.
  bench_.Create("jobs.batch", "ml", JobAsking("wide", "3"));
  bench_.Steps(2);
  EXPECT_EQ(CpuMilliPerPod("plain"), 2000);
  EXPECT_EQ(Condition(bench_.Workload("plain"), "QuotaReserved"), "True");
  json wide = bench_.Workload("wide");
  EXPECT_EQ(Condition(wide, "QuotaReserved"), "False");
  EXPECT_EQ(ConditionMessage(wide, "QuotaReserved"),
            "didn't satisfy LimitRange constraints: podSets.main.containers[0]: Invalid value: "
            "[]string{\"cpu\"}: requests must not be above the limitRange max");

  // The range widened: the waiting job is looked at again and admitted; the running
  // one keeps what it was admitted with.
  bench_.Replace("limitranges", "ml", LimitRange("4"));
  bench_.Steps(2);
  EXPECT_EQ(Condition(bench_.Workload("wide"), "QuotaReserved"), "True");
  EXPECT_EQ(CpuMilliPerPod("wide"), 3000);
  EXPECT_EQ(CpuMilliPerPod("plain"), 2000);

  // Gone: a new job asks for nothing more than it says.
  bench_.Delete("limitranges", "ml", "limits");
  bench_.Create("jobs.batch", "ml", JobAsking("bare", ""));
  bench_.Steps(2);
  EXPECT_EQ(CpuMilliPerPod("bare"), 0);
}

INSTANTIATE_TEST_SUITE_P(Modes, ReconcilerLimitRangeTest,
                         ::testing::Values(ReconcilerMode::kServe, ReconcilerMode::kCluster),
                         [](const auto& info) {
                           return info.param == ReconcilerMode::kServe ? "Serve" : "Cluster";
                         });

}  // namespace
}  // namespace muster::control
