#include "server/json_patch.h"

#include <gtest/gtest.h>

namespace muster::server {
namespace {

using nlohmann::json;

json Doc() {
  return json::parse(R"({"metadata":{"labels":{"a":"1","x/y":"2","t~n":"3"}},
                         "spec":{"args":["one","two"],"n":1}})");
}

Result<json> JsonPatched(const std::string& patch) {
  return ApplyJsonPatch(Doc(), json::parse(patch));
}

TEST(JsonPatchTest, Pointers) {
  auto tokens = ParseJsonPointer("/a~1b/~0c/0/-");
  ASSERT_TRUE(tokens.ok());
  EXPECT_EQ(*tokens, (std::vector<std::string>{"a/b", "~c", "0", "-"}));
  EXPECT_TRUE(ParseJsonPointer("")->empty());
  EXPECT_EQ(*ParseJsonPointer("/"), std::vector<std::string>{""});
  EXPECT_FALSE(ParseJsonPointer("a").ok());
  EXPECT_FALSE(ParseJsonPointer("/a~2").ok());
}

TEST(JsonPatchTest, EveryOperation) {
  auto r = JsonPatched(R"([
    {"op":"add","path":"/metadata/labels/b","value":"4"},
    {"op":"add","path":"/spec/args/-","value":"three"},
    {"op":"add","path":"/spec/args/0","value":"zero"},
    {"op":"remove","path":"/metadata/labels/x~1y"},
    {"op":"replace","path":"/metadata/labels/t~0n","value":"r"},
    {"op":"copy","from":"/spec/n","path":"/spec/m"},
    {"op":"move","from":"/spec/args/1","path":"/spec/first"},
    {"op":"test","path":"/spec/args","value":["zero","two","three"]}])");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["metadata"]["labels"], json::parse(R"({"a":"1","b":"4","t~n":"r"})"));
  EXPECT_EQ((*r)["spec"], json::parse(R"({"args":["zero","two","three"],"n":1,"m":1,
                                          "first":"one"})"));
}

TEST(JsonPatchTest, FailuresAreWordedAsUpstream) {
  auto failed = JsonPatched(R"([{"op":"test","path":"/spec/n","value":2}])");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(failed.status().message(), "testing value /spec/n failed: test failed");
  EXPECT_EQ(JsonPatched(R"([{"op":"add","path":"/nope/x","value":1}])").status().message(),
            "add operation does not apply: doc is missing path: \"/nope/x\": missing value");
  EXPECT_EQ(JsonPatched(R"([{"op":"remove","path":"/spec/zz"}])").status().message(),
            "error in remove for path: '/spec/zz': Unable to remove nonexistent key: zz: "
            "missing value");
  EXPECT_EQ(JsonPatched(R"([{"op":"replace","path":"/spec/zz","value":1}])").status().message(),
            "replace operation does not apply: doc is missing key: /spec/zz: missing value");
  EXPECT_EQ(JsonPatched(R"([{"op":"add","path":"/spec/args/5","value":1}])").status().message(),
            "error in add for path: '/spec/args/5': Unable to access invalid index: 5: invalid "
            "index referenced");
  EXPECT_EQ(JsonPatched(R"([{"op":"bogus","path":"/spec"}])").status().message(),
            "Unexpected kind: bogus");
  EXPECT_FALSE(JsonPatched(R"([{"op":"move","from":"/spec","path":"/spec/n/x"}])").ok());
  // Nothing of a failed patch applies: the caller's document is a copy.
  EXPECT_EQ(JsonPatched(R"({"op":"add"})").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(JsonPatched(R"([1])").status().code(), StatusCode::kInvalidArgument);
}

TEST(JsonPatchTest, WholeDocument) {
  auto r = JsonPatched(R"([{"op":"replace","path":"","value":{"a":1}},
                     {"op":"test","path":"","value":{"a":1}}])");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, json::parse(R"({"a":1})"));
}

}  // namespace
}  // namespace muster::server
