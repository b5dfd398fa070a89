#include "kube/leader_election.h"

#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "kube/serve_stack.h"

namespace muster::kube {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::ServeStack;

const std::string kLease = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/muster";

// A paused monotonic clock shared by the electors of a test.
struct FakeClock {
  std::atomic<int64_t> ms{1000000};
  std::function<std::chrono::steady_clock::time_point()> Fn() {
    return [this] { return std::chrono::steady_clock::time_point(milliseconds(ms.load())); };
  }
  void Advance(milliseconds d) { ms += d.count(); }
};

LeaderElectionConfig Config(const std::string& identity, FakeClock* clock = nullptr) {
  LeaderElectionConfig c;
  c.lease_namespace = "kube-system";
  c.lease_name = "muster";
  c.identity = identity;
  if (clock != nullptr) c.clock = clock->Fn();
  return c;
}

json GetLease(KubeClient& client) {
  HttpResponse r = client.Get(kLease);
  EXPECT_EQ(r.code, 200) << r.body;
  return json::parse(r.body, nullptr, false);
}

TEST(LeaderElectionTest, FormatMicroTime) {
  const auto t = std::chrono::system_clock::time_point(std::chrono::microseconds(1700000000000042));
  EXPECT_EQ(FormatMicroTime(t), "2023-11-14T22:13:20.000042Z");
  EXPECT_NE(DefaultLeaderIdentity(), DefaultLeaderIdentity());
}

TEST(LeaderElectionTest, FirstCreatesTheLeaseSecondWaitsUntilItExpires) {
  ServeStack stack;
  KubeClient client(stack.connection());
  FakeClock clock;
  LeaderElector a(client, Config("a", &clock));
  LeaderElector b(client, Config("b", &clock));

  ASSERT_TRUE(a.TryAcquireOrRenew());  // 404 -> POST
  json lease = GetLease(client);
  EXPECT_EQ(lease["spec"]["holderIdentity"], "a");
  EXPECT_EQ(lease["spec"]["leaseDurationSeconds"], 15);
  EXPECT_EQ(lease["spec"]["leaseTransitions"], 0);
  const std::regex micro_time(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)");
  EXPECT_TRUE(std::regex_match(lease["spec"]["acquireTime"].get<std::string>(), micro_time));
  EXPECT_TRUE(std::regex_match(lease["spec"]["renewTime"].get<std::string>(), micro_time));

  EXPECT_FALSE(b.TryAcquireOrRenew());
  EXPECT_EQ(b.observed_holder(), "a");
  clock.Advance(seconds(10));
  ASSERT_TRUE(a.TryAcquireOrRenew());  // a renews: the record changes
  const std::string acquired = lease["spec"]["acquireTime"];
  EXPECT_EQ(GetLease(client)["spec"]["acquireTime"], acquired);  // kept on renewal
  // b saw the record change now, so a's 15 s count from here, whatever renewTime says.
  EXPECT_FALSE(b.TryAcquireOrRenew());
  clock.Advance(seconds(14));
  EXPECT_FALSE(b.TryAcquireOrRenew());  // unchanged for 14 s: not expired yet
  clock.Advance(seconds(2));
  ASSERT_TRUE(b.TryAcquireOrRenew());  // unchanged for 16 s: b takes over
  lease = GetLease(client);
  EXPECT_EQ(lease["spec"]["holderIdentity"], "b");
  EXPECT_EQ(lease["spec"]["leaseTransitions"], 1);
  EXPECT_FALSE(a.TryAcquireOrRenew());
  EXPECT_EQ(a.observed_holder(), "b");
}

TEST(LeaderElectionTest, ExpiryIsJudgedByObservationNotByTheRecordsTimestamps) {
  ServeStack stack;
  KubeClient client(stack.connection());
  FakeClock clock;
  LeaderElector a(client, Config("a", &clock));
  ASSERT_TRUE(a.TryAcquireOrRenew());
  // A lease written long ago by a clock far behind ours: b has only just seen it, so it
  // waits a full lease duration rather than trusting the old renewTime.
  json lease = GetLease(client);
  lease["spec"]["renewTime"] = "2001-01-01T00:00:00.000000Z";
  ASSERT_EQ(client.Request("PUT", kLease, lease.dump()).code, 200);
  LeaderElector b(client, Config("b", &clock));
  EXPECT_FALSE(b.TryAcquireOrRenew());
  clock.Advance(seconds(16));
  EXPECT_TRUE(b.TryAcquireOrRenew());
}

TEST(LeaderElectionTest, ReleaseLetsAStandbyTakeOverAtOnce) {
  ServeStack stack;
  KubeClient client(stack.connection());
  FakeClock clock;
  LeaderElector a(client, Config("a", &clock));
  LeaderElector b(client, Config("b", &clock));
  ASSERT_TRUE(a.TryAcquireOrRenew());
  EXPECT_FALSE(b.TryAcquireOrRenew());
  ASSERT_TRUE(a.Release());
  json lease = GetLease(client);
  EXPECT_EQ(lease["spec"]["holderIdentity"], "");
  EXPECT_FALSE(b.Release());           // not b's to release
  EXPECT_TRUE(b.TryAcquireOrRenew());  // no clock advance needed
  EXPECT_EQ(GetLease(client)["spec"]["holderIdentity"], "b");
  EXPECT_FALSE(a.Release());  // no longer a's
}

TEST(LeaderElectionTest, ConflictingUpdateIsRetriedNextPeriod) {
  ServeStack stack;
  KubeClient client(stack.connection());
  FakeClock clock;
  LeaderElector a(client, Config("a", &clock));
  LeaderElector b(client, Config("b", &clock));
  ASSERT_TRUE(a.TryAcquireOrRenew());
  EXPECT_FALSE(b.TryAcquireOrRenew());
  clock.Advance(seconds(16));  // a's lease expired in b's eyes

  // Between b's GET and b's PUT, a renews (written straight to the API): b's PUT carries
  // a stale resourceVersion and gets 409 from the store.
  std::atomic<int> conflicts{0};
  stack.set_hook([&](const server::ApiRequest& r) -> std::optional<server::ApiResponse> {
    if (r.method != "PUT" || conflicts > 0) return std::nullopt;
    ++conflicts;
    server::ApiRequest get{"GET", r.path, {}, "application/json", "", "", {}};
    auto current = json::parse(std::get<server::ApiResponse>(stack.handler().Handle(get)).body);
    current["spec"]["renewTime"] = FormatMicroTime(std::chrono::system_clock::now());
    server::ApiRequest renew{"PUT",          r.path, {}, "application/json", "application/json",
                             current.dump(), {}};
    EXPECT_EQ(std::get<server::ApiResponse>(stack.handler().Handle(renew)).code, 200);
    return std::nullopt;  // now serve b's (stale) PUT
  });
  EXPECT_FALSE(b.TryAcquireOrRenew());
  EXPECT_EQ(conflicts.load(), 1);
  EXPECT_EQ(GetLease(client)["spec"]["holderIdentity"], "a");
  // Next period: b sees the renewed record, so a's lease is fresh again.
  EXPECT_FALSE(b.TryAcquireOrRenew());
  clock.Advance(seconds(16));
  EXPECT_TRUE(b.TryAcquireOrRenew());
}

TEST(LeaderElectionTest, CreateRaceLosesWithoutLeading) {
  ServeStack stack;
  KubeClient client(stack.connection());
  LeaderElector a(client, Config("a"));
  // Someone creates the lease between a's GET (404) and a's POST.
  stack.set_hook([&](const server::ApiRequest& r) -> std::optional<server::ApiResponse> {
    if (r.method != "POST") return std::nullopt;
    server::ApiRequest other = r;
    auto body = json::parse(r.body);
    body["spec"]["holderIdentity"] = "other";
    other.body = body.dump();
    EXPECT_EQ(std::get<server::ApiResponse>(stack.handler().Handle(other)).code, 201);
    return std::nullopt;
  });
  EXPECT_FALSE(a.TryAcquireOrRenew());
  EXPECT_EQ(GetLease(client)["spec"]["holderIdentity"], "other");
}

// Waits for `pred` (the electors' threads run on real time); fails after 10 s.
template <typename Pred>
bool WaitForLeases(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + seconds(10);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

TEST(LeaderElectionTest, TwoReplicasOneLeadsAndStopHandsOver) {
  ServeStack stack;
  KubeClient client(stack.connection());
  std::atomic<int> a_started{0}, a_stopped{0}, b_started{0}, b_stopped{0};
  auto config = [](const std::string& id, std::atomic<int>& started, std::atomic<int>& stopped) {
    LeaderElectionConfig c = Config(id);
    c.lease_duration = seconds(15);  // a standby could only win by release, never by expiry
    c.retry_period = milliseconds(20);
    c.on_started_leading = [&started] { ++started; };
    c.on_stopped_leading = [&stopped] { ++stopped; };
    return c;
  };
  LeaderElector a(client, config("a", a_started, a_stopped));
  LeaderElector b(client, config("b", b_started, b_stopped));
  a.Start();
  ASSERT_TRUE(WaitForLeases([&] { return a.is_leader(); }));
  b.Start();
  ASSERT_TRUE(WaitForLeases([&] { return b.observed_holder() == "a"; }));
  EXPECT_FALSE(b.is_leader());
  EXPECT_EQ(a_started.load(), 1);

  a.Stop();  // releases the lease
  EXPECT_FALSE(a.is_leader());
  EXPECT_EQ(a_stopped.load(), 1);
  ASSERT_TRUE(WaitForLeases([&] { return b.is_leader(); }));
  EXPECT_EQ(b_started.load(), 1);
  EXPECT_EQ(GetLease(client)["spec"]["holderIdentity"], "b");
  EXPECT_EQ(GetLease(client)["spec"]["leaseTransitions"], 1);
  b.Stop();
  EXPECT_EQ(b_stopped.load(), 1);
  EXPECT_EQ(GetLease(client)["spec"]["holderIdentity"], "");
}

TEST(LeaderElectionTest, LeaderStepsDownWhenAnotherTookTheLease) {
  ServeStack stack;
  KubeClient client(stack.connection());
  std::atomic<int> stopped{0};
  LeaderElectionConfig c = Config("a");
  c.retry_period = milliseconds(20);
  c.on_stopped_leading = [&stopped] { ++stopped; };
  LeaderElector a(client, c);
  a.Start();
  ASSERT_TRUE(WaitForLeases([&] { return a.is_leader(); }));
  // Another replica overwrites the lease (say, after a partition made it think a's had
  // expired): a must stop leading at its next attempt, not after renew_deadline.
  for (int attempt = 0; attempt < 10; ++attempt) {
    json lease = GetLease(client);
    lease["spec"]["holderIdentity"] = "intruder";
    if (client.Request("PUT", kLease, lease.dump()).code == 200) break;
  }
  ASSERT_TRUE(WaitForLeases([&] { return !a.is_leader(); }));
  EXPECT_EQ(stopped.load(), 1);
  a.Stop();
  EXPECT_EQ(stopped.load(), 1);
  EXPECT_EQ(GetLease(client)["spec"]["holderIdentity"], "intruder");
}

}  // namespace
}  // namespace muster::kube
