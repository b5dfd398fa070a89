#include "server/label_selector.h"

#include <gtest/gtest.h>

#include "server/json_merge_patch.h"

namespace muster::server {
namespace {

using nlohmann::json;

bool Match(const std::string& sel, const model::StringMap& labels) {
  auto s = LabelSelector::Parse(sel);
  EXPECT_TRUE(s.ok()) << sel << ": " << s.status().message();
  return s.ok() && s->Matches(labels);
}

TEST(LabelSelectorTest, EqualityAndSets) {
  model::StringMap l = {{"a", "b"}, {"c", "x"}, {"e", "y"}};
  EXPECT_TRUE(Match("", l));
  EXPECT_TRUE(Match("a=b", l));
  EXPECT_TRUE(Match("a==b", l));
  EXPECT_FALSE(Match("a=c", l));
  EXPECT_TRUE(Match("a=b,c!=d,e in (x,y)", l));
  EXPECT_FALSE(Match("a=b,c!=x", l));
  EXPECT_TRUE(Match("e notin (z), a", l));
  EXPECT_FALSE(Match("e notin (y)", l));
  EXPECT_TRUE(Match("!missing", l));
  EXPECT_FALSE(Match("!a", l));
  EXPECT_TRUE(Match("missing!=v", l));
  EXPECT_TRUE(Match("kueue.x-k8s.io/queue-name notin (q)", l));
}

TEST(LabelSelectorTest, ParsesRequirements) {
  auto s = LabelSelector::Parse("x in (b, a)");
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->requirements().size(), 1u);
  EXPECT_EQ(s->requirements()[0].op, Requirement::Op::kIn);
  EXPECT_EQ(s->requirements()[0].values, (std::vector<std::string>{"a", "b"}));
}

TEST(LabelSelectorTest, RejectsMalformed) {
  for (const char* bad : {"a=b,", "=b", "a in x", "a in (x", "a b", ",", "a=(b)"}) {
    auto s = LabelSelector::Parse(bad);
    EXPECT_FALSE(s.ok()) << bad;
    if (!s.ok()) {
      EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    }
  }
}

// A metav1.LabelSelector object, as kubectl prints one (a Job's SELECTOR column).
TEST(LabelSelectorTest, AnObjectPrintsAsKubectlPrintsIt) {
  EXPECT_EQ(FormatLabelSelector(json()), "<none>");
  EXPECT_EQ(FormatLabelSelector(json::object()), "<none>");
  EXPECT_EQ(FormatLabelSelector(json::parse(R"({"matchLabels":{"b":"2","a":"1"},
    "matchExpressions":[{"key":"c","operator":"In","values":["y","x"]},
                        {"key":"a0","operator":"DoesNotExist"},
                        {"key":"d","operator":"Exists"},
                        {"key":"e","operator":"NotIn","values":["z"]}]})")),
            "a=1,!a0,b=2,c in (x,y),d,e notin (z)");
}

TEST(LabelSelectorTest, AnObjectMatchesAsItsRequirements) {
  auto s = LabelSelector::FromObject(json::parse(R"({"matchLabels":{"a":"1"},
    "matchExpressions":[{"key":"c","operator":"NotIn","values":["x"]}]})"));
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->Matches(model::StringMap{{"a", "1"}}));
  EXPECT_FALSE(s->Matches(model::StringMap{{"a", "1"}, {"c", "x"}}));
  EXPECT_FALSE(s->Matches(model::StringMap{{"a", "2"}}));
  EXPECT_FALSE(LabelSelector::FromObject(json::parse(R"({"matchExpressions":[
    {"key":"c","operator":"Near"}]})"))
                   .ok());
  EXPECT_FALSE(LabelSelector::FromObject(json::parse(R"({"matchLabels":{"a":1}})")).ok());
}

TEST(FieldSelectorTest, DottedPaths) {
  json obj = {{"metadata", {{"name", "team-a"}, {"namespace", ""}}},
              {"involvedObject", {{"kind", "ClusterQueue"}}}};
  auto s = FieldSelector::Parse("metadata.name=team-a,involvedObject.kind==ClusterQueue");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->Matches(obj));
  EXPECT_EQ(s->EqualityValue("metadata.name"), "team-a");
  auto ns = FieldSelector::Parse("metadata.namespace!=x,spec.missing=");
  ASSERT_TRUE(ns.ok());
  EXPECT_TRUE(ns->Matches(obj));
  EXPECT_FALSE(FieldSelector::Parse("a in (b)").ok());
}

TEST(JsonMergePatchTest, Rfc7386) {
  json target = {{"a", "b"}, {"c", {{"d", "e"}, {"f", "g"}}}, {"l", {1, 2}}};
  ApplyMergePatch(target, {{"a", "z"}, {"c", {{"f", nullptr}}}, {"l", {3}}});
  EXPECT_EQ(target, (json{{"a", "z"}, {"c", {{"d", "e"}}}, {"l", {3}}}));
}

}  // namespace
}  // namespace muster::server
