#include "server/object_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace muster::server {
namespace {

using nlohmann::json;

class ObjectStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("muster-store-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<ObjectStore> Open() {
    StoreOptions opts;
    opts.now = [] { return std::string("2025-01-01T00:00:00Z"); };
    auto s = ObjectStore::Open(dir_.string(), opts);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }

  static json Cq(const std::string& cohort) {
    return {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
            {"kind", "ClusterQueue"},
            {"metadata", {{"name", "team-a"}}},
            {"spec", {{"cohort", cohort}}}};
  }

  std::filesystem::path dir_;
  const control::ObjectKey key_{"clusterqueues.kueue.x-k8s.io", "", "team-a"};
};

TEST_F(ObjectStoreTest, CreateAssignsServerFields) {
  auto store = Open();
  auto created = store->Create(key_, Cq("org"));
  ASSERT_TRUE(created.ok());
  const json& md = (*created)["metadata"];
  EXPECT_EQ(md["resourceVersion"], "1");
  EXPECT_EQ(md["generation"], 1);
  EXPECT_EQ(md["creationTimestamp"], "2025-01-01T00:00:00Z");
  EXPECT_EQ(md["uid"].get<std::string>().size(), 36u);
  EXPECT_EQ(store->Create(key_, Cq("org")).status().code(), StatusCode::kAlreadyExists);
}

TEST_F(ObjectStoreTest, ResourceVersionIsMonotonicAcrossKeys) {
  auto store = Open();
  int64_t last = 0;
  for (int i = 0; i < 5; ++i) {
    auto c =
        store->Create({"pods", "default", "p" + std::to_string(i)}, {{"metadata", json::object()}});
    ASSERT_TRUE(c.ok());
    int64_t rv = *ParseResourceVersion(*c);
    EXPECT_GT(rv, last);
    last = rv;
  }
  ASSERT_TRUE(store->Delete({"pods", "default", "p0"}).ok());
  EXPECT_EQ(store->resource_version(), last + 1);
}

TEST_F(ObjectStoreTest, StaleUpdateConflicts) {
  auto store = Open();
  json v1 = *store->Create(key_, Cq("org"));
  json v2 = v1;
  v2["spec"]["cohort"] = "other";
  auto updated = store->Update(key_, v2, WriteScope::kAll);
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ((*updated)["metadata"]["generation"], 2);
  // v1 still carries resourceVersion 1.
  v1["spec"]["cohort"] = "third";
  EXPECT_EQ(store->Update(key_, v1, WriteScope::kAll).status().code(), StatusCode::kConflict);
  EXPECT_EQ(store->Delete(key_, int64_t{1}).status().code(), StatusCode::kConflict);
}

TEST_F(ObjectStoreTest, StatusScopes) {
  auto store = Open();
  json obj = *store->Create(key_, Cq("org"));
  obj["status"] = {{"pendingWorkloads", 3}};
  auto spec_write = store->Update(key_, obj, WriteScope::kSpec);
  ASSERT_TRUE(spec_write.ok());
  EXPECT_FALSE(spec_write->contains("status"));  // main resource ignores status
  obj = *spec_write;
  obj["status"] = {{"pendingWorkloads", 3}};
  obj["spec"]["cohort"] = "ignored";
  auto status_write = store->Update(key_, obj, WriteScope::kStatus);
  ASSERT_TRUE(status_write.ok());
  EXPECT_EQ((*status_write)["status"]["pendingWorkloads"], 3);
  EXPECT_EQ((*status_write)["spec"]["cohort"], "org");
  EXPECT_EQ((*status_write)["metadata"]["generation"], 1);
}

TEST_F(ObjectStoreTest, NoOpUpdateKeepsResourceVersion) {
  auto store = Open();
  json obj = *store->Create(key_, Cq("org"));
  auto again = store->Update(key_, obj, WriteScope::kAll);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)["metadata"]["resourceVersion"], "1");
  EXPECT_EQ(store->resource_version(), 1);
}

TEST_F(ObjectStoreTest, SurvivesRestartWithHistory) {
  {
    auto store = Open();
    ASSERT_TRUE(store->Create(key_, Cq("org")).ok());
    ASSERT_TRUE(store->Create({"pods", "ns", "a"}, {{"metadata", json::object()}}).ok());
    ASSERT_TRUE(store->Delete({"pods", "ns", "a"}).ok());
  }
  auto store = Open();
  EXPECT_EQ(store->resource_version(), 3);
  auto got = store->Get(key_);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["spec"]["cohort"], "org");
  EXPECT_EQ(store->Get({"pods", "ns", "a"}).status().code(), StatusCode::kNotFound);
  auto events = store->hub().Since(0);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[2]->type, control::ChangeType::kDeleted);
  // New writes continue the sequence.
  auto c = store->Create({"pods", "ns", "b"}, {{"metadata", json::object()}});
  EXPECT_EQ((*c)["metadata"]["resourceVersion"], "4");
}

