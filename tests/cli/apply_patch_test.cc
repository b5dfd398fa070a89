// `muster apply`'s three-way merge patch, as kubectl's client-side apply makes it:
// the manifest's fields are set, the fields the last manifest had and this one
// dropped are removed, and what the server or others set is left alone.
#include "cli/apply_patch.h"

#include <gtest/gtest.h>

namespace muster::cli {
namespace {

using nlohmann::json;

json Job(const json& labels, const json& spec) {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", "j"}, {"namespace", "default"}, {"labels", labels}}},
          {"spec", spec}};
}

TEST(ApplyPatchTest, TheLastAppliedManifestIsRecordedWithoutStatusOrItself) {
  json manifest = Job({{"a", "1"}}, {{"parallelism", 2}});
  manifest["status"] = {{"active", 1}};
  json applied = WithLastApplied(manifest);
  EXPECT_FALSE(applied.contains("status"));
  json recorded = LastApplied(applied);
  EXPECT_EQ(recorded, Job({{"a", "1"}}, {{"parallelism", 2}}));
  // Applying the applied object again records the same manifest.
  EXPECT_EQ(LastApplied(WithLastApplied(applied)), recorded);
  EXPECT_TRUE(LastApplied(json::object()).is_null());
}

TEST(ApplyPatchTest, WhatTheServerFilledInStays) {
  const json manifest = Job({{"a", "1"}}, {{"parallelism", 2}});
  json stored = WithLastApplied(manifest);
  stored["metadata"]["uid"] = "u";
  stored["metadata"]["resourceVersion"] = "7";
  stored["spec"]["selector"] = {{"matchLabels", {{"batch.kubernetes.io/controller-uid", "u"}}}};
  stored["spec"]["backoffLimit"] = 6;
  stored["status"] = {{"active", 2}};
  // The same manifest again: nothing to send.
  EXPECT_EQ(ThreeWayMergePatch(LastApplied(stored), WithLastApplied(manifest), stored),
            json::object());
  // A changed field and a new label: only they are sent.
  const json changed = Job({{"a", "1"}, {"b", "2"}}, {{"parallelism", 3}});
  json patch = ThreeWayMergePatch(LastApplied(stored), WithLastApplied(changed), stored);
  EXPECT_EQ(patch["spec"], json({{"parallelism", 3}}));
  EXPECT_EQ(patch["metadata"]["labels"], json({{"b", "2"}}));
  EXPECT_TRUE(patch["metadata"]["annotations"].contains(kLastAppliedAnnotation));
  EXPECT_FALSE(patch.contains("status"));
}

TEST(ApplyPatchTest, WhatTheLastManifestSetAndThisOneDropsIsRemoved) {
  const json first = Job({{"a", "1"}, {"b", "2"}}, {{"parallelism", 2}, {"suspend", true}});
  json stored = WithLastApplied(first);
  stored["metadata"]["labels"]["other"] = "kept";  // another writer's label
  const json second = Job({{"a", "1"}}, {{"parallelism", 2}});
  json patch = ThreeWayMergePatch(LastApplied(stored), WithLastApplied(second), stored);
  EXPECT_EQ(patch["metadata"]["labels"], json({{"b", nullptr}}));
  EXPECT_EQ(patch["spec"], json({{"suspend", nullptr}}));
  // Without a recorded manifest (an object kubectl or a POST made), nothing is
  // removed: only what the manifest sets is sent.
  json unrecorded = first;
  patch = ThreeWayMergePatch(LastApplied(unrecorded), WithLastApplied(second), unrecorded);
  EXPECT_FALSE(patch.contains("spec"));
  EXPECT_FALSE(patch["metadata"].contains("labels"));
}

TEST(ApplyPatchTest, ListsAreReplacedWhole) {
  json stored = WithLastApplied(Job(json::object(), {{"args", {"a", "b"}}}));
  json patch = ThreeWayMergePatch(LastApplied(stored),
                                  WithLastApplied(Job(json::object(), {{"args", {"a"}}})), stored);
  EXPECT_EQ(patch["spec"]["args"], json({"a"}));
}

}  // namespace
}  // namespace muster::cli
