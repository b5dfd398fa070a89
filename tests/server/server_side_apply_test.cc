#include "server/server_side_apply.h"

#include <gtest/gtest.h>

#include "control/resource_types.h"

namespace muster::server {
namespace {

using nlohmann::json;

ApplyOptions Options(const std::string& manager, bool force = false) {
  ApplyOptions o;
  o.manager = manager;
  o.force = force;
  o.api_version = "v1";
  o.time = "2026-01-01T00:00:00Z";
  o.schema = SchemaOf(*control::FindByKind("v1", "ConfigMap"));
  return o;
}

json Apply(const json& current, const std::string& config, const ApplyOptions& o) {
  auto r = ServerSideApply(current, json::parse(config), o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->conflicts.empty()) << ConflictMessage(r->conflicts);
  return r->object;
}

const json kStored = json::parse(R"({"apiVersion":"v1","kind":"ConfigMap",
    "metadata":{"name":"c","namespace":"d","uid":"u"},"data":{"own":"1"}})");

TEST(ServerSideApplyTest, RecordsFieldsAndRemovesWhatIsNoLongerApplied) {
  json first = Apply(kStored, R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c",
      "labels":{"l":"1"}},"data":{"a":"1","b":"2"}})",
                     Options("kubectl"));
  EXPECT_EQ(first["data"], json::parse(R"({"own":"1","a":"1","b":"2"})"));
  const json& entry = first["metadata"]["managedFields"][0];
  EXPECT_EQ(entry["manager"], "kubectl");
  EXPECT_EQ(entry["operation"], "Apply");
  EXPECT_EQ(entry["fieldsType"], "FieldsV1");
  EXPECT_EQ(entry["fieldsV1"], json::parse(R"({"f:data":{"f:a":{},"f:b":{}},
                                               "f:metadata":{"f:labels":{"f:l":{}}}})"));
  json second = Apply(first, R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},
      "data":{"a":"1"}})",
                      Options("kubectl"));
  // b and the label were this manager's alone: gone; `own` was never applied: kept.
  EXPECT_EQ(second["data"], json::parse(R"({"own":"1","a":"1"})"));
  EXPECT_FALSE(second["metadata"]["labels"].contains("l"));
  EXPECT_EQ(second["metadata"]["managedFields"].size(), 1u);
}

TEST(ServerSideApplyTest, ConflictsUnlessForced) {
  json first = Apply(kStored, R"({"data":{"a":"1"}})", Options("one"));
  // The same value is shared ownership, not a conflict.
  json shared = Apply(first, R"({"data":{"a":"1"}})", Options("two"));
  EXPECT_EQ(shared["metadata"]["managedFields"].size(), 2u);
  auto conflict = ServerSideApply(shared, json::parse(R"({"data":{"a":"2"}})"), Options("two"));
  ASSERT_TRUE(conflict.ok());
  ASSERT_EQ(conflict->conflicts.size(), 1u);
  EXPECT_EQ(ConflictMessage(conflict->conflicts),
            "Apply failed with 1 conflict: conflict with \"one\": .data.a");
  json forced = Apply(shared, R"({"data":{"a":"2"}})", Options("two", true));
  EXPECT_EQ(forced["data"]["a"], "2");
  // `one` lost its only field, and with it its entry.
  ASSERT_EQ(forced["metadata"]["managedFields"].size(), 1u);
  EXPECT_EQ(forced["metadata"]["managedFields"][0]["manager"], "two");
  // Shared fields stay while another manager still applies them.
  json kept = Apply(shared, R"({"data":{}})", Options("two"));
  EXPECT_EQ(kept["data"]["a"], "1");
}

TEST(ServerSideApplyTest, KeyedListsAndPaths) {
  ApplyOptions o = Options("kubectl");
  o.schema = SchemaOf(*control::FindByKind("v1", "Pod"));
  o.has_status = true;
  json pod = json::parse(R"({"metadata":{"name":"p"},"spec":{"containers":[
      {"name":"a","image":"a:1"},{"name":"b","image":"b:1"}]}})");
  json applied = Apply(pod, R"({"spec":{"containers":[{"name":"a","image":"a:2"},
      {"name":"b","image":"b:1"}]},"status":{"phase":"x"}})",
                       o);
  EXPECT_FALSE(applied.contains("status"));
  const json& set = applied["metadata"]["managedFields"][0]["fieldsV1"];
  EXPECT_TRUE(set["f:spec"]["f:containers"].contains("k:{\"name\":\"a\"}"));
  json dropped = Apply(applied, R"({"spec":{"containers":[{"name":"a","image":"a:2"}]}})", o);
  EXPECT_EQ(dropped["spec"]["containers"], json::parse(R"([{"name":"a","image":"a:2"}])"));
  EXPECT_EQ(PathString({"f:spec", "f:containers", "k:{\"name\":\"a\"}", "f:image"}),
            ".spec.containers[name=\"a\"].image");
  ApplyOptions other = o;
  other.manager = "other";
  auto conflict = ServerSideApply(
      dropped, json::parse(R"({"spec":{"containers":[{"name":"a","image":"z"}]}})"), other);
  ASSERT_TRUE(conflict.ok());
  ASSERT_EQ(conflict->conflicts.size(), 1u);
  EXPECT_EQ(PathString(conflict->conflicts[0].path), ".spec.containers[name=\"a\"].image");
}

}  // namespace
}  // namespace muster::server
