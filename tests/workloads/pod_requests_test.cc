#include "workloads/pod_requests.h"

#include <gtest/gtest.h>

#include "test_jobs.h"

namespace muster::workloads {
namespace {

using testing::List;
using testing::MakeContainer;
using testing::Res;

model::Container Sidecar(std::string name, model::QuantityMap requests) {
  model::Container c = MakeContainer(std::move(name), std::move(requests));
  c.restart_policy = "Always";
  return c;
}

struct RequestsCase {
  const char* name;
  model::PodSpec spec;
  ResourceList want;
};

void PrintTo(const RequestsCase& c, std::ostream* os) { *os << c.name; }

class EffectiveRequests : public ::testing::TestWithParam<RequestsCase> {};

TEST_P(EffectiveRequests, MatchesKubernetes) {
  EXPECT_EQ(EffectivePodRequests(GetParam().spec), GetParam().want)
      << GetParam().name << ": got " << EffectivePodRequests(GetParam().spec).ToString()
      << ", want " << GetParam().want.ToString();
}

std::vector<RequestsCase> RequestsCases() {
  std::vector<RequestsCase> cases;
  {
    RequestsCase c{"containers are summed", {}, List({{"cpu", "1500m"}, {"memory", "3Gi"}})};
    c.spec.containers = {MakeContainer("a", Res({{"cpu", "500m"}, {"memory", "1Gi"}})),
                         MakeContainer("b", Res({{"cpu", "1"}, {"memory", "2Gi"}}))};
    cases.push_back(c);
  }
  {
    // max(sum(app) = 1 cpu / 1Gi, largest init = 2 cpu / 512Mi) per resource.
    RequestsCase c{
        "init containers are a per-resource max", {}, List({{"cpu", "2"}, {"memory", "1Gi"}})};
    c.spec.containers = {MakeContainer("a", Res({{"cpu", "1"}, {"memory", "1Gi"}}))};
    c.spec.init_containers = {MakeContainer("i1", Res({{"cpu", "2"}, {"memory", "512Mi"}})),
                              MakeContainer("i2", Res({{"cpu", "1"}, {"memory", "256Mi"}}))};
    cases.push_back(c);
  }
  {
    // Sidecar s (200m) runs with the app (1 cpu): 1200m. Init i2 after s runs with it:
    // 1 + 0.2 = 1200m as well; init i1 before s: 1100m. Memory: app 1Gi + s 128Mi.
    RequestsCase c{"sidecars add to the app and to later init containers",
                   {},
                   List({{"cpu", "1200m"}, {"memory", "1152Mi"}})};
    c.spec.containers = {MakeContainer("a", Res({{"cpu", "1"}, {"memory", "1Gi"}}))};
    c.spec.init_containers = {MakeContainer("i1", Res({{"cpu", "1100m"}})),
                              Sidecar("s", Res({{"cpu", "200m"}, {"memory", "128Mi"}})),
                              MakeContainer("i2", Res({{"cpu", "1"}}))};
    cases.push_back(c);
  }
  {
    // i2 runs next to sidecar s: 3 + 0.5 = 3.5 cpu beats app 1 + s 0.5 = 1.5.
    RequestsCase c{
        "init container after a sidecar counts the sidecar", {}, List({{"cpu", "3500m"}})};
    c.spec.containers = {MakeContainer("a", Res({{"cpu", "1"}}))};
    c.spec.init_containers = {Sidecar("s", Res({{"cpu", "500m"}})),
                              MakeContainer("i2", Res({{"cpu", "3"}}))};
    cases.push_back(c);
  }
  {
    RequestsCase c{"overhead is added", {}, List({{"cpu", "1250m"}, {"memory", "1088Mi"}})};
    c.spec.containers = {MakeContainer("a", Res({{"cpu", "1"}, {"memory", "1Gi"}}))};
    c.spec.overhead = Res({{"cpu", "250m"}, {"memory", "64Mi"}});
    cases.push_back(c);
  }
  {
    // GPUs are usually given as limits only: the limit is the request.
    RequestsCase c{"limits stand in for missing requests",
                   {},
                   List({{"cpu", "1"}, {"memory", "4Gi"}, {"nvidia.com/gpu", "2"}})};
    c.spec.containers = {MakeContainer(
        "a", Res({{"cpu", "1"}}), Res({{"cpu", "4"}, {"memory", "4Gi"}, {"nvidia.com/gpu", "2"}}))};
    cases.push_back(c);
  }
  {
    RequestsCase c{"an explicit zero request is kept", {}, List({{"memory", "1Gi"}})};
    c.spec.containers = {
        MakeContainer("a", Res({{"cpu", "0"}}), Res({{"cpu", "2"}, {"memory", "1Gi"}}))};
    cases.push_back(c);
  }
  {
    RequestsCase c{"limits-only init container", {}, List({{"cpu", "2"}})};
    c.spec.containers = {MakeContainer("a", Res({{"cpu", "1"}}))};
    c.spec.init_containers = {MakeContainer("i", {}, Res({{"cpu", "2"}}))};
    cases.push_back(c);
  }
  {
    RequestsCase c{"no containers, no requests", {}, ResourceList()};
    cases.push_back(c);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Table, EffectiveRequests, ::testing::ValuesIn(RequestsCases()));

}  // namespace
}  // namespace muster::workloads
