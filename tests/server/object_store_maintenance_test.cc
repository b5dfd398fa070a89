// The store's operational side: write health (/readyz), the monitor's probe rule,
// and snapshots saved online and restored into a new data directory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "server/object_store.h"
#include "server/store_health_monitor.h"
#include "server/store_routes.h"

namespace muster::server {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class StoreMaintenanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("muster-maint-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  std::unique_ptr<ObjectStore> Open(const std::string& name, int64_t max_pages = 0) {
    StoreOptions opts;
    opts.max_page_count = max_pages;
    auto s = ObjectStore::Open((root_ / name).string(), opts);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }

  static json ConfigMap(const std::string& name, size_t bytes) {
    return {{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", {{"name", name}, {"namespace", "default"}}},
            {"data", {{"blob", std::string(bytes, 'x')}}}};
  }
  static control::ObjectKey Key(const std::string& name) { return {"configmaps", "default", name}; }

  fs::path root_;
};

TEST_F(StoreMaintenanceTest, AFullStoreIsNotReadyUntilItCanWriteAgain) {
  auto store = Open("full", /*max_pages=*/40);
  ASSERT_TRUE(store);
  EXPECT_TRUE(store->write_health().writable);
  EXPECT_TRUE(store->ProbeWritable().ok());
  Status failed;
  for (int i = 0; i < 200 && failed.ok(); ++i) {
    auto created = store->Create(Key("cm-" + std::to_string(i)), ConfigMap("cm", 8000));
    if (!created.ok()) failed = created.status();
  }
  ASSERT_FALSE(failed.ok()) << "40 pages should not hold 200 x 8 kB";
  const WriteHealth health = store->write_health();
  EXPECT_FALSE(health.writable);
  EXPECT_NE(health.reason.find("full"), std::string::npos) << health.reason;
  EXPECT_FALSE(store->ProbeWritable().ok());

  ApiRequest get;
  get.method = "GET";
  get.path = "/readyz";
  ApiResponse not_ready = HandleReadyz(*store, /*started=*/true, get);
  EXPECT_EQ(not_ready.code, 503);
  EXPECT_NE(not_ready.body.find("[-]store failed: "), std::string::npos) << not_ready.body;
  EXPECT_NE(not_ready.body.find("[+]started ok"), std::string::npos) << not_ready.body;

  // The same data with room to grow (the limit is the connection's, like a disk
  // that was given space): the probe takes, and readiness comes back.
  store.reset();
  store = Open("full");
  ASSERT_TRUE(store);
  EXPECT_TRUE(store->ProbeWritable().ok());
  EXPECT_TRUE(store->write_health().writable);
  EXPECT_EQ(HandleReadyz(*store, true, get).code, 200);
  EXPECT_EQ(HandleReadyz(*store, true, get).body, "ok");
  EXPECT_EQ(HandleReadyz(*store, false, get).code, 503);
}

TEST_F(StoreMaintenanceTest, TheMonitorProbesOnlyAfterAQuietSpellOrWhileFailing) {
  using Clock = StoreHealthMonitor::Clock;
  const Clock::time_point t0{};
  WriteHealth health;
  health.last_write = t0 + std::chrono::seconds(100);
  EXPECT_FALSE(StoreHealthMonitor::ProbeDue(health, t0 + std::chrono::seconds(101)));
  EXPECT_TRUE(StoreHealthMonitor::ProbeDue(health, t0 + std::chrono::seconds(105)));
  health.writable = false;
  EXPECT_TRUE(StoreHealthMonitor::ProbeDue(health, t0 + std::chrono::seconds(101)));
}

TEST_F(StoreMaintenanceTest, ASnapshotRestoresTheStoreAsItWasWhenTaken) {
  auto store = Open("live");
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->Create(Key("a"), ConfigMap("a", 10)).ok());
  ASSERT_TRUE(store->Create(Key("b"), ConfigMap("b", 10)).ok());
  const std::string snapshot = (root_ / "snap.db").string();
  auto rv = store->SaveSnapshot(snapshot);
  ASSERT_TRUE(rv.ok()) << rv.status().ToString();
  EXPECT_EQ(*rv, 2);
  EXPECT_EQ(fs::status(snapshot).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(store->SaveSnapshot(snapshot).status().code(), StatusCode::kAlreadyExists);
  // Written after the snapshot: not in it.
  ASSERT_TRUE(store->Create(Key("c"), ConfigMap("c", 10)).ok());
  ASSERT_TRUE(store->Delete(Key("a")).ok());

  auto restored_rv = ObjectStore::RestoreSnapshot(snapshot, (root_ / "restored").string());
  ASSERT_TRUE(restored_rv.ok()) << restored_rv.status().ToString();
  EXPECT_EQ(*restored_rv, 2);
  auto restored = Open("restored");
  ASSERT_TRUE(restored);
  EXPECT_EQ(restored->resource_version(), 2);
  auto items = restored->List("configmaps", "");
  ASSERT_TRUE(items.ok());
  ASSERT_EQ(items->items.size(), 2u);
  EXPECT_TRUE(restored->Get(Key("a")).ok());
  EXPECT_FALSE(restored->Get(Key("c")).ok());
  // The restored store goes on from the snapshot's resourceVersion.
  auto next = restored->Create(Key("d"), ConfigMap("d", 10));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ((*next)["metadata"]["resourceVersion"], "3");
}

TEST_F(StoreMaintenanceTest, RestoreRefusesAnExistingStoreAndFilesThatAreNotSnapshots) {
  auto store = Open("live");
  ASSERT_TRUE(store);
  const std::string snapshot = (root_ / "snap.db").string();
  ASSERT_TRUE(store->SaveSnapshot(snapshot).ok());

  auto over = ObjectStore::RestoreSnapshot(snapshot, (root_ / "live").string());
  EXPECT_EQ(over.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(over.status().message().find("already has a store"), std::string::npos);

  const std::string garbage = (root_ / "garbage.db").string();
  std::ofstream(garbage) << "this is not a database, just some text long enough to read";
  auto bad = ObjectStore::RestoreSnapshot(garbage, (root_ / "from-garbage").string());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("garbage.db"), std::string::npos);
  EXPECT_FALSE(fs::exists(root_ / "from-garbage" / "muster.db"));

  auto missing =
      ObjectStore::RestoreSnapshot((root_ / "nope.db").string(), (root_ / "from-missing").string());
  EXPECT_FALSE(missing.ok());
  EXPECT_FALSE(fs::exists(root_ / "from-missing" / "muster.db"));
}

}  // namespace
}  // namespace muster::server
