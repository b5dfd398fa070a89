// WithFlavorInjection (engine/flavor_injection.h): Kueue's injection of the assigned
// flavors' node labels and tolerations into each pod set's template.
#include "engine/flavor_injection.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace muster::engine {
namespace {

model::Toleration SpotToleration() {
  model::Toleration t;
  t.key = "cloud.google.com/gke-spot";
  t.op = model::TolerationOperator::kEqual;
  t.value = "true";
  t.effect = model::TaintEffect::kNoSchedule;
  return t;
}

std::map<std::string, model::ResourceFlavor> Flavors() {
  std::map<std::string, model::ResourceFlavor> out;
  model::ResourceFlavor a100;
  a100.meta.name = "gpu-a100";
  a100.node_labels["cloud.google.com/gke-accelerator"] = "nvidia-tesla-a100";
  out["gpu-a100"] = a100;
  model::ResourceFlavor spot;
  spot.meta.name = "gpu-t4-spot";
  spot.node_labels["cloud.google.com/gke-accelerator"] = "nvidia-tesla-t4";
  spot.node_labels["cloud.google.com/gke-provisioning"] = "spot";
  spot.tolerations.push_back(SpotToleration());
  out["gpu-t4-spot"] = spot;
  model::ResourceFlavor cpu;
  cpu.meta.name = "cpu";
  cpu.node_labels["pool"] = "cpu";
  out["cpu"] = cpu;
  return out;
}

model::Workload TwoPodSets() {
  model::Workload w;
  w.key = "ml/train";
  for (const char* name : {"master", "worker"}) {
    model::PodSet ps;
    ps.name = name;
    ps.count = 1;
    ps.tmpl.spec.node_selector["team"] = "ml";
    w.pod_sets.push_back(ps);
  }
  return w;
}

admission::PodSetAssignment Assigned(const std::string& pod_set,
                                     std::map<std::string, std::string> flavors) {
  admission::PodSetAssignment a;
  a.pod_set = pod_set;
  a.count = 1;
  for (const auto& [resource, flavor] : flavors) a.flavors[resource] = flavor;
  return a;
}

TEST(FlavorInjectionTest, EachPodSetGetsItsOwnFlavorsLabelsAndTolerations) {
  admission::Assignment assignment;
  assignment.pod_sets.push_back(Assigned("master", {{"nvidia.com/gpu", "gpu-a100"}}));
  assignment.pod_sets.push_back(
      Assigned("worker", {{"cpu", "cpu"}, {"nvidia.com/gpu", "gpu-t4-spot"}}));
  model::Workload in = TwoPodSets();
  in.pod_sets[1].tmpl.spec.tolerations.push_back(SpotToleration());  // has it already

  model::Workload out = WithFlavorInjection(in, assignment, Flavors());

  const model::PodSpec& master = out.pod_sets[0].tmpl.spec;
  EXPECT_EQ(master.node_selector,
            (model::StringMap{{"cloud.google.com/gke-accelerator", "nvidia-tesla-a100"},
                              {"team", "ml"}}));
  EXPECT_TRUE(master.tolerations.empty());
  const model::PodSpec& worker = out.pod_sets[1].tmpl.spec;
  EXPECT_EQ(worker.node_selector,
            (model::StringMap{{"cloud.google.com/gke-accelerator", "nvidia-tesla-t4"},
                              {"cloud.google.com/gke-provisioning", "spot"},
                              {"pool", "cpu"},
                              {"team", "ml"}}));
  ASSERT_EQ(worker.tolerations.size(), 1u);  // appended once, not twice
  EXPECT_EQ(worker.tolerations[0], SpotToleration());
  // The input is left as it was.
  EXPECT_EQ(in.pod_sets[0].tmpl.spec.node_selector.size(), 1u);
}

TEST(FlavorInjectionTest, UnknownFlavorsAndUnassignedPodSetsAreLeftAlone) {
  admission::Assignment assignment;
  assignment.pod_sets.push_back(Assigned("master", {{"nvidia.com/gpu", "no-such-flavor"}}));
  model::Workload out = WithFlavorInjection(TwoPodSets(), assignment, Flavors());
  for (const model::PodSet& ps : out.pod_sets) {
    EXPECT_EQ(ps.tmpl.spec.node_selector, (model::StringMap{{"team", "ml"}})) << ps.name;
    EXPECT_TRUE(ps.tmpl.spec.tolerations.empty()) << ps.name;
  }
}

}  // namespace
}  // namespace muster::engine
