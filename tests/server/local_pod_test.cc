// How the local executor turns a pod into a process spec (local_pod.h): who runs it
// (the job's owner, never root for another owner, no account = no pod), a clean
// environment (nothing of the server's, LD_PRELOAD/LD_AUDIT dropped, HOME/USER/LOGNAME
// the account's), the working directory and the private view of the data directory.
// Nothing is started: these run without root (the accounts looked up are root and
// nobody, which every Debian machine has).
#include "server/local_pod.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>

namespace muster::server {
namespace {

namespace fs = std::filesystem;

class NoSources : public VolumeSources {
 public:
  const model::StringMap* ConfigMap(const std::string&) const override { return nullptr; }
  const model::StringMap* Secret(const std::string&) const override { return nullptr; }
  std::optional<ClaimInfo> Claim(const std::string&) const override { return std::nullopt; }
  bool ClaimInUse(const std::string&) const override { return false; }
};

class LocalPodTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "muster-local-pod-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    data_ = pattern;
    workload_.meta.api_version = "batch/v1";
    workload_.meta.kind = "Job";
    workload_.meta.name = "train";
    workload_.meta.namespace_ = "team-a";
    model::PodSet ps;
    ps.name = "main";
    model::Container c;
    c.name = "main";
    c.image = "busybox";
    c.command = {"sh", "-c", "id"};
    ps.tmpl.spec.containers.push_back(c);
    workload_.pod_sets.push_back(ps);
    server_.name = "muster-server";
    server_.uid = 0;
    server_.gid = 0;
    server_.home = "/root";
  }
  void TearDown() override { fs::remove_all(data_); }

  model::Container& Container() { return workload_.pod_sets[0].tmpl.spec.containers[0]; }
  void Own(const std::string& owner) { workload_.meta.annotations[kOwnerAnnotation] = owner; }
  Result<LocalPodPlan> Plan(bool isolate = true) {
    LocalPodConfig config;
    config.data_dir = data_;
    config.server = server_;
    config.isolate = isolate;
    LocalPodInput input;
    input.workload = &workload_;
    input.name = "train-0";
    input.ip = "127.1.0.2";
    input.node = "workstation";
    input.hosts = "127.1.0.2\ttrain-0\n";
    return PlanLocalPod(config, input, NoSources());
  }
  static std::optional<Account> Nobody() {
    auto a = UserMap::Lookup("nobody");
    if (!a.ok()) return std::nullopt;
    return *a;
  }

  std::string data_;
  model::Workload workload_;
  Account server_;
};

TEST_F(LocalPodTest, RunsAsTheOwnersAccountWithItsHomeAndNoNewPrivileges) {
  auto nobody = Nobody();
  if (!nobody) GTEST_SKIP() << "no nobody account";
  Own("nobody");
  auto plan = Plan();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->owner, "nobody");
  EXPECT_EQ(plan->account, "nobody");
  ASSERT_TRUE(plan->spec.credentials.has_value());
  EXPECT_EQ(plan->spec.credentials->uid, nobody->uid);
  EXPECT_EQ(plan->spec.credentials->gid, nobody->gid);
  EXPECT_TRUE(plan->spec.no_new_privs);
  EXPECT_EQ(plan->spec.env.at("USER"), "nobody");
  EXPECT_EQ(plan->spec.env.at("LOGNAME"), "nobody");
  EXPECT_EQ(plan->spec.env.at("HOME"),
            nobody->home.empty() ? data_ + "/pods/team-a_train-0/work" : nobody->home);
  EXPECT_EQ(plan->spec.env.at("HOSTNAME"), "train-0");
}

// Root's pods run as root only when root (the server's own account, or an owner that
// maps to root) owns the job; a job with no owner runs as the server.
TEST_F(LocalPodTest, RootOnlyForRootsJobs) {
  Own("root");
  auto plan = Plan();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_TRUE(plan->spec.credentials.has_value());
  EXPECT_EQ(plan->spec.credentials->uid, 0u);
  EXPECT_FALSE(plan->spec.no_new_privs);

  workload_.meta.annotations.clear();
  plan = Plan();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->owner, "muster-server");
  EXPECT_EQ(plan->spec.credentials->uid, server_.uid);
}

TEST_F(LocalPodTest, AnOwnerWithoutAnAccountIsRefusedNeverRoot) {
  Own("no-such-user-muster-test");
  auto plan = Plan();
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(plan.status().message().find("owner \"no-such-user-muster-test\" has no local account"),
            std::string::npos)
      << plan.status().message();
}

// A server that is not root runs pods only as itself: another owner is refused.
TEST_F(LocalPodTest, WithoutRootOtherOwnersAreRefused) {
  server_.name = "muster-server";
  server_.uid = 4242;
  Own("root");
  auto plan = Plan(/*isolate=*/false);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("runs pods only as that account"), std::string::npos)
      << plan.status().message();
}

