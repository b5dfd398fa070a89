#include "kube/object_parser.h"

#include <gtest/gtest.h>

#include <string>

namespace muster::kube {
namespace {

using nlohmann::json;

// A pod as the API server sends it, managedFields included.
json PodWithManagedFields(const std::string& name) {
  return json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": ")" +
                     name + R"(", "namespace": "default", "resourceVersion": "7",
      "labels": {"app": "train"},
      "managedFields": [{"manager": "kube-controller-manager", "operation": "Update",
        "apiVersion": "v1", "time": "2026-12-04T00:00:00Z", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                     "f:spec": {"f:containers": {"k:{\"name\":\"main\"}": {}}}}}]},
    "spec": {"containers": [{"name": "main", "image": "trainer", "args": [1, 2.5, true, null]}],
      "template": {"metadata": {"managedFields": "kept: not an API object's metadata"}}},
    "status": {"phase": "Pending"}})");
}

json Without(json object) {
  object["metadata"].erase("managedFields");
  return object;
}

TEST(ParseApiObject, AnObjectIsParsedWithoutItsManagedFields) {
  const json pod = PodWithManagedFields("a");
  const json parsed = ParseApiObject(pod.dump());
  EXPECT_EQ(parsed, Without(pod));
  // Everywhere else, a key of that name is data.
  EXPECT_EQ(parsed["spec"]["template"]["metadata"]["managedFields"],
            "kept: not an API object's metadata");
}

TEST(ParseApiObject, AWatchEventsObjectIsParsedWithoutItsManagedFields) {
  const json event = {{"type", "MODIFIED"}, {"object", PodWithManagedFields("a")}};
  const json parsed = ParseApiObject(event.dump());
  EXPECT_EQ(parsed["type"], "MODIFIED");
  EXPECT_EQ(parsed["object"], Without(PodWithManagedFields("a")));
}

TEST(ParseApiObject, EachItemOfAListIsParsedWithoutItsManagedFields) {
  json list = {{"apiVersion", "v1"},
               {"kind", "PodList"},
               {"metadata", {{"resourceVersion", "9"}, {"continue", "abc"}}},
               {"items", {PodWithManagedFields("a"), PodWithManagedFields("b")}}};
  const json parsed = ParseApiObject(list.dump());
  EXPECT_EQ(parsed["metadata"], list["metadata"]);
  ASSERT_EQ(parsed["items"].size(), 2u);
  EXPECT_EQ(parsed["items"][0], Without(PodWithManagedFields("a")));
  EXPECT_EQ(parsed["items"][1], Without(PodWithManagedFields("b")));
  // A nested "items" (a ConfigMap's data, a volume's items) is not a list of objects.
  json config = {{"metadata", {{"name", "c"}}},
                 {"spec", {{"items", {{{"metadata", {{"managedFields", 1}}}}}}}}};
  EXPECT_EQ(ParseApiObject(config.dump()), config);
}

TEST(ParseApiObject, ScalarsArraysAndOddManagedFieldsAreHandled) {
  EXPECT_EQ(ParseApiObject("[1, \"two\", {\"three\": 3}]"),
            json::parse("[1, \"two\", {\"three\": 3}]"));
  EXPECT_EQ(ParseApiObject("42"), json(42));
  EXPECT_EQ(ParseApiObject("-7"), json(-7));
  EXPECT_EQ(ParseApiObject("\"text\""), json("text"));
  // A managedFields of any shape goes, and what follows it is kept.
  EXPECT_EQ(ParseApiObject(R"({"metadata": {"managedFields": null, "name": "x"}})"),
            json::parse(R"({"metadata": {"name": "x"}})"));
  EXPECT_EQ(
      ParseApiObject(R"({"metadata": {"managedFields": [[{"a": [1]}], {}], "uid": "u"}, "b": 2})"),
      json::parse(R"({"metadata": {"uid": "u"}, "b": 2})"));
  // Duplicate keys: the last one wins, as json::parse does it.
  EXPECT_EQ(ParseApiObject(R"({"a": 1, "a": 2})"), json::parse(R"({"a": 2})"));
}

TEST(ParseApiObject, TextThatIsNotJsonIsDiscarded) {
  for (const char* text : {"", "{", "{\"metadata\": {\"managedFields\": [}", "nul", "{} x"}) {
    EXPECT_TRUE(ParseApiObject(text).is_discarded()) << text;
  }
}

}  // namespace
}  // namespace muster::kube
