// LIST from the store's text cache: the cache follows every commit (batched or
// not, rolled back or not, across a restart) and the list body equals what the
// parsed objects say, at the stored version and at another one.
#include "server/list_response.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "server/object_store.h"

namespace muster::server {
namespace {

using nlohmann::json;

class ListResponseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("muster-list-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    store_ = Open();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::unique_ptr<ObjectStore> Open() {
    auto s = ObjectStore::Open(dir_.string());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }

  static json Cq(const std::string& name, const std::string& version, const std::string& team) {
    return {{"apiVersion", "kueue.x-k8s.io/" + version},
            {"kind", "ClusterQueue"},
            {"metadata", {{"name", name}, {"labels", {{"team", team}}}}},
            {"spec", {{"cohort", "org"}}}};
  }
  static json Cm(const std::string& ns, const std::string& name) {
    return {{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", {{"name", name}, {"namespace", ns}}}};
  }
  // The names in the text cache's list, in order, and whether each equals List()'s.
  void ExpectCacheEqualsStore(const std::string& resource, const std::string& ns) {
    auto stored = store_->List(resource, ns);
    ASSERT_TRUE(stored.ok());
    const ObjectStore::TextList texts = store_->ListText(resource, ns);
    EXPECT_EQ(texts.resource_version, stored->resource_version);
    ASSERT_EQ(texts.items.size(), stored->items.size());
    for (size_t i = 0; i < texts.items.size(); ++i) {
      EXPECT_EQ(json::parse(texts.items[i]->text), stored->items[i]) << i;
    }
  }

  const control::ResourceType& CqType() {
    return *control::FindResource("kueue.x-k8s.io", "v1beta1", "clusterqueues");
  }

  std::filesystem::path dir_;
  std::unique_ptr<ObjectStore> store_;
};

TEST_F(ListResponseTest, TheTextCacheFollowsEveryCommit) {
  const std::string cms = "configmaps";
  for (const char* ns : {"b", "a", "c"}) {
    for (const char* name : {"z", "x", "y"}) {
      ASSERT_TRUE(store_->Create({cms, ns, name}, Cm(ns, name)).ok());
    }
  }
  ExpectCacheEqualsStore(cms, "");
  ExpectCacheEqualsStore(cms, "a");
  ExpectCacheEqualsStore(cms, "nope");
  ASSERT_TRUE(store_
                  ->Update(
                      {cms, "a", "x"},
                      [] {
                        json o = Cm("a", "x");
                        o["data"] = {{"k", "v"}};
                        return o;
                      }(),
                      WriteScope::kAll)
                  .ok());
  ASSERT_TRUE(store_->Delete({cms, "b", "y"}).ok());
  ExpectCacheEqualsStore(cms, "");
  // A batch that commits shows; one that rolls back leaves nothing behind.
  ASSERT_TRUE(store_
                  ->Batch([&] {
                    store_->Create({cms, "d", "n"}, Cm("d", "n"));
                    store_->Delete({cms, "c", "z"});
                  })
                  .ok());
  ExpectCacheEqualsStore(cms, "");
  EXPECT_THROW(store_->Batch([&] {
    store_->Create({cms, "e", "gone"}, Cm("e", "gone"));
    store_->Delete({cms, "a", "y"});
    throw std::runtime_error("mid-batch failure");
  }),
               std::runtime_error);
  ExpectCacheEqualsStore(cms, "");
  EXPECT_EQ(store_->ListText(cms, "e").items.size(), 0u);
  EXPECT_EQ(store_->ListText(cms, "a").items.size(), 3u);
  // A restart loads it from the database.
  store_.reset();
  store_ = Open();
  ExpectCacheEqualsStore(cms, "");
}

TEST_F(ListResponseTest, TheBodyCopiesStoredItemsAndPresentsOthersAtTheAskedVersion) {
  const std::string key = CqType().StoreKey();
  ASSERT_TRUE(store_->Create({key, "", "a"}, Cq("a", "v1beta1", "ml")).ok());
  ASSERT_TRUE(store_->Create({key, "", "b"}, Cq("b", "v1beta2", "ml")).ok());
  ASSERT_TRUE(store_->Create({key, "", "c"}, Cq("c", "v1beta1", "infra")).ok());
  const auto texts = store_->ListText(key, "");
  const json v1 = json::parse(WriteListBody(texts, CqType(), "v1beta1", {}, {}));
  EXPECT_EQ(v1["kind"], "ClusterQueueList");
  EXPECT_EQ(v1["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(v1["metadata"]["resourceVersion"], std::to_string(texts.resource_version));
  ASSERT_EQ(v1["items"].size(), 3u);
  for (const auto& item : v1["items"]) EXPECT_EQ(item["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(v1["items"][1]["metadata"]["name"], "b");
  EXPECT_EQ(v1["items"][1]["spec"]["cohort"], "org");
  const json v2 = json::parse(WriteListBody(texts, CqType(), "v1beta2", {}, {}));
  for (const auto& item : v2["items"]) EXPECT_EQ(item["apiVersion"], "kueue.x-k8s.io/v1beta2");

  auto team = LabelSelector::Parse("team=ml");
  auto not_b = FieldSelector::Parse("metadata.name!=b");
  ASSERT_TRUE(team.ok() && not_b.ok());
  const json ml = json::parse(WriteListBody(texts, CqType(), "v1beta1", *team, {}));
  ASSERT_EQ(ml["items"].size(), 2u);
  EXPECT_EQ(ml["items"][0]["metadata"]["name"], "a");
  EXPECT_EQ(ml["items"][1]["metadata"]["name"], "b");
  const json ml_not_b = json::parse(WriteListBody(texts, CqType(), "v1beta1", *team, *not_b));
  ASSERT_EQ(ml_not_b["items"].size(), 1u);
  EXPECT_EQ(ml_not_b["items"][0]["metadata"]["name"], "a");
  const json none =
      json::parse(WriteListBody(store_->ListText("nothing", ""), CqType(), "v1beta1", {}, {}));
  EXPECT_TRUE(none["items"].is_array());
  EXPECT_TRUE(none["items"].empty());
}

}  // namespace
}  // namespace muster::server
