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

TEST(ParseApiObject, NumbersKeepTheTypesJsonParseGives) {
  const std::string text =
      R"({"a": 0, "b": 7, "c": -7, "d": 18446744073709551615, "e": 2.5, "f": -0.0,
          "g": 1e3, "h": 9223372036854775807, "i": -9223372036854775808})";
  const json parsed = ParseApiObject(text);
  const json want = json::parse(text);
  EXPECT_EQ(parsed, want);
  for (const auto& [key, value] : want.items()) {
    EXPECT_EQ(parsed[key].type(), value.type()) << key;
    EXPECT_EQ(parsed[key].is_number_unsigned(), value.is_number_unsigned()) << key;
    EXPECT_EQ(parsed[key].dump(), value.dump()) << key;
  }
}

TEST(ParseApiObject, WhatTheFastParserRefusesIsParsedAsJsonParseDoes) {
  // An integer beyond 64 bits (a double for json::parse) and nesting deeper than
  // simdjson's limit are not refused: nlohmann's parser takes them.
  EXPECT_EQ(ParseApiObject(R"({"big": 123456789012345678901234567890})"),
            json::parse(R"({"big": 123456789012345678901234567890})"));
  // That path leaves managedFields out where the fast one does, and only there.
  json event = {{"type", "ADDED"}, {"object", PodWithManagedFields("a")}};
  event["object"]["spec"]["big"] = "BIG";
  std::string refused = event.dump();
  refused.replace(refused.find("\"BIG\""), 5, "123456789012345678901234567890");
  json want = json::parse(refused);
  want["object"]["metadata"].erase("managedFields");
  EXPECT_EQ(ParseApiObject(refused), want);
  EXPECT_EQ(ParseApiObject(refused)["object"]["spec"]["template"]["metadata"]["managedFields"],
            "kept: not an API object's metadata");
  std::string deep = std::string(2000, '[') + "1" + std::string(2000, ']');
  const json parsed = ParseApiObject(deep);
  ASSERT_FALSE(parsed.is_discarded());
  EXPECT_EQ(parsed.dump(), json::parse(deep).dump());
  // Escapes and non-ASCII text decode the same; invalid UTF-8 is refused by both.
  const std::string text = R"({"s": "a\"b\\c\u00e9\ud83d\ude00\n", "t": "Ã©"})";
  EXPECT_EQ(ParseApiObject(text), json::parse(text));
  EXPECT_TRUE(ParseApiObject("{\"s\": \"\xff\"}").is_discarded());
}

TEST(ParseApiObject, ALargeListIsParsedAsASmallOne) {
  // Beyond the size of the thread's reused parser (a list page): the same values,
  // managedFields left out.
  json list = {
      {"kind", "PodList"}, {"metadata", {{"resourceVersion", "9"}}}, {"items", json::array()}};
  for (int i = 0; i < 200; ++i)
    list["items"].push_back(PodWithManagedFields("p" + std::to_string(i)));
  const std::string text = list.dump();
  ASSERT_GT(text.size(), 64u * 1024);
  const json parsed = ParseApiObject(text);
  ASSERT_EQ(parsed["items"].size(), 200u);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(parsed["items"][i], Without(PodWithManagedFields("p" + std::to_string(i))));
  }
  // And one item alone parses to the same object.
  EXPECT_EQ(ParseApiObject(PodWithManagedFields("p7").dump()), parsed["items"][7]);
}

TEST(ParseApiObject, TextThatIsNotJsonIsDiscarded) {
  for (const char* text : {"", "{", "{\"metadata\": {\"managedFields\": [}", "nul", "{} x"}) {
    EXPECT_TRUE(ParseApiObject(text).is_discarded()) << text;
  }
}

}  // namespace
}  // namespace muster::kube
