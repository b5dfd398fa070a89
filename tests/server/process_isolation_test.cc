// What the supervisor does for a pod beyond starting it: capped and rotated logs,
// the pod's cgroup (limits; setsid children die with it; OOM kills reported), the
// owner's credentials, and private mount/UTS namespaces. The cgroup, credential and
// namespace cases need root and skip without it (CI runs as root).
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "process_test_util.h"
#include "server/pod_cgroup.h"
#include "server/process_stat.h"
#include "server/process_supervisor.h"

namespace muster::server {
namespace {

namespace fs = std::filesystem;

using testing_util::ProcessGone;
using testing_util::ReadText;
using testing_util::WaitFor;

class ProcessIsolationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "muster-iso-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = fs::path(pattern).string();
  }
  void TearDown() override {
    if (supervisor_) {
      supervisor_->TerminateAll(0);
      supervisor_->WaitAll(10);
      for (const auto& id : supervisor_->KnownIds()) supervisor_->Remove(id).ok();
    }
    fs::remove_all(root_);
  }
  void Make(SupervisorOptions options) {
    supervisor_ = std::make_unique<ProcessSupervisor>(root_ + "/pods", std::move(options));
  }
  static ProcessSpec Shell(const std::string& id, const std::string& script) {
    return testing_util::Shell(id, script);
  }
  ProcessExit WaitForExit(const std::string& id) {
    return testing_util::WaitForExit(*supervisor_, id);
  }
  static bool Root() { return ::geteuid() == 0; }
  // A cgroup driver for this test alone, or nullopt where there are no cgroups.
  static std::optional<CgroupDriver> Cgroups() {
    if (!Root()) return std::nullopt;
    CgroupDriver d = CgroupDriver::Detect("test-" + std::to_string(::getpid()));
    if (!d.available()) return std::nullopt;
    return d;
  }

  std::string root_;
  std::unique_ptr<ProcessSupervisor> supervisor_;
};

// The kubelet's containerLogMaxSize / containerLogMaxFiles: a pod writing far more
// than the cap keeps at most max_files files of at most max_bytes each, and the
// newest output survives.
TEST_F(ProcessIsolationTest, LogsAreCappedAndRotated) {
  SupervisorOptions options;
  options.log_max_bytes = 4096;
  options.log_max_files = 3;
  Make(options);
  // ~90 KiB: lines "n xxxx...\n", 100 bytes each.
  ASSERT_TRUE(supervisor_
                  ->Start(Shell("chatty",
                                "i=0; while [ $i -lt 900 ]; do printf '%05d %093d\\n' $i 0; "
                                "i=$((i+1)); done"))
                  .ok());
  EXPECT_EQ(WaitForExit("chatty").exit_code, 0);
  const std::string log = supervisor_->LogPath("chatty");
  uint64_t total = 0;
  for (const std::string& f : {log, log + ".1", log + ".2"}) {
    ASSERT_TRUE(fs::exists(f)) << f;
    EXPECT_LE(fs::file_size(f), 4096u) << f;
    total += fs::file_size(f);
  }
  EXPECT_FALSE(fs::exists(log + ".3"));
  EXPECT_GT(total, 8192u);
  std::string live = ReadText(log);
  ASSERT_GE(live.size(), 100u);
  EXPECT_EQ(live.substr(live.size() - 100, 6), "00899 ");  // the last line is kept

  // A restart keeps the previous run's files as log.previous*.
  ASSERT_TRUE(supervisor_->Start(Shell("chatty", "echo again")).ok());
  EXPECT_EQ(WaitForExit("chatty").exit_code, 0);
  EXPECT_EQ(ReadText(log), "again\n");
  EXPECT_FALSE(fs::exists(log + ".1"));
  EXPECT_TRUE(fs::exists(supervisor_->PreviousLogPath("chatty") + ".2"));
}

// A daemon that leaves the process group (setsid) still dies with its pod: the shim
// kills the pod's cgroup when the main process exits, and Terminate's SIGKILL reaches
// the cgroup too.
TEST_F(ProcessIsolationTest, SetsidChildrenDieWithThePod) {
  auto cgroups = Cgroups();
  if (!cgroups) GTEST_SKIP() << "needs root and cgroups";
  SupervisorOptions options;
  options.cgroups = *cgroups;
  Make(options);
  const std::string pidfile = root_ + "/daemon.pid";
  ASSERT_TRUE(supervisor_
                  ->Start(Shell("d", "setsid sh -c 'echo $$ > " + pidfile +
                                         "; exec sleep 300' & sleep 0.5; exit 0"))
                  .ok());
  EXPECT_EQ(WaitForExit("d").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return !ReadText(pidfile).empty(); }));
  int daemon = std::stoi(ReadText(pidfile));
  EXPECT_TRUE(WaitFor([&] { return ProcessGone(daemon); }));

  // Terminated while running (the deletion of its pod): the daemon goes as well.
  ASSERT_TRUE(supervisor_
                  ->Start(Shell("t", "trap '' TERM; setsid sh -c 'echo $$ > " + pidfile +
                                         "2; trap \"\" TERM; exec sleep 300' & "
                                         "while true; do sleep 0.05; done"))
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return !ReadText(pidfile + "2").empty(); }));
  int second = std::stoi(ReadText(pidfile + "2"));
  supervisor_->Terminate("t", 0.2);
  EXPECT_EQ(WaitForExit("t").signal, SIGKILL);
  EXPECT_TRUE(WaitFor([&] { return ProcessGone(second); }));
  // The cgroup is gone with the process.
  auto state = nlohmann::json::parse(ReadText(root_ + "/pods/t/state.json"));
  for (const auto& dir : state["cgroup"]["dirs"]) EXPECT_FALSE(fs::exists(dir.get<std::string>()));
}

