// ObjectCache's watch events: the type it hands on is what the cache knew, a repeat
// of a version it holds is no change, and a deletion takes the object out.
#include "kube/object_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace muster::kube {
namespace {

using control::ChangeType;
using nlohmann::json;

json Pod(const std::string& name, const std::string& version) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "team"}, {"resourceVersion", version}}}};
}

class ObjectCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_.Subscribe([this](control::Change c) { changes_.push_back(std::move(c)); });
  }
  std::string VersionHeld(const std::string& name) const {
    auto got = cache_.Get({"pods", "team", name});
    if (!got.ok()) return "";
    return got->at("metadata").value("resourceVersion", "");
  }

  ObjectCache cache_;
  std::vector<control::Change> changes_;
};

TEST_F(ObjectCacheTest, EventTypesFollowWhatTheCacheHeld) {
  // A MODIFIED for an object the cache never saw is an addition to it.
  cache_.Apply("pods", ChangeType::kModified, Pod("a", "7"));
  // An ADDED for one it holds (a relist raced the watch) is a modification.
  cache_.Apply("pods", ChangeType::kAdded, Pod("a", "8"));
  ASSERT_EQ(changes_.size(), 2u);
  EXPECT_EQ(changes_[0].type, ChangeType::kAdded);
  EXPECT_EQ(changes_[1].type, ChangeType::kModified);
  EXPECT_EQ(changes_[1].namespace_, "team");
  EXPECT_EQ(changes_[1].name, "a");
  EXPECT_EQ(changes_[1].resource_version, 8);
  EXPECT_EQ(VersionHeld("a"), "8");
}

TEST_F(ObjectCacheTest, ARepeatedVersionIsNoChange) {
  cache_.Apply("pods", ChangeType::kAdded, Pod("a", "3"));
  cache_.Apply("pods", ChangeType::kModified, Pod("a", "3"));
  EXPECT_EQ(changes_.size(), 1u);
  cache_.Apply("pods", ChangeType::kModified, Pod("a", "4"));
  ASSERT_EQ(changes_.size(), 2u);
  EXPECT_EQ(changes_[1].type, ChangeType::kModified);
  EXPECT_EQ(VersionHeld("a"), "4");
  EXPECT_EQ(cache_.size(), 1u);
}

TEST_F(ObjectCacheTest, DeletionTakesTheObjectOutAndIsHandedOn) {
  cache_.Apply("pods", ChangeType::kAdded, Pod("a", "1"));
  cache_.Apply("pods", ChangeType::kAdded, Pod("b", "2"));
  cache_.Apply("pods", ChangeType::kDeleted, Pod("a", "5"));
  ASSERT_EQ(changes_.size(), 3u);
  EXPECT_EQ(changes_[2].type, ChangeType::kDeleted);
  EXPECT_EQ(changes_[2].Object()["metadata"]["resourceVersion"], "5");
  EXPECT_FALSE(cache_.Get({"pods", "team", "a"}).ok());
  EXPECT_EQ(VersionHeld("b"), "2");
  // A deletion of one it never held still reaches the subscriber, which may know it
  // from elsewhere (a relist's view); the cache is unchanged.
  cache_.Apply("pods", ChangeType::kDeleted, Pod("c", "6"));
  ASSERT_EQ(changes_.size(), 4u);
  EXPECT_EQ(changes_[3].type, ChangeType::kDeleted);
  EXPECT_EQ(cache_.size(), 1u);
}

}  // namespace
}  // namespace muster::kube
