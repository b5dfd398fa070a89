// DecodeObject reads a parsed JSON object exactly as DecodeText reads its text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace muster::api {
namespace {

using nlohmann::json;
using testing::Lines;

// Both paths, as the serve store and the API used to (text) and now do (object).
std::pair<DecodeResult, DecodeResult> BothWays(const json& object, bool warn_unread = false) {
  DecodeResult text, parsed;
  text.warn_unread_fields = parsed.warn_unread_fields = warn_unread;
  DecodeText(object.dump(), "store", text);
  DecodeObject(object, "store", parsed);
  return {std::move(text), std::move(parsed)};
}

json PyTorchJob() {
  json container = {{"name", "pytorch"},
                    {"image", "busybox"},
                    {"resources", {{"requests", {{"cpu", "500m"}, {"nvidia.com/gpu", 2}}}}}};
  json replica = {{"replicas", 3},
                  {"restartPolicy", "OnFailure"},
                  {"template", {{"spec", {{"containers", {container}}}}}}};
  json master = replica;
  master["replicas"] = 1;
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata",
           {{"name", "train"},
            {"namespace", "team-a"},
            {"labels", {{"kueue.x-k8s.io/queue-name", "a"}}},
            {"annotations", {{"sim.muster.dev/duration", "90"}}}}},
          {"spec",
           {{"runPolicy", {{"suspend", true}}},
            {"pytorchReplicaSpecs", {{"Master", master}, {"Worker", replica}}}}}};
}

TEST(DecodeObject, SameObjectsAsTheText) {
  auto [text, parsed] = BothWays(PyTorchJob());
  EXPECT_THAT(Lines(parsed), ::testing::IsEmpty());
  ASSERT_EQ(parsed.manifests.jobs.size(), 1u);
  ASSERT_EQ(text.manifests.jobs.size(), 1u);
  const auto& a = std::get<model::KubeflowJob>(text.manifests.jobs[0]);
  const auto& b = std::get<model::KubeflowJob>(parsed.manifests.jobs[0]);
  EXPECT_EQ(b.meta.name, "train");
  EXPECT_EQ(b.meta.namespace_, "team-a");
  EXPECT_EQ(b.meta.labels, a.meta.labels);
  EXPECT_EQ(b.meta.annotations, a.meta.annotations);
  EXPECT_TRUE(b.run_policy.suspend);
  ASSERT_EQ(b.replica_specs.size(), 2u);
  ASSERT_EQ(b.replica_specs.size(), a.replica_specs.size());
  for (size_t i = 0; i < a.replica_specs.size(); ++i) {
    EXPECT_EQ(b.replica_specs[i].type, a.replica_specs[i].type);
    EXPECT_EQ(b.replica_specs[i].replicas, a.replica_specs[i].replicas);
    const auto& ca = a.replica_specs[i].tmpl.spec.containers;
    const auto& cb = b.replica_specs[i].tmpl.spec.containers;
    ASSERT_EQ(cb.size(), 1u);
    EXPECT_EQ(cb[0].requests, ca[0].requests);
  }
}

TEST(DecodeObject, SameDiagnosticsAsTheText) {
  json bad = PyTorchJob();
  bad["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = "many";
  bad["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["resources"]
     ["requests"]["cpu"] = "lots";
  bad["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = nullptr;  // null is absent
  auto [text, parsed] = BothWays(bad);
  EXPECT_FALSE(Lines(parsed).empty());
  EXPECT_EQ(Lines(parsed), Lines(text));

  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", "n1"}}},
               {"status", {{"allocatable", {{"cpu", 8.5}, {"nvidia.com/gpu", true}}}}}};
  auto [t2, p2] = BothWays(node);
  EXPECT_EQ(Lines(p2), Lines(t2));
  EXPECT_FALSE(Lines(p2).empty());  // a boolean is not a quantity

  auto [t3, p3] = BothWays(json::array({1, 2}));
  EXPECT_EQ(Lines(p3), Lines(t3));
}

// Empty and nested containers, nulls and scalars inside sequences: the decoders read
// them in the JSON as they read the text's YAML nodes.
TEST(DecodeObject, EmptyAndNestedContainers) {
  json job = PyTorchJob();
  json& spec = job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"];
  spec["nodeSelector"] = json::object();
  spec["tolerations"] = json::array();
  spec["containers"][0]["command"] = {"sh", "-c", "exit 0"};
  spec["containers"][0]["args"] = {1, 2.5, true, nullptr};
  spec["containers"][0]["env"] = {{{"name", "A"}, {"value", "1"}}, json::object()};
  job["metadata"]["annotations"]["x"] = json::array({json::array({1}), json::array()});
  auto [text, parsed] = BothWays(job);
  EXPECT_EQ(Lines(parsed), Lines(text));
  ASSERT_EQ(parsed.manifests.jobs.size(), text.manifests.jobs.size());
}

// A value of the wrong shape (a list for a map, a map for a scalar...) and fields no
// decoder reads: the same messages, on the same paths, from the JSON as from the text.
TEST(DecodeObject, SameShapeErrorsAndUnreadFieldsAsTheText) {
  json job = PyTorchJob();
  json& worker = job["spec"]["pytorchReplicaSpecs"]["Worker"];
  worker["template"]["spec"]["nodeSelector"] = json::array({"a"});
  worker["template"]["spec"]["containers"][0]["image"] = {{"not", "a scalar"}};
  worker["template"]["spec"]["tolerations"] = {{"key", "a map"}};
  worker["restartPolicy"] = 3;
  job["metadata"]["labels"]["numeric"] = 7;
  job["spec"]["runPolicy"]["noSuchField"] = true;
  job["spec"]["typo"] = {{"x", 1}};
  auto [text, parsed] = BothWays(job, /*warn_unread=*/true);
  EXPECT_THAT(Lines(parsed), ::testing::Contains(::testing::HasSubstr("spec.typo")));
  EXPECT_THAT(Lines(parsed),
              ::testing::Contains(::testing::HasSubstr("must be a map, got a list")));
  EXPECT_EQ(Lines(parsed), Lines(text));
}

TEST(DecodeObject, DeepNestingIsRefused) {
  json deep = json::object();
  json* at = &deep;
  for (int i = 0; i < 300; ++i) at = &((*at)["x"] = json::object());
  DecodeResult out;
  DecodeObject(deep, "store", out);
  ASSERT_EQ(out.diagnostics.size(), 1u);
  EXPECT_THAT(out.diagnostics[0].ToString(), ::testing::HasSubstr("nested deeper than 256"));
}

}  // namespace
}  // namespace muster::api
