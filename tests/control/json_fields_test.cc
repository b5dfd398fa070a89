// Finalizer and deletion readers of untyped objects: a field of the wrong type reads
// as absent and is never overwritten.
#include "control/json_fields.h"

#include <gtest/gtest.h>

namespace muster::control {
namespace {

using nlohmann::json;

TEST(JsonFieldsTest, FinalizersAreAddedOnceReadAndRemoved) {
  json object = {{"metadata", {{"name", "a"}}}};
  EXPECT_FALSE(HasFinalizer(object, "example.com/x"));
  EXPECT_TRUE(AddFinalizer(object, "example.com/x"));
  EXPECT_FALSE(AddFinalizer(object, "example.com/x"));
  EXPECT_TRUE(AddFinalizer(object, kForegroundFinalizer));
  EXPECT_EQ(object["metadata"]["finalizers"], json({"example.com/x", "foregroundDeletion"}));
  EXPECT_TRUE(HasFinalizer(object, "example.com/x"));
  EXPECT_FALSE(DeletingDependents(object)) << "not marked";
  object["metadata"]["deletionTimestamp"] = "2027-01-15T08:00:00Z";
  EXPECT_TRUE(DeletingDependents(object));
  EXPECT_TRUE(RemoveFinalizer(object, kForegroundFinalizer));
  EXPECT_FALSE(DeletingDependents(object));
  EXPECT_TRUE(RemoveFinalizer(object, "example.com/x"));
  EXPECT_FALSE(object["metadata"].contains("finalizers"));
}

TEST(JsonFieldsTest, MalformedFinalizerFieldsAreLeftAlone) {
  json bad_list = {{"metadata", {{"finalizers", "example.com/x"}}}};
  EXPECT_FALSE(HasFinalizer(bad_list, "example.com/x"));
  EXPECT_FALSE(AddFinalizer(bad_list, "example.com/y"));
  EXPECT_EQ(bad_list["metadata"]["finalizers"], "example.com/x");
  json bad_meta = {{"metadata", 7}};
  EXPECT_FALSE(AddFinalizer(bad_meta, "example.com/y"));
  EXPECT_EQ(bad_meta["metadata"], 7);
  json not_object = json::array();
  EXPECT_FALSE(AddFinalizer(not_object, "example.com/y"));
  EXPECT_FALSE(HasFinalizer(json(), "example.com/y"));
}

}  // namespace
}  // namespace muster::control