// Only the pod's environment: nothing of the server's, the loader's injection
// variables dropped with a warning, a default PATH unless the pod sets one.
TEST_F(LocalPodTest, TheEnvironmentIsThePodsOnly) {
  ::setenv("MUSTER_LOCAL_POD_TEST_SERVER_ONLY", "leak", 1);
  Own("root");
  Container().env = {{"LD_PRELOAD", "/tmp/inject.so", std::nullopt},
                     {"LD_AUDIT", "/tmp/audit.so", std::nullopt},
                     {"GREETING", "hello", std::nullopt}};
  auto plan = Plan();
  ::unsetenv("MUSTER_LOCAL_POD_TEST_SERVER_ONLY");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const auto& env = plan->spec.env;
  EXPECT_EQ(env.count("MUSTER_LOCAL_POD_TEST_SERVER_ONLY"), 0u);
  EXPECT_EQ(env.count("LD_PRELOAD"), 0u);
  EXPECT_EQ(env.count("LD_AUDIT"), 0u);
  EXPECT_EQ(env.at("GREETING"), "hello");
  EXPECT_EQ(env.at("PATH"), "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  EXPECT_EQ(env.at("HOME"), "/root");
  ASSERT_EQ(plan->warnings.size(), 2u);
  EXPECT_NE(plan->warnings[0].find("LD_PRELOAD is ignored"), std::string::npos);
  for (const auto& [name, value] : env) {
    EXPECT_TRUE(name == "GREETING" || name == "PATH" || name == "HOME" || name == "USER" ||
                name == "LOGNAME" || name == "HOSTNAME")
        << name << "=" << value;
  }

  Container().env = {{"PATH", "/opt/bin", std::nullopt}};
  plan = Plan();
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->spec.env.at("PATH"), "/opt/bin");
}

// The data directory (store, other pods' directories, logs) is hidden behind a tmpfs
// and only the pod's own work directory is put back, before anything else is mounted.
TEST_F(LocalPodTest, TheDataDirectoryIsHiddenButTheWorkDir) {
  Own("root");
  Container().working_dir = "sub/dir";
  auto plan = Plan();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const std::string work = data_ + "/pods/team-a_train-0/work";
  EXPECT_EQ(plan->spec.working_dir, work + "/sub/dir");
  EXPECT_TRUE(plan->spec.private_mounts);
  EXPECT_EQ(plan->spec.hostname, "train-0");
  ASSERT_GE(plan->spec.mounts.size(), 3u);
  EXPECT_EQ(plan->spec.mounts[0].kind, MountStep::Kind::kTmpfs);
  EXPECT_EQ(plan->spec.mounts[0].target, data_);
  EXPECT_EQ(plan->spec.mounts[1].kind, MountStep::Kind::kBind);
  EXPECT_EQ(plan->spec.mounts[1].source, work);
  EXPECT_EQ(plan->spec.mounts[1].target, work);
  EXPECT_EQ(plan->spec.mounts[2].target, "/etc/hosts");
  EXPECT_TRUE(plan->spec.mounts[2].read_only);

  // An absolute workingDir is kept: the kernel decides, as the pod's user.
  Container().working_dir = "/root";
  plan = Plan();
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->spec.working_dir, "/root");
}

// A mountPath below an existing directory (/etc/<new>/scratch with /etc there): the
// mount point is made in an overlay of /etc in the pod's namespace, never on the
// machine; the overlay comes right after the data directory's tmpfs (its upper layer
// is in it) and before the binds below it (/etc/hosts).
TEST_F(LocalPodTest, AMountPathBelowAnExistingDirectoryIsMadeInAnOverlay) {
  Own("root");
  const std::string target = "/etc/muster-local-pod-test-absent/scratch";
  ASSERT_FALSE(fs::exists("/etc/muster-local-pod-test-absent"));
  auto& spec = workload_.pod_sets[0].tmpl.spec;
  model::Volume v;
  v.name = "scratch";
  v.kind = model::VolumeKind::kEmptyDir;
  spec.volumes.push_back(v);
  model::VolumeMount mount;
  mount.name = "scratch";
  mount.mount_path = target;
  Container().volume_mounts.push_back(mount);
  auto plan = Plan();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const auto& mounts = plan->spec.mounts;
  ASSERT_GE(mounts.size(), 4u);
  EXPECT_EQ(mounts[0].kind, MountStep::Kind::kTmpfs);
  EXPECT_EQ(mounts[1].kind, MountStep::Kind::kOverlay);
  EXPECT_EQ(mounts[1].target, "/etc");
  EXPECT_EQ(mounts[1].source, data_ + "/.overlays/0");
  EXPECT_EQ(mounts[1].options, "lowerdir=/etc,upperdir=" + data_ +
                                   "/.overlays/0/u,workdir=" + data_ + "/.overlays/0/w");
  EXPECT_EQ(mounts[3].target, "/etc/hosts");
  EXPECT_EQ(mounts.back().target, target);
  EXPECT_TRUE(mounts.back().create_target);
  EXPECT_FALSE(fs::exists("/etc/muster-local-pod-test-absent"));

  // Below the directory that holds the data directory: the overlay would show the
  // store through it; refused, naming the volumeMount.
  const std::string beside = fs::path(data_).parent_path().string() + "/absent-dir/scratch";
  Container().volume_mounts[0].mount_path = beside;
  plan = Plan();
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("volumeMount \"scratch\": mountPath " + beside),
            std::string::npos)
      << plan.status().message();
  EXPECT_NE(plan.status().message().find("holds the server's data directory"), std::string::npos);
}

}  // namespace
}  // namespace muster::server