TEST_F(ProcessIsolationTest, MemoryLimitAndOomKill) {
  auto cgroups = Cgroups();
  if (!cgroups || !cgroups->limits_memory()) GTEST_SKIP() << "needs root and a memory cgroup";
  SupervisorOptions options;
  options.cgroups = *cgroups;
  Make(options);
  ProcessSpec spec = Shell("oom", "echo started; exec tail /dev/zero");  // grows until killed
  spec.limits.memory_bytes = 32 << 20;
  spec.limits.cpu_millis = 500;
  ASSERT_TRUE(supervisor_->Start(spec).ok());
  auto state = nlohmann::json::parse(ReadText(root_ + "/pods/oom/state.json"));
  std::string memory = state["cgroup"]["memory"].get<std::string>();
  ASSERT_FALSE(memory.empty());
  std::string limit =
      ReadText(memory + (state["cgroup"]["v2_memory"].get<bool>() ? "/memory.max"
                                                                  : "/memory.limit_in_bytes"));
  EXPECT_EQ(std::stoll(limit), 32 << 20);
  ProcessExit exit = WaitForExit("oom");
  EXPECT_EQ(exit.signal, SIGKILL);
  EXPECT_TRUE(exit.oom_killed);
}

TEST_F(ProcessIsolationTest, RunsAsTheGivenAccountInItsOwnWorkDir) {
  if (!Root()) GTEST_SKIP() << "needs root";
  struct passwd* nobody = ::getpwnam("nobody");
  if (nobody == nullptr) GTEST_SKIP() << "no nobody account";
  Make({});
  ProcessSpec spec =
      Shell("u", "id -u; id -g; touch mine; cat " + root_ + "/secret || echo denied");
  spec.credentials = Credentials{nobody->pw_uid, nobody->pw_gid, {nobody->pw_gid}};
  spec.no_new_privs = true;
  std::ofstream(root_ + "/secret") << "top secret\n";
  ::chmod((root_ + "/secret").c_str(), 0600);
  ::chmod(root_.c_str(), 0755);
  ASSERT_TRUE(supervisor_->Start(spec).ok());
  EXPECT_EQ(WaitForExit("u").exit_code, 0);
  std::string log = ReadText(supervisor_->LogPath("u"));
  EXPECT_EQ(log.substr(0, log.find('\n')), std::to_string(nobody->pw_uid)) << log;
  EXPECT_NE(log.find("denied"), std::string::npos) << log;
  struct stat st {};
  ASSERT_EQ(::stat((root_ + "/pods/u/work").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, nobody->pw_uid);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_TRUE(fs::exists(root_ + "/pods/u/work/mine"));
  // The log is the server's: 0600.
  ASSERT_EQ(::stat(supervisor_->LogPath("u").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// The pod's own hostname and /etc/hosts, the data directory hidden behind a tmpfs
// with only the pod's work dir put back, and nothing propagating to the machine.
TEST_F(ProcessIsolationTest, PrivateHostnameHostsAndDataDirectory) {
  if (!Root()) GTEST_SKIP() << "needs root";
  Make({});
  std::ofstream(root_ + "/hosts") << "127.77.0.1\tmy-pod.my-svc my-pod\n";
  std::ofstream(root_ + "/store") << "the store\n";
  const std::string work = root_ + "/pods/n/work";
  ProcessSpec spec = Shell("n", "hostname; getent hosts my-pod.my-svc; ls " + root_ +
                                    "; pwd; cat " + root_ + "/store 2>/dev/null || echo hidden");
  spec.private_mounts = true;
  spec.hostname = "my-pod";
  spec.mounts = {{MountStep::Kind::kTmpfs, "", root_, false, false, false, ""},
                 {MountStep::Kind::kBind, work, work, false, false, true, ""},
                 {MountStep::Kind::kBind, root_ + "/hosts", "/etc/hosts", true, true, false, ""}};
  ASSERT_TRUE(supervisor_->Start(spec).ok());
  EXPECT_EQ(WaitForExit("n").exit_code, 0);
  EXPECT_EQ(ReadText(supervisor_->LogPath("n")),
            "my-pod\n127.77.0.1      my-pod.my-svc my-pod\npods\n" + work + "\nhidden\n");
  char host[256] = {};
  ::gethostname(host, sizeof(host));
  EXPECT_NE(std::string(host), "my-pod");
  EXPECT_EQ(ReadText(root_ + "/store"), "the store\n");
  EXPECT_EQ(ReadText("/etc/hosts").find("my-pod.my-svc"), std::string::npos);
}

TEST_F(ProcessIsolationTest, AMountThatFailsFailsThePodWithTheReason) {
  if (!Root()) GTEST_SKIP() << "needs root";
  Make({});
  ProcessSpec spec = Shell("m", "echo should-not-run");
  spec.private_mounts = true;
  spec.mounts = {{MountStep::Kind::kBind, root_ + "/missing", "/mnt", false, false, false, ""}};
  ASSERT_TRUE(supervisor_->Start(spec).ok());
  EXPECT_EQ(WaitForExit("m").exit_code, 127);
  std::string log = ReadText(supervisor_->LogPath("m"));
  EXPECT_NE(log.find("cannot open volume source " + root_ + "/missing"), std::string::npos) << log;
  EXPECT_EQ(log.find("should-not-run"), std::string::npos);
}

}  // namespace
}  // namespace muster::server