TEST_F(ObjectStoreTest, SecondOpenOfSameDirectoryFails) {
  auto store = Open();
  auto second = ObjectStore::Open(dir_.string());
  EXPECT_FALSE(second.ok());
}

TEST_F(ObjectStoreTest, SubscribersSeeCommitsInOrder) {
  auto store = Open();
  std::vector<int64_t> seen;
  auto id = store->hub().Subscribe(
      [&](const WatchHub::ChangePtr& c) { seen.push_back(c->resource_version); });
  store->Create(key_, Cq("a"));
  store->Mutate(
      key_,
      [](const json& cur) -> Result<json> {
        json next = cur;
        next["spec"]["cohort"] = "b";
        return next;
      },
      WriteScope::kSpec);
  store->hub().Unsubscribe(id);
  store->Delete(key_);
  EXPECT_EQ(seen, (std::vector<int64_t>{1, 2}));
}

// Group commit: writes made while another transaction holds the store queue up and
// then share one commit, each with its own outcome (a duplicate create fails alone).
TEST_F(ObjectStoreTest, ConcurrentWritesShareACommitEachWithItsOwnOutcome) {
  auto store = Open();
  ASSERT_TRUE(store);
  auto pod = [](const std::string& name) {
    return json{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}}}};
  };
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> holding{false};
  std::thread holder([&] {
    ASSERT_TRUE(store
                    ->Batch([&] {
                      store->Create({"pods", "ns", "held"}, pod("held"));
                      holding = true;
                      released.wait();
                    })
                    .ok());
  });
  while (!holding) std::this_thread::yield();
  const int64_t before = store->commits();
  // Eight writers; two of them create the same name.
  const std::vector<std::string> names = {"a", "b", "c", "d", "e", "f", "g", "a"};
  std::vector<std::optional<Status>> outcomes(names.size());
  std::vector<std::thread> writers;
  for (size_t i = 0; i < names.size(); ++i) {
    writers.emplace_back([&, i] {
      auto r = store->Create({"pods", "ns", names[i]}, pod(names[i]));
      outcomes[i] = r.ok() ? Status::Ok() : r.status();
    });
  }
  // The first writer leads a group of itself and waits on the held store; the other
  // seven queue behind it.
  while (store->queued_writes() < names.size() - 1) std::this_thread::yield();
  release.set_value();
  holder.join();
  for (auto& w : writers) w.join();
  // The held batch, the first group, the group of seven: three commits for nine writes.
  EXPECT_EQ(store->commits() - before, 3);
  int ok = 0, exists = 0;
  for (const auto& o : outcomes) {
    ASSERT_TRUE(o.has_value());
    if (o->ok()) ++ok;
    if (o->code() == StatusCode::kAlreadyExists) ++exists;
  }
  EXPECT_EQ(ok, 7);
  EXPECT_EQ(exists, 1);
  auto pods = store->List("pods", "ns");
  ASSERT_TRUE(pods.ok());
  EXPECT_EQ(pods->items.size(), 8u);  // held, a..g
  EXPECT_EQ(store->resource_version(), 8);
}

TEST(WatchHubTest, TooOldResourceVersionIsRefused) {
  WatchHub hub(/*retention=*/2);
  hub.Reset(0, {});
  for (int64_t rv = 1; rv <= 4; ++rv)
    hub.Publish({rv, control::ChangeType::kAdded, "pods", "", "x", nullptr, nullptr});
  EXPECT_FALSE(hub.Since(1).ok());
  auto recent = hub.Since(2);
  ASSERT_TRUE(recent.ok());
  EXPECT_EQ(recent->size(), 2u);
}

// A row that does not parse is set aside and reported, never served silently nor
// left to crash the server at every start.
TEST_F(ObjectStoreTest, UnreadableRowsAreSetAsideAndReported) {
  {
    auto store = Open();
    ASSERT_TRUE(store->Create(key_, Cq("org")).ok());
    json other = Cq("org");
    other["metadata"]["name"] = "team-b";
    ASSERT_TRUE(store->Create({key_.resource, "", "team-b"}, other).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "muster.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE events SET body = '{\"metadata\": {\"na' "
                         "WHERE rv = (SELECT rv FROM objects WHERE name = 'team-b')",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_EQ(store->quarantined().size(), 1u);
  EXPECT_EQ(store->quarantined()[0], "clusterqueues.kueue.x-k8s.io team-b: not JSON");
  auto list = store->List(key_.resource, "");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0]["metadata"]["name"], "team-a");
  store.reset();
  // Reported once: the next start finds a healthy store.
  EXPECT_TRUE(Open()->quarantined().empty());
}

