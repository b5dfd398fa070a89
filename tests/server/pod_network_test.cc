#include "server/pod_network.h"

#include <gtest/gtest.h>

#include "server/user_map.h"

namespace muster::server {
namespace {

TEST(PodAddressPoolTest, LowestFreeAddressSkippingZeroAndBroadcast) {
  PodAddressPool pool(40);
  EXPECT_EQ(pool.Allocate(), "127.40.0.1");
  EXPECT_EQ(pool.Allocate(), "127.40.0.2");
  pool.Release("127.40.0.1");
  EXPECT_EQ(pool.Allocate(), "127.40.0.1");
  EXPECT_TRUE(pool.Reserve("127.40.0.254"));
  EXPECT_FALSE(pool.Reserve("127.41.0.3"));  // another server's range
  EXPECT_FALSE(pool.Reserve("10.0.0.1"));
  EXPECT_FALSE(pool.Reserve("127.40.0"));
  for (int i = 3; i < 254; ++i) pool.Allocate();
  EXPECT_EQ(pool.Allocate(), "127.40.1.1");  // .255 and .0 skipped
  EXPECT_GE(PodAddressPool::OctetFor("/var/lib/muster"), 16);
  EXPECT_EQ(PodAddressPool::OctetFor("/a"), PodAddressPool::OctetFor("/a"));
}

DnsPod Pod(std::string ns, std::string host, std::string sub, std::string ip,
           model::StringMap labels = {}) {
  DnsPod p;
  p.namespace_ = std::move(ns);
  p.hostname = std::move(host);
  p.subdomain = std::move(sub);
  p.ip = std::move(ip);
  p.labels = std::move(labels);
  return p;
}

// The seed 001 lab: an Indexed Job with subdomain pytorch-ddp-svc and the headless
// Service of that name selecting job-name=pytorch-ddp.
TEST(HostsFileTest, HeadlessServicePodRecordsAndServiceName) {
  std::vector<DnsPod> pods = {
      Pod("default", "pytorch-ddp-0", "pytorch-ddp-svc", "127.9.0.1",
          {{"job-name", "pytorch-ddp"}}),
      Pod("default", "pytorch-ddp-1", "pytorch-ddp-svc", "127.9.0.2",
          {{"job-name", "pytorch-ddp"}}),
      Pod("other", "x-0", "pytorch-ddp-svc", "127.9.0.3", {{"job-name", "pytorch-ddp"}})};
  std::vector<DnsService> services = {
      {"default", "pytorch-ddp-svc", {{"job-name", "pytorch-ddp"}}}};
  std::string hosts = HostsFile(pods[1], pods, services);
  EXPECT_NE(hosts.find("127.0.0.1\tlocalhost\n"), std::string::npos);
  EXPECT_NE(hosts.find("127.9.0.2\tpytorch-ddp-1.pytorch-ddp-svc.default.svc.cluster.local\t"
                       "pytorch-ddp-1\n"),
            std::string::npos)
      << hosts;
  EXPECT_NE(hosts.find("127.9.0.1\tpytorch-ddp-0.pytorch-ddp-svc.default.svc.cluster.local\t"
                       "pytorch-ddp-0.pytorch-ddp-svc.default.svc\t"
                       "pytorch-ddp-0.pytorch-ddp-svc.default\tpytorch-ddp-0.pytorch-ddp-svc\n"),
            std::string::npos)
      << hosts;
  // The Service name resolves to the pods it selects.
  EXPECT_NE(hosts.find("127.9.0.1\tpytorch-ddp-svc.default.svc.cluster.local\t"
                       "pytorch-ddp-svc.default.svc\tpytorch-ddp-svc.default\tpytorch-ddp-svc\n"),
            std::string::npos)
      << hosts;
  // A pod of another namespace has no Service of that name there: no record.
  EXPECT_EQ(hosts.find("127.9.0.3"), std::string::npos) << hosts;

  // Without the Service, only the pod's own line remains (as in a cluster).
  std::string bare = HostsFile(pods[1], pods, {});
  EXPECT_EQ(bare.find("pytorch-ddp-0"), std::string::npos) << bare;
  EXPECT_EQ(HostsFile(pods[1], pods, services), hosts);  // deterministic
}

TEST(HostsFileTest, ControllerServicesAndOtherNamespaces) {
  DnsPod master = Pod("ml", "pt-master-0", "", "127.9.0.1");
  master.per_pod_service = true;
  DnsPod worker = Pod("ml", "mpi-worker-0", "mpi", "127.9.0.2");
  worker.subdomain_by_controller = true;
  DnsPod viewer = Pod("team", "viewer", "", "127.9.0.9");
  std::string hosts = HostsFile(viewer, {master, worker, viewer}, {});
  // Long forms only from another namespace.
  EXPECT_NE(hosts.find("127.9.0.1\tpt-master-0.ml.svc.cluster.local\tpt-master-0.ml.svc\t"
                       "pt-master-0.ml\n"),
            std::string::npos)
      << hosts;
  EXPECT_NE(hosts.find("127.9.0.2\tmpi-worker-0.mpi.ml.svc.cluster.local\t"
                       "mpi-worker-0.mpi.ml.svc\tmpi-worker-0.mpi.ml\n"),
            std::string::npos)
      << hosts;
  std::string same = HostsFile(master, {master, worker}, {});
  EXPECT_NE(same.find("\tpt-master-0.ml\tpt-master-0\n"), std::string::npos) << same;
  EXPECT_NE(same.find("\tmpi-worker-0.mpi\n"), std::string::npos) << same;
}

TEST(UserMapTest, ParsesPairsAndMapsOwners) {
  auto map = UserMap::Parse("# owner account\nalice@example.com alice\n\nsystem:admin root  # x\n",
                            "users.txt");
  ASSERT_TRUE(map.ok()) << map.status().message();
  EXPECT_EQ(map->AccountName("alice@example.com"), "alice");
  EXPECT_EQ(map->AccountName("bob"), "bob");  // the same name by default
  auto root = map->Resolve("system:admin");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->uid, 0u);
  auto missing = map->Resolve("no-such-user-xyz");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("owner \"no-such-user-xyz\" has no local account"),
            std::string::npos)
      << missing.status().message();

  auto bad = UserMap::Parse("alice\n", "users.txt");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "users.txt:1: want \"OWNER ACCOUNT\" (two fields), got \"alice\"");
  EXPECT_FALSE(UserMap::Parse("a b\na c\n", "f").ok());
  auto star = UserMap::Parse("* nobody\n", "f");
  ASSERT_TRUE(star.ok());
  EXPECT_EQ(star->AccountName("anyone"), "nobody");
}

}  // namespace
}  // namespace muster::server
