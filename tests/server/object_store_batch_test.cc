// ObjectStore::Batch: many writes, one transaction (one fsync), changes published
// after the commit in order; a batch that fails rolls back as a whole.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "server/object_store.h"

namespace muster::server {
namespace {

using nlohmann::json;

class ObjectStoreBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("muster-store-batch-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<ObjectStore> Open() {
    auto s = ObjectStore::Open(dir_.string());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }

  static json Pod(const std::string& phase) {
    return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"status", {{"phase", phase}}}};
  }

  std::filesystem::path dir_;
};

TEST_F(ObjectStoreBatchTest, WritesCommitTogetherAndArePublishedAfterTheCommit) {
  auto store = Open();
  ASSERT_TRUE(store->Create({"pods", "ns", "a"}, Pod("Pending")).ok());
  std::vector<int64_t> seen;
  auto id = store->hub().Subscribe(
      [&](const WatchHub::ChangePtr& c) { seen.push_back(c->resource_version); });
  size_t seen_inside = 99;
  Status batch = store->Batch([&] {
    ASSERT_TRUE(store->Update({"pods", "ns", "a"}, Pod("Running"), WriteScope::kAll).ok());
    ASSERT_TRUE(store->Create({"pods", "ns", "b"}, Pod("Running")).ok());
    // A refused write does not spoil the batch.
    EXPECT_EQ(store->Create({"pods", "ns", "b"}, Pod("Running")).status().code(),
              StatusCode::kAlreadyExists);
    // Reads inside the batch see its writes; nested batches join it.
    EXPECT_TRUE(store->Get({"pods", "ns", "b"}).ok());
    EXPECT_TRUE(store->Batch([&] { ASSERT_TRUE(store->Delete({"pods", "ns", "a"}).ok()); }).ok());
    seen_inside = seen.size();
  });
  ASSERT_TRUE(batch.ok()) << batch.ToString();
  store->hub().Unsubscribe(id);
  EXPECT_EQ(seen_inside, 0u);
  EXPECT_EQ(seen, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(store->resource_version(), 4);

  // Durable: a reopened store has the batch's writes and continues the sequence.
  store.reset();
  store = Open();
  EXPECT_EQ(store->resource_version(), 4);
  EXPECT_EQ(store->Get({"pods", "ns", "a"}).status().code(), StatusCode::kNotFound);
  auto b = store->Get({"pods", "ns", "b"});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)["status"]["phase"], "Running");
  auto c = store->Create({"pods", "ns", "c"}, Pod("Pending"));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)["metadata"]["resourceVersion"], "5");
}

TEST_F(ObjectStoreBatchTest, AFailedBatchRollsBackEveryWrite) {
  auto store = Open();
  ASSERT_TRUE(store->Create({"pods", "ns", "a"}, Pod("Pending")).ok());
  std::vector<int64_t> seen;
  auto id = store->hub().Subscribe(
      [&](const WatchHub::ChangePtr& c) { seen.push_back(c->resource_version); });
  EXPECT_THROW(store->Batch([&] {
    store->Update({"pods", "ns", "a"}, Pod("Running"), WriteScope::kAll);
    store->Create({"pods", "ns", "b"}, Pod("Running"));
    throw std::runtime_error("the caller fails halfway");
  }),
               std::runtime_error);
  store->hub().Unsubscribe(id);
  EXPECT_TRUE(seen.empty());
  EXPECT_EQ(store->resource_version(), 1);
  EXPECT_EQ(store->Get({"pods", "ns", "b"}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ((*store->Get({"pods", "ns", "a"}))["status"]["phase"], "Pending");
  // The store is usable afterwards and the sequence has no gap.
  auto b = store->Create({"pods", "ns", "b"}, Pod("Running"));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)["metadata"]["resourceVersion"], "2");
}

}  // namespace
}  // namespace muster::server