// A store written before bodies were kept once (the objects table held a copy) opens
// with every object and its resourceVersion, and takes writes.
TEST_F(ObjectStoreTest, AStoreWithBodiesInItsObjectsTableIsMigrated) {
  std::filesystem::create_directories(dir_);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "muster.db").c_str(), &db), SQLITE_OK);
  // rv 3's change was pruned from the log; rv 9 deleted a third object.
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
                         "INSERT INTO meta VALUES ('rv', 8);"
                         "CREATE TABLE objects (resource TEXT NOT NULL, namespace TEXT NOT NULL,"
                         " name TEXT NOT NULL, rv INTEGER NOT NULL, body TEXT NOT NULL,"
                         " PRIMARY KEY (resource, namespace, name)) WITHOUT ROWID;"
                         "CREATE TABLE events (rv INTEGER PRIMARY KEY, type TEXT NOT NULL,"
                         " resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,"
                         " body TEXT NOT NULL);"
                         "INSERT INTO objects VALUES ('pods', 'ns', 'a', 3, "
                         " '{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"3\"}}');"
                         "INSERT INTO objects VALUES ('pods', 'ns', 'b', 8, "
                         " '{\"metadata\":{\"name\":\"b\",\"resourceVersion\":\"8\"}}');"
                         "INSERT INTO events VALUES (8, 'ADDED', 'pods', 'ns', 'b', "
                         " '{\"metadata\":{\"name\":\"b\",\"resourceVersion\":\"8\"}}');"
                         "INSERT INTO events VALUES (9, 'DELETED', 'pods', 'ns', 'c', "
                         " '{\"metadata\":{\"name\":\"c\",\"resourceVersion\":\"9\"}}');",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  for (int start = 0; start < 2; ++start) {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    EXPECT_TRUE(store->quarantined().empty());
    EXPECT_EQ(store->resource_version(), 9 + start);
    auto list = store->List("pods", "ns");
    ASSERT_TRUE(list.ok());
    ASSERT_EQ(list->items.size(), 2u);
    EXPECT_EQ(list->items[0]["metadata"]["resourceVersion"], start == 0 ? "3" : "10");
    EXPECT_EQ(list->items[1]["metadata"]["name"], "b");
    if (start == 0) {
      auto updated = store->Mutate(
          {"pods", "ns", "a"},
          [](const json& current) -> Result<json> {
            json next = current;
            next["spec"] = {{"x", 1}};
            return next;
          },
          WriteScope::kAll);
      ASSERT_TRUE(updated.ok()) << updated.status().ToString();
      EXPECT_EQ((*updated)["metadata"]["resourceVersion"], "10");
    }
  }
}

// Pruning the change log keeps what is still an object's body, and the store's
// resourceVersion when the newest change (a deletion) is pruned too.
TEST_F(ObjectStoreTest, PruningKeepsBodiesAndTheResourceVersion) {
  StoreOptions opts;
  opts.event_retention = 0;
  {
    auto store = ObjectStore::Open(dir_.string(), opts);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Create({"pods", "ns", "kept"}, {{"metadata", json::object()}}).ok());
    ASSERT_TRUE((*store)->Create({"pods", "ns", "kept2"}, {{"metadata", json::object()}}).ok());
    // The 1,000th write, a deletion, prunes the log (every change but the two kept).
    ASSERT_TRUE((*store)
                    ->Batch([&] {
                      for (int i = 0; i < 499; ++i) {
                        const control::ObjectKey k{"pods", "ns", "p" + std::to_string(i)};
                        ASSERT_TRUE((*store)->Create(k, {{"metadata", json::object()}}).ok());
                        ASSERT_TRUE((*store)->Delete(k).ok());
                      }
                    })
                    .ok());
    EXPECT_EQ((*store)->resource_version(), 1000);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "muster.db").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* count = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM events", -1, &count, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(count), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(count, 0), 2);  // the bodies of kept and kept2
  sqlite3_finalize(count);
  sqlite3_close(db);
  auto store = ObjectStore::Open(dir_.string(), opts);
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE((*store)->quarantined().empty());
  EXPECT_EQ((*store)->resource_version(), 1000);
  auto kept = (*store)->Get({"pods", "ns", "kept"});
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ((*kept)["metadata"]["resourceVersion"], "1");
  EXPECT_EQ((*store)->List("pods", "ns")->items.size(), 2u);
}

// A data directory that had a store does not start as an empty cluster when the
// database file is gone or truncated to nothing.
TEST_F(ObjectStoreTest, TruncatedDatabaseIsRefused) {
  ASSERT_NE(Open(), nullptr);
  std::filesystem::resize_file(dir_ / "muster.db", 0);
  std::filesystem::remove(dir_ / "muster.db-wal");
  auto reopened = ObjectStore::Open(dir_.string());
  ASSERT_FALSE(reopened.ok());
  EXPECT_NE(reopened.status().message().find("refusing to start as an empty cluster"),
            std::string::npos)
      << reopened.status().message();
}

}  // namespace
}  // namespace muster::server
