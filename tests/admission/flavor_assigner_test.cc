// Flavor assignment, table-driven like kueue's flavorassigner tests.
#include "admission/flavor_assigner.h"

#include <gtest/gtest.h>

#include "admission_fixtures.h"

namespace muster::admission::testing {
namespace {

struct AssignCase {
  std::string name;
  model::ClusterQueue cq;
  std::vector<model::ResourceFlavor> flavors;
  std::vector<std::pair<std::string, std::string>> used;  // flavor, gpus already in use
  model::Workload wl;
  FitMode mode;
  std::map<std::string, std::string> want;  // resource -> flavor (pod set 0)
  bool borrows = false;
  std::string message_has;
};

model::ClusterQueue TwoFlavors(model::FlavorFungibility f = {}) {
  auto cq = CQ(
      "cq", "",
      {Group({"cpu", "nvidia.com/gpu"}, {Flavor("a100", {{"cpu", "64"}, {"nvidia.com/gpu", "8"}}),
                                         Flavor("t4", {{"cpu", "64"}, {"nvidia.com/gpu", "8"}})})});
  cq.flavor_fungibility = f;
  return cq;
}

model::ResourceFlavor Tainted(const std::string& name) {
  auto rf = RF(name);
  rf.node_taints.push_back({"spot", "true", model::TaintEffect::kNoSchedule});
  return rf;
}

model::Workload Gpu(const std::string& n, const std::string& node_label = "") {
  W w("ns/" + n, "lq");
  w.PodSet("main", 1, {{"cpu", "1"}, {"nvidia.com/gpu", n}});
  if (!node_label.empty()) w.wl.pod_sets[0].node_selector["gpu"] = node_label;
  return w;
}

void ExpectSameAssignment(const FlavorAssignment& got, const FlavorAssignment& want,
                          const model::Workload& wl, const ClusterQueueSpec& cq,
                          const FlavorCatalog& flavors) {
  EXPECT_EQ(got.mode, want.mode);
  EXPECT_EQ(got.assignment.borrows, want.assignment.borrows);
  ASSERT_EQ(got.assignment.pod_sets.size(), want.assignment.pod_sets.size());
  for (size_t i = 0; i < got.assignment.pod_sets.size(); ++i) {
    const PodSetAssignment& g = got.assignment.pod_sets[i];
    const PodSetAssignment& w = want.assignment.pod_sets[i];
    EXPECT_EQ(g.pod_set, w.pod_set);
    EXPECT_EQ(g.count, w.count);
    EXPECT_TRUE(g.flavors == w.flavors) << "pod set " << i;
  }
  EXPECT_EQ(got.usage, want.usage);
  EXPECT_EQ(got.preempt_frs, want.preempt_frs);
  EXPECT_EQ(got.reason, want.reason);
  EXPECT_EQ(got.Message(wl, cq, flavors), want.Message(wl, cq, flavors));
}

class FlavorAssignerTest : public ::testing::TestWithParam<AssignCase> {};

TEST_P(FlavorAssignerTest, Assigns) {
  const AssignCase& c = GetParam();
  // Build through the admitter's compiler by hand: one tree, one spec.
  QuotaTree tree;
  FlavorCatalog cat;
  for (const auto& f : c.flavors) {
    cat.flavors.push_back(f);
    cat.defined.push_back(true);
  }
  ClusterQueueSpec spec;
  spec.name = c.cq.meta.name;
  spec.node = tree.AddNode(spec.name, true);
  spec.fungibility = c.cq.flavor_fungibility;
  spec.preemption = c.cq.preemption;
  for (const auto& g : c.cq.resource_groups) {
    CompiledResourceGroup cg;
    for (const auto& r : g.covered_resources) cg.covered.push_back(ResourceNames::Intern(r));
    for (const auto& fq : g.flavors) {
      int32_t f = cat.Intern(fq.name);
      cg.flavors.push_back(f);
      for (const auto& rq : fq.resources) {
        ResourceId id = ResourceNames::Intern(rq.name);
        tree.SetQuota(spec.node, tree.InternFr(f, id),
                      {ResourceList::Amount(id, rq.nominal_quota), std::nullopt, std::nullopt});
      }
    }
    spec.groups.push_back(cg);
  }
  tree.Finalize();
  for (const auto& [flavor, gpus] : c.used) {
    tree.AddUsage(spec.node, *tree.FindFr(*cat.Find(flavor), kNvidiaGpu), std::stoll(gpus));
  }
  FlavorAssignment fa = AssignFlavors(c.wl, spec, tree, cat);
  const std::string& message = fa.Message(c.wl, spec, cat);
  EXPECT_EQ(fa.mode, c.mode) << message;
  if (c.mode != FitMode::kNoFit) {
    for (const auto& [r, f] : c.want) EXPECT_EQ(fa.assignment.pod_sets[0].flavors.at(r), f) << r;
    EXPECT_EQ(fa.assignment.borrows, c.borrows);
  }
  if (!c.message_has.empty()) {
    EXPECT_NE(message.find(c.message_has), std::string::npos) << message;
  }
  // The same answer into storage an earlier, larger and failing assignment filled
  // (what a cycle's cached assignments are recomputed into): none of it stays.
  model::Workload other = W("ns/other", "lq")
                              .PodSet("a", 1, {{"cpu", "1"}, {"nvidia.com/gpu", "1"}})
                              .PodSet("b", 2, {{"cpu", "1000"}, {"nvidia.com/gpu", "99"}})
                              .PodSet("c", 1, {{"cpu", "1"}});
  AssignScratch scratch;
  AssignOptions options;
  options.scratch = &scratch;
  FlavorAssignment reused;
  AssignFlavorsInto(reused, other, spec, tree, cat, options);
  ASSERT_EQ(reused.assignment.pod_sets.size(), 3u);
  EXPECT_NE(reused.Message(other, spec, cat), "");  // written, then not kept below
  AssignFlavorsInto(reused, c.wl, spec, tree, cat, options);
  ExpectSameAssignment(reused, fa, c.wl, spec, cat);
}

model::FlavorFungibility PreemptStops() {
  model::FlavorFungibility f;
  f.when_can_preempt = model::FungibilityPolicy::kMayStopSearch;
  return f;
}

INSTANTIATE_TEST_SUITE_P(
    Table, FlavorAssignerTest,
    ::testing::Values(
        AssignCase{"first_flavor_fits",
                   TwoFlavors(),
                   {RF("a100"), RF("t4")},
                   {},
                   Gpu("4"),
                   FitMode::kFit,
                   {{"nvidia.com/gpu", "a100"}, {"cpu", "a100"}},
                   false,
                   ""},
        AssignCase{"falls_back_when_first_is_used",
                   TwoFlavors(),
                   {RF("a100"), RF("t4")},
                   {{"a100", "8"}},
                   Gpu("4"),
                   FitMode::kFit,
                   {{"nvidia.com/gpu", "t4"}},
                   false,
                   ""},
        AssignCase{"preempt_stops_search",
                   TwoFlavors(PreemptStops()),
                   {RF("a100"), RF("t4")},
                   {{"a100", "8"}},
                   Gpu("4"),
                   FitMode::kPreempt,
                   {{"nvidia.com/gpu", "a100"}},
                   false,
                   "insufficient unused quota"},
        AssignCase{
            "too_big_for_any",
            TwoFlavors(),
            {RF("a100"), RF("t4")},
            {},
            Gpu("9"),
            FitMode::kNoFit,
            {},
            false,
            "insufficient quota for nvidia.com/gpu in flavor a100, request 9 > available 8 in "
            "ClusterQueue cq"},
        AssignCase{"taint_skips_flavor",
                   TwoFlavors(),
                   {Tainted("a100"), RF("t4")},
                   {},
                   Gpu("4"),
                   FitMode::kFit,
                   {{"nvidia.com/gpu", "t4"}},
                   false,
                   ""},
        AssignCase{"selector_skips_flavor",
                   TwoFlavors(),
                   {RF("a100", {{"gpu", "a100"}}), RF("t4", {{"gpu", "t4"}})},
                   {},
                   Gpu("4", "t4"),
                   FitMode::kFit,
                   {{"nvidia.com/gpu", "t4"}},
                   false,
                   ""},
        AssignCase{"selector_matches_none",
                   TwoFlavors(),
                   {RF("a100", {{"gpu", "a100"}}), RF("t4", {{"gpu", "t4"}})},
                   {},
                   Gpu("4", "h100"),
                   FitMode::kNoFit,
                   {},
                   false,
                   "flavor a100 doesn't match node affinity"},
        AssignCase{"uncovered_resource",
                   TwoFlavors(),
                   {RF("a100"), RF("t4")},
                   {},
                   W("ns/x", "lq").PodSet("main", 1, {{"cpu", "1"}, {"example.com/fpga", "1"}}),
                   FitMode::kNoFit,
                   {},
                   false,
                   "resource example.com/fpga unavailable in ClusterQueue cq"},
        AssignCase{"zero_request_needs_no_flavor",
                   TwoFlavors(),
                   {RF("a100"), RF("t4")},
                   {},
                   W("ns/x", "lq").PodSet("main", 1, {{"cpu", "1"}, {"example.com/fpga", "0"}}),
                   FitMode::kFit,
                   {{"cpu", "a100"}},
                   false,
                   ""}),
    [](const auto& info) { return info.param.name; });

TEST(FlavorMismatchTest, TolerationAndAffinity) {
  model::PodSet ps;
  auto rf = Tainted("spot");
  EXPECT_EQ(FlavorMismatch(ps, rf), "untolerated taint {spot=true:NoSchedule} in flavor spot");
  ps.tolerations.push_back(
      {"spot", model::TolerationOperator::kExists, "", std::nullopt, std::nullopt});
  EXPECT_EQ(FlavorMismatch(ps, rf), "");
  auto labeled = RF("a", {{"zone", "z1"}});
  model::NodeSelectorTerm t;
  t.match_expressions.push_back({"zone", model::SelectorOperator::kIn, {"z2"}});
  t.match_expressions.push_back(
      {"other", model::SelectorOperator::kIn, {"x"}});  // not a flavor key
  ps.node_affinity.required.push_back(t);
  EXPECT_NE(FlavorMismatch(ps, labeled), "");
  ps.node_affinity.required[0].match_expressions[0].values = {"z1", "z2"};
  EXPECT_EQ(FlavorMismatch(ps, labeled), "");
}

TEST(FlavorAssignerMultiPodSetTest, PodSetsAccumulateOnTheSameFlavor) {
  // Two pod sets of 6 GPUs: the second sees the first's 6 on a100 and moves to t4.
  QuotaTree tree;
  FlavorCatalog cat;
  cat.flavors = {RF("a100"), RF("t4")};
  cat.defined = {true, true};
  ClusterQueueSpec spec;
  spec.name = "cq";
  spec.node = tree.AddNode("cq", true);
  CompiledResourceGroup g;
  g.covered = {kNvidiaGpu};
  g.flavors = {0, 1};
  spec.groups = {g};
  tree.SetQuota(spec.node, tree.InternFr(0, kNvidiaGpu), {8, std::nullopt, std::nullopt});
  tree.SetQuota(spec.node, tree.InternFr(1, kNvidiaGpu), {8, std::nullopt, std::nullopt});
  tree.Finalize();
  model::Workload wl = W("ns/x", "lq")
                           .PodSet("launcher", 1, {{"nvidia.com/gpu", "6"}})
                           .PodSet("worker", 1, {{"nvidia.com/gpu", "6"}});
  FlavorAssignment fa = AssignFlavors(wl, spec, tree, cat);
  ASSERT_EQ(fa.mode, FitMode::kFit);
  EXPECT_EQ(fa.assignment.pod_sets[0].flavors.at("nvidia.com/gpu"), "a100");
  EXPECT_EQ(fa.assignment.pod_sets[1].flavors.at("nvidia.com/gpu"), "t4");
  EXPECT_EQ(fa.usage.size(), 2u);
}

// The message says why each flavor tried was refused, in Kueue's words, and is
// written only when asked for (then kept until the assignment is made again).
TEST(FlavorAssignerMessageTest, TellsEveryRefusal) {
  FlavorCatalog cat;
  cat.flavors = {Tainted("spot"), RF("a100"), RF("t4")};
  cat.defined = {true, true, true};
  QuotaTree tree;
  ClusterQueueSpec spec;
  spec.name = "cq";
  spec.node = tree.AddNode("cq", true);
  CompiledResourceGroup g;
  g.covered = {kNvidiaGpu};
  g.flavors = {0, 1, 2};  // t4 has no quota in the queue
  spec.groups = {g};
  tree.SetQuota(spec.node, tree.InternFr(0, kNvidiaGpu), {8, std::nullopt, std::nullopt});
  tree.SetQuota(spec.node, tree.InternFr(1, kNvidiaGpu), {8, std::nullopt, std::nullopt});
  tree.Finalize();
  tree.AddUsage(spec.node, *tree.FindFr(1, kNvidiaGpu), 6);
  auto message = [&](const model::Workload& wl) {
    FlavorAssignment fa = AssignFlavors(wl, spec, tree, cat);
    return fa.reason + ": " + fa.Message(wl, spec, cat);
  };
  const std::string refused_spot =
      "couldn't assign flavors to pod set main: untolerated taint {spot=true:NoSchedule} in "
      "flavor spot; ";
  EXPECT_EQ(message(W("ns/a", "lq").PodSet("main", 1, {{"nvidia.com/gpu", "3"}})),
            "QuotaExceeded: " + refused_spot +
                "insufficient unused quota for nvidia.com/gpu in flavor a100, request 3 > "
                "available 2 in ClusterQueue cq; insufficient quota for nvidia.com/gpu in flavor "
                "t4, request 3 > available 0 in ClusterQueue cq");
  EXPECT_EQ(message(W("ns/b", "lq").PodSet("main", 3, {{"nvidia.com/gpu", "3"}})),
            "QuotaExceeded: " + refused_spot +
                "insufficient quota for nvidia.com/gpu in flavor a100, request 9 > available 8 in "
                "ClusterQueue cq; insufficient quota for nvidia.com/gpu in flavor t4, request 9 > "
                "available 0 in ClusterQueue cq");
  EXPECT_EQ(message(W("ns/c", "lq").PodSet("main", 1, {{"cpu", "1"}, {"nvidia.com/gpu", "1"}})),
            "NoFit: couldn't assign flavors to pod set main: resource cpu unavailable in "
            "ClusterQueue cq");
  // Fits: no reason, no message.
  EXPECT_EQ(message(W("ns/d", "lq").PodSet("main", 1, {{"nvidia.com/gpu", "2"}})), ": ");
}

// The admitter compiles a workload's flavor inputs once for its ClusterQueue and
// assigns from them into the assignment it keeps, as usage moves. Every usage must
// get what assigning the workload afresh answers, whatever the kept assignment held
// before (here it alternates between workloads whose pod sets take other flavors,
// fail, or ask for a resource the queue does not cover).
TEST(FlavorAssignerCompiledInputsTest, AssigningFromCompiledInputsEqualsAssigningAfresh) {
  FlavorCatalog cat;
  cat.flavors = {Tainted("spot"), RF("a100"), RF("t4"), RF("cpus")};
  cat.defined = {true, true, true, true};
  QuotaTree tree;
  ClusterQueueSpec spec;
  spec.name = "cq";
  spec.node = tree.AddNode("cq", true);
  CompiledResourceGroup gpus, cpus;
  gpus.covered = {kNvidiaGpu};
  gpus.flavors = {0, 1, 2};
  cpus.covered = {ResourceNames::Intern("cpu")};
  cpus.flavors = {3};
  spec.groups = {gpus, cpus};
  const FrId spot = tree.InternFr(0, kNvidiaGpu), a100 = tree.InternFr(1, kNvidiaGpu),
             t4 = tree.InternFr(2, kNvidiaGpu);
  tree.SetQuota(spec.node, spot, {8, std::nullopt, std::nullopt});
  tree.SetQuota(spec.node, a100, {8, std::nullopt, std::nullopt});
  tree.SetQuota(spec.node, t4, {4, std::nullopt, std::nullopt});
  tree.SetQuota(spec.node, tree.InternFr(3, cpus.covered[0]), {4000, std::nullopt, std::nullopt});
  tree.Finalize();
  // Taken in turn, so the kept assignment goes from two pod sets to one with two
  // resources, to one with one, to one that asks for a resource no group covers.
  std::vector<model::Workload> wls = {
      W("ns/two", "lq")
          .PodSet("launcher", 1, {{"nvidia.com/gpu", "3"}})
          .PodSet("worker", 2, {{"nvidia.com/gpu", "2"}}),
      W("ns/both", "lq").PodSet("main", 1, {{"cpu", "1"}, {"nvidia.com/gpu", "5"}}),
      W("ns/one", "lq").PodSet("main", 1, {{"nvidia.com/gpu", "1"}}),
      W("ns/memory", "lq").PodSet("main", 1, {{"cpu", "1"}, {"memory", "1Gi"}}),
  };
  model::Toleration spot_ok;
  spot_ok.key = "spot";
  spot_ok.value = "true";
  wls[1].pod_sets[0].tolerations.push_back(spot_ok);
  wls[2].pod_sets[0].tolerations.push_back(spot_ok);  // spot for its GPU too, as ns/both's
  std::vector<FlavorInputs> inputs(wls.size());
  for (size_t i = 0; i < wls.size(); ++i) CompileFlavorInputs(inputs[i], wls[i], spec, tree, cat);
  FlavorAssignment kept;
  AssignScratch scratch;
  AssignOptions options;
  options.scratch = &scratch;
  int64_t a100_used = 0, t4_used = 0;
  for (int step = 0; step < 40; ++step) {
    // Usage moves both ways: a100 fills and drains, t4 steps through its quota.
    int64_t a100_want = step % 10, t4_want = (step / 3) % 5;
    tree.AddUsage(spec.node, a100, a100_want - a100_used);
    tree.AddUsage(spec.node, t4, t4_want - t4_used);
    a100_used = a100_want;
    t4_used = t4_want;
    const size_t i = static_cast<size_t>(step) % wls.size();
    SCOPED_TRACE("step " + std::to_string(step) + ", workload " + wls[i].key);
    AssignFlavorsInto(kept, inputs[i], spec, tree, cat, options);
    FlavorAssignment fresh = AssignFlavors(wls[i], spec, tree, cat);
    ExpectSameAssignment(kept, fresh, wls[i], spec, cat);
  }
}

// An assignment made again in place keeps the message it wrote only while the
// failure, the pod set's name and the ClusterQueue's name are those it was written
// for: each step below changes one of them (or none) and must read as a fresh one.
TEST(FlavorAssignerCompiledInputsTest, AKeptMessageIsTheFreshMessage) {
  FlavorCatalog cat;
  cat.flavors = {RF("a100")};
  cat.defined = {true};
  QuotaTree tree;
  const FrId fr = tree.InternFr(0, kNvidiaGpu);
  CompiledResourceGroup gpus;
  gpus.covered = {kNvidiaGpu};
  gpus.flavors = {0};
  ClusterQueueSpec cq, other;
  cq.name = "cq";
  other.name = "other";
  cq.node = tree.AddNode("cq", true);
  other.node = tree.AddNode("other", true);
  cq.groups = other.groups = {gpus};
  tree.SetQuota(cq.node, fr, {4, std::nullopt, std::nullopt});
  tree.SetQuota(other.node, fr, {4, std::nullopt, std::nullopt});
  tree.Finalize();
  const model::Workload main = W("ns/main", "lq").PodSet("main", 1, {{"nvidia.com/gpu", "3"}});
  const model::Workload worker =
      W("ns/worker", "lq").PodSet("worker", 1, {{"nvidia.com/gpu", "3"}});
  FlavorAssignment kept;
  AssignScratch scratch;
  AssignOptions options;
  options.scratch = &scratch;
  struct Step {
    const model::Workload* wl;
    const ClusterQueueSpec* spec;
    int64_t used_in_cq;  // GPUs in use in "cq" ("other" has 2 throughout)
  };
  tree.AddUsage(other.node, fr, 2);
  const std::vector<Step> steps = {
      {&main, &cq, 2},      {&main, &cq, 2},     // the same failure twice: kept
      {&main, &cq, 3},                           // fewer available: another message
      {&main, &cq, 2},      {&main, &other, 2},  // the same numbers in another queue
      {&worker, &other, 2},                      // another pod set name
      {&worker, &other, 2}, {&main, &cq, 0},     // fits: no message
      {&main, &cq, 2}};
  int64_t used = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& step = steps[i];
    tree.AddUsage(cq.node, fr, step.used_in_cq - used);
    used = step.used_in_cq;
    SCOPED_TRACE("step " + std::to_string(i));
    FlavorInputs inputs;
    CompileFlavorInputs(inputs, *step.wl, *step.spec, tree, cat);
    AssignFlavorsInto(kept, inputs, *step.spec, tree, cat, options);
    FlavorAssignment fresh = AssignFlavors(*step.wl, *step.spec, tree, cat);
    ExpectSameAssignment(kept, fresh, *step.wl, *step.spec, cat);
  }
}

// A cycle keeps a head's assignment when its tree's usage moved and
// FitsAsFirstChoice says so: that must be exactly what assigning again answers.
// Sweep the usage of the queue itself and of a cohort sibling that borrows from it,
// over flavor orders where the first flavor is refused by a taint, lent with a
// lendingLimit, or shared by two pod sets.
TEST(FlavorAssignerFirstChoiceTest, KeptOnlyWhereAssigningAgainAgrees) {
  FlavorCatalog cat;
  cat.flavors = {Tainted("spot"), RF("a100"), RF("t4")};
  cat.defined = {true, true, true};
  QuotaTree tree;
  NodeId cohort = tree.AddNode("cohort", false);
  ClusterQueueSpec spec;
  spec.name = "cq";
  spec.node = tree.AddNode("cq", true);
  NodeId sibling = tree.AddNode("sibling", true);
  tree.SetParent(spec.node, cohort);
  tree.SetParent(sibling, cohort);
  CompiledResourceGroup g;
  g.covered = {kNvidiaGpu};
  g.flavors = {0, 1, 2};
  spec.groups = {g};
  for (int32_t f = 0; f < 3; ++f) {
    tree.SetQuota(spec.node, tree.InternFr(f, kNvidiaGpu), {8, std::nullopt, f == 1 ? 2 : 8});
    tree.SetQuota(sibling, tree.InternFr(f, kNvidiaGpu), {0, std::nullopt, std::nullopt});
  }
  tree.Finalize();
  const FrId a100 = *tree.FindFr(1, kNvidiaGpu);
  int kept = 0, assigned_again = 0;
  for (int64_t pods : {1, 2}) {
    model::Workload wl = W("ns/x", "lq").PodSet("main", pods, {{"nvidia.com/gpu", "3"}});
    if (pods == 2)
      wl = W("ns/x", "lq")
               .PodSet("a", 1, {{"nvidia.com/gpu", "3"}})
               .PodSet("b", 1, {{"nvidia.com/gpu", "3"}});
    // Usage when the assignment was made, then when it is asked again (a release
    // lowers it: the first flavor may fit again).
    for (int64_t own_before = 0; own_before <= 8; own_before += 4) {
      for (int64_t own = 0; own <= 8; ++own) {
        for (int64_t lent = 0; lent <= 2; ++lent) {
          tree.AddUsage(spec.node, a100, own_before);
          FlavorAssignment before = AssignFlavors(wl, spec, tree, cat);
          tree.RemoveUsage(spec.node, a100, own_before);
          tree.AddUsage(spec.node, a100, own);
          tree.AddUsage(sibling, a100, lent);
          FlavorAssignment now = AssignFlavors(wl, spec, tree, cat);
          if (FitsAsFirstChoice(before, spec, tree)) {
            ++kept;
            SCOPED_TRACE("pods " + std::to_string(pods) + " before " + std::to_string(own_before) +
                         " own " + std::to_string(own) + " lent " + std::to_string(lent));
            ExpectSameAssignment(before, now, wl, spec, cat);
          } else {
            ++assigned_again;
          }
          tree.RemoveUsage(spec.node, a100, own);
          tree.RemoveUsage(sibling, a100, lent);
        }
      }
    }
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(assigned_again, 0);
}

}  // namespace
}  // namespace muster::admission::testing
