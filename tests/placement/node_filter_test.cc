#include "placement/node_filter.h"

#include <gtest/gtest.h>

namespace muster::placement {
namespace {

using model::TaintEffect;
using model::TolerationOperator;
using Op = model::SelectorOperator;

struct TolCase {
  const char* name;
  model::Taint taint;
  model::Toleration tol;
  bool tolerated;
};

TEST(NodeFilter, TolerationTable) {
  const TolCase cases[] = {
      {"equal match",
       {"k", "v", TaintEffect::kNoSchedule},
       {"k", TolerationOperator::kEqual, "v", TaintEffect::kNoSchedule, {}},
       true},
      {"equal value differs",
       {"k", "v", TaintEffect::kNoSchedule},
       {"k", TolerationOperator::kEqual, "w", TaintEffect::kNoSchedule, {}},
       false},
      {"exists ignores value",
       {"k", "v", TaintEffect::kNoExecute},
       {"k", TolerationOperator::kExists, "", TaintEffect::kNoExecute, {}},
       true},
      {"effect mismatch",
       {"k", "v", TaintEffect::kNoExecute},
       {"k", TolerationOperator::kExists, "", TaintEffect::kNoSchedule, {}},
       false},
      {"no effect matches all",
       {"k", "v", TaintEffect::kNoExecute},
       {"k", TolerationOperator::kEqual, "v", std::nullopt, {}},
       true},
      {"empty key exists tolerates all",
       {"x", "y", TaintEffect::kNoSchedule},
       {"", TolerationOperator::kExists, "", std::nullopt, {}},
       true},
      {"empty key exists with effect",
       {"x", "y", TaintEffect::kNoSchedule},
       {"", TolerationOperator::kExists, "", TaintEffect::kNoExecute, {}},
       false},
      {"key differs",
       {"k", "v", TaintEffect::kNoSchedule},
       {"j", TolerationOperator::kExists, "", std::nullopt, {}},
       false},
  };
  for (const auto& c : cases) EXPECT_EQ(ToleratesTaint(c.tol, c.taint), c.tolerated) << c.name;
}

model::Node LabeledNode() {
  model::Node n;
  n.meta.name = "n1";
  n.meta.labels = {{"zone", "a"}, {"gpus", "8"}, {"tier", "gold"}};
  return n;
}

struct ReqCase {
  const char* name;
  model::NodeSelectorRequirement req;
  bool matches;
};

TEST(NodeFilter, AffinityOperatorTable) {
  model::Node n = LabeledNode();
  const ReqCase cases[] = {
      {"In", {"zone", Op::kIn, {"a", "b"}}, true},
      {"In miss", {"zone", Op::kIn, {"b"}}, false},
      {"In absent", {"nope", Op::kIn, {"a"}}, false},
      {"NotIn", {"zone", Op::kNotIn, {"b"}}, true},
      {"NotIn hit", {"zone", Op::kNotIn, {"a"}}, false},
      {"NotIn absent", {"nope", Op::kNotIn, {"a"}}, true},
      {"Exists", {"tier", Op::kExists, {}}, true},
      {"Exists absent", {"nope", Op::kExists, {}}, false},
      {"DoesNotExist", {"nope", Op::kDoesNotExist, {}}, true},
      {"DoesNotExist present", {"tier", Op::kDoesNotExist, {}}, false},
      {"Gt", {"gpus", Op::kGt, {"4"}}, true},
      {"Gt equal", {"gpus", Op::kGt, {"8"}}, false},
      {"Lt", {"gpus", Op::kLt, {"9"}}, true},
      {"Lt non-integer label", {"tier", Op::kLt, {"9"}}, false},
      {"Gt absent", {"nope", Op::kGt, {"1"}}, false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(MatchesRequirement(c.req, n.meta.labels), c.matches) << c.name;
  }
}

TEST(NodeFilter, TermsOredExpressionsAnded) {
  model::Node n = LabeledNode();
  model::NodeSelectorTerm both{{{"zone", Op::kIn, {"a"}}, {"tier", Op::kIn, {"silver"}}}, {}};
  model::NodeSelectorTerm one{{{"zone", Op::kIn, {"a"}}}, {}};
  EXPECT_FALSE(MatchesRequiredAffinity({both}, n));
  EXPECT_TRUE(MatchesRequiredAffinity({both, one}, n));
  EXPECT_TRUE(MatchesRequiredAffinity({}, n));
  model::NodeSelectorTerm by_name{{}, {{"metadata.name", Op::kIn, {"n1"}}}};
  model::NodeSelectorTerm other_name{{}, {{"metadata.name", Op::kIn, {"n2"}}}};
  EXPECT_TRUE(MatchesRequiredAffinity({by_name}, n));
  EXPECT_FALSE(MatchesRequiredAffinity({other_name}, n));
}

TEST(NodeFilter, FilterNodeVerdicts) {
  model::Node n = LabeledNode();
  PodConstraints pod;
  EXPECT_EQ(FilterNode(n, true, pod), FilterVerdict::kFits);
  EXPECT_EQ(FilterNode(n, false, pod), FilterVerdict::kNotReady);
  pod.node_selector = {{"zone", "b"}};
  EXPECT_EQ(FilterNode(n, true, pod), FilterVerdict::kNodeSelectorMismatch);
  pod.node_selector = {{"zone", "a"}};
  n.taints = {{"gpu", "true", TaintEffect::kNoSchedule}};
  EXPECT_EQ(FilterNode(n, true, pod), FilterVerdict::kUntoleratedTaint);
  pod.tolerations = {{"gpu", TolerationOperator::kExists, "", std::nullopt, {}}};
  EXPECT_EQ(FilterNode(n, true, pod), FilterVerdict::kFits);
  // PreferNoSchedule only scores.
  n.taints.push_back({"soft", "", TaintEffect::kPreferNoSchedule});
  EXPECT_EQ(FilterNode(n, true, pod), FilterVerdict::kFits);
  EXPECT_EQ(CountUntoleratedPreferNoSchedule(n.taints, pod.tolerations), 1);
  n.unschedulable = true;
  EXPECT_EQ(FilterNode(n, true, pod), FilterVerdict::kUnschedulable);
  pod.tolerations.push_back({"node.kubernetes.io/unschedulable",
                             TolerationOperator::kExists,
                             "",
                             TaintEffect::kNoSchedule,
                             {}});
  EXPECT_EQ(FilterNode(n, true, pod), FilterVerdict::kFits);
  model::NodeAffinity aff;
  aff.required = {{{{"tier", Op::kNotIn, {"gold"}}}, {}}};
  pod.affinity = &aff;
  EXPECT_EQ(FilterNode(n, true, pod), FilterVerdict::kAffinityMismatch);
}

}  // namespace
}  // namespace muster::placement
