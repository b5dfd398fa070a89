// The shim's handshake across a server kill -9: a process the server never recorded
// (its state file was not durable yet) must never run its command, or a restarted
// server, which cannot see it, runs the pod a second time (serve_recovery_test.sh saw
// a Job's pod finish twice).
#include "server/process_launch.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "process_test_util.h"
#include "server/process_supervisor.h"

namespace muster::server {
namespace {

namespace fs = std::filesystem;

using testing_util::ProcessGone;
using testing_util::ReadText;

class ProcessLaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "muster-launch-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = fs::path(pattern).string();
    runs_ = root_ + "/runs";
  }
  void TearDown() override { fs::remove_all(root_); }

  // What ProcessSupervisor::Start launches for pod `id` (its directory and log),
  // a command that appends "start" and "done" to the runs file.
  ShimLaunch Launch(const std::string& id) const {
    const std::string dir = root_ + "/" + id;
    fs::create_directories(dir + "/work");
    ShimLaunch launch;
    launch.executable = "/bin/sh";
    launch.argv = {"sh", "-c", "echo start >> " + runs_ + "; echo done >> " + runs_};
    launch.env = {"PATH=/usr/bin:/bin"};
    launch.working_dir = dir + "/work";
    launch.log_path = dir + "/log";
    launch.dir = dir;
    return launch;
  }

  // The server's death between StartShim and ReleaseShim: the kernel closes its end
  // of the release pipe, nothing is written. The shim is this test's child here.
  static void ServerDiesBeforeRelease(StartedShim& shim) {
    ::close(shim.release_fd);
    shim.release_fd = -1;
    int status = 0;
    ASSERT_EQ(::waitpid(shim.shim_pid, &status, 0), shim.shim_pid);
    EXPECT_TRUE(WIFEXITED(status));
  }

  std::string root_;
  std::string runs_;
};

TEST_F(ProcessLaunchTest, AShimTheServerNeverReleasedDoesNotRunTheCommand) {
  Result<StartedShim> started = StartShim(Launch("pod"));
  ASSERT_TRUE(started.ok()) << started.status().message();
  const int child = started->child_pid;
  ServerDiesBeforeRelease(*started);

  EXPECT_FALSE(fs::exists(runs_)) << ReadText(runs_);
  // No exit file either: nothing ran whose end a server should report.
  EXPECT_FALSE(fs::exists(root_ + "/pod/" + kExitFileName));
  EXPECT_TRUE(ProcessGone(child));
}

TEST_F(ProcessLaunchTest, CancelShimEndsTheChildBeforeItRuns) {
  Result<StartedShim> started = StartShim(Launch("pod"));
  ASSERT_TRUE(started.ok()) << started.status().message();
  CancelShim(*started);
  EXPECT_EQ(started->release_fd, -1);
  ASSERT_EQ(::waitpid(started->shim_pid, nullptr, 0), started->shim_pid);
  EXPECT_FALSE(fs::exists(runs_));
  EXPECT_FALSE(fs::exists(root_ + "/pod/" + kExitFileName));
}

// The exact serve sequence: the pod's shim is started, the server is killed before
// the pod's state file is durable, the restarted server recovers nothing for the pod
// (no state file), counts it lost and starts it again in the same directory. The
// pod's command runs once in all.
TEST_F(ProcessLaunchTest, APodStartedAgainAfterAnUnrecordedStartRunsOnce) {
  Result<StartedShim> started = StartShim(Launch("default_job-0"));
  ASSERT_TRUE(started.ok()) << started.status().message();
  ServerDiesBeforeRelease(*started);

  ProcessSupervisor restarted(root_);
  std::vector<RecoveredProcess> recovered = restarted.Recover();
  EXPECT_TRUE(recovered.empty());
  ProcessSpec spec;
  spec.id = "default_job-0";
  spec.argv = Launch("default_job-0").argv;
  ASSERT_TRUE(restarted.Start(spec).ok());
  ProcessExit exit = testing_util::WaitForExit(restarted, "default_job-0");
  EXPECT_EQ(exit.exit_code, 0);
  EXPECT_FALSE(exit.lost);
  EXPECT_EQ(ReadText(runs_), "start\ndone\n");
}

// The child is the server's copy until it execs; the shim says when that is over.
TEST_F(ProcessLaunchTest, TheShimMarksTheChildsExec) {
  Result<StartedShim> started = StartShim(Launch("pod"));
  ASSERT_TRUE(started.ok()) << started.status().message();
  const std::string marker = root_ + "/pod/" + kExecedFileName;
  EXPECT_FALSE(fs::exists(marker));  // held before the exec until released
  ReleaseShim(*started);
  ASSERT_EQ(::waitpid(started->shim_pid, nullptr, 0), started->shim_pid);
  EXPECT_TRUE(fs::exists(marker));
  EXPECT_EQ(ReadText(runs_), "start\ndone\n");
}

}  // namespace
}  // namespace muster::server
