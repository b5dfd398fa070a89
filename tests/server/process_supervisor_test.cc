#include "server/process_supervisor.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "process_test_util.h"
#include "server/process_stat.h"

namespace muster::server {
namespace {

namespace fs = std::filesystem;

using testing_util::ProcessGone;
using testing_util::ReadText;
using testing_util::WaitFor;

class ProcessSupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "muster-proc-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = fs::path(pattern).string();
    supervisor_ = std::make_unique<ProcessSupervisor>(root_);
  }

  void TearDown() override {
    if (supervisor_) {
      supervisor_->TerminateAll(0);
      supervisor_->WaitAll(10);
      EXPECT_TRUE(supervisor_->RunningIds().empty());
    }
    fs::remove_all(root_);
  }

  static ProcessSpec Shell(const std::string& id, const std::string& script) {
    return testing_util::Shell(id, script);
  }
  ProcessExit WaitForExit(const std::string& id) {
    return testing_util::WaitForExit(*supervisor_, id);
  }

  bool WaitForLog(const std::string& id, const std::string& text) {
    return WaitFor(
        [&] { return ReadText(supervisor_->LogPath(id)).find(text) != std::string::npos; });
  }

  std::string root_;
  std::unique_ptr<ProcessSupervisor> supervisor_;
};

TEST_F(ProcessSupervisorTest, ReportsExitCodeAndLogsBothStreams) {
  ASSERT_TRUE(supervisor_->Start(Shell("p", "echo out; echo err >&2; exit 3")).ok());
  EXPECT_TRUE(supervisor_->Running("p"));
  EXPECT_EQ(supervisor_->RunningIds(), std::vector<std::string>{"p"});
  EXPECT_GT(supervisor_->Pid("p"), 0);

  ProcessExit exit = WaitForExit("p");
  EXPECT_EQ(exit.exit_code, 3);
  EXPECT_EQ(exit.signal, 0);
  EXPECT_FALSE(exit.lost);
  EXPECT_EQ(ReadText(supervisor_->LogPath("p")), "out\nerr\n");
  EXPECT_FALSE(supervisor_->Running("p"));
  EXPECT_TRUE(supervisor_->Poll().empty());  // reported exactly once
  EXPECT_EQ(supervisor_->LogPath("p"), root_ + "/p/log");
}

TEST_F(ProcessSupervisorTest, ReportsExitsInIdOrder) {
  ASSERT_TRUE(supervisor_->Start(Shell("b", "exit 2")).ok());
  ASSERT_TRUE(supervisor_->Start(Shell("a", "exit 1")).ok());
  // Both shims are done once their exit files exist.
  ASSERT_TRUE(
      WaitFor([&] { return fs::exists(root_ + "/a/exit") && fs::exists(root_ + "/b/exit"); }));
  std::vector<ProcessExit> exits;
  ASSERT_TRUE(WaitFor([&] {
    for (ProcessExit& exit : supervisor_->Poll()) exits.push_back(exit);
    return exits.size() == 2;
  }));
  if (exits[0].id == "a") {  // one Poll saw both: it must report them in id order
    EXPECT_EQ(exits[1].id, "b");
  }
}

TEST_F(ProcessSupervisorTest, PassesEnvAndWorkingDirButNotTheServerEnv) {
  ::setenv("MUSTER_TEST_SERVER_ONLY", "leaked", 1);
  std::string work = root_ + "/custom-work";  // created by the process's user
  ProcessSpec spec = Shell("env", "echo \"$RANK $MY_VAR $PWD ${MUSTER_TEST_SERVER_ONLY:-unset}\"");
  spec.env = {{"RANK", "3"}, {"MY_VAR", "hello world"}};
  spec.working_dir = work;
  ASSERT_TRUE(supervisor_->Start(spec).ok());
  EXPECT_EQ(WaitForExit("env").exit_code, 0);
  std::string canonical = fs::canonical(work).string();
  EXPECT_EQ(ReadText(supervisor_->LogPath("env")), "3 hello world " + canonical + " unset\n");
  ::unsetenv("MUSTER_TEST_SERVER_ONLY");
  // The pod's own directory exists all the same (its HOME, its private view's mount).
  EXPECT_TRUE(fs::is_directory(root_ + "/env/work"));

  // Default working directory: <root>/<id>/work.
  ASSERT_TRUE(supervisor_->Start(Shell("dflt", "pwd")).ok());
  EXPECT_EQ(WaitForExit("dflt").exit_code, 0);
  EXPECT_EQ(ReadText(supervisor_->LogPath("dflt")),
            fs::canonical(root_ + "/dflt/work").string() + "\n");
}

TEST_F(ProcessSupervisorTest, TerminateIsGraceful) {
  ASSERT_TRUE(
      supervisor_
          ->Start(Shell(
              "t",
              "trap 'echo got-term; exit 0' TERM; echo ready; while true; do sleep 0.05; done"))
          .ok());
  ASSERT_TRUE(WaitForLog("t", "ready"));  // the trap is set
  supervisor_->Terminate("t", 5);
  ProcessExit exit = WaitForExit("t");
  EXPECT_EQ(exit.exit_code, 0);
  EXPECT_EQ(exit.signal, 0);
  EXPECT_NE(ReadText(supervisor_->LogPath("t")).find("got-term"), std::string::npos);
  supervisor_->Terminate("t", 5);  // finished: no-op
  supervisor_->Terminate("unknown", 5);
}

TEST_F(ProcessSupervisorTest, TerminateKillsAfterGrace) {
  ASSERT_TRUE(
      supervisor_->Start(Shell("k", "trap '' TERM; echo ready; while true; do sleep 0.05; done"))
          .ok());
  ASSERT_TRUE(WaitForLog("k", "ready"));
  supervisor_->Terminate("k", 0.2);
  ProcessExit exit = WaitForExit("k");  // Poll sends SIGKILL once the grace passed
  EXPECT_EQ(exit.signal, SIGKILL);
  EXPECT_EQ(exit.exit_code, 137);
  EXPECT_FALSE(exit.lost);
}

TEST_F(ProcessSupervisorTest, TerminateSignalsTheWholeGroup) {
  // The background child traps TERM itself, so "child-term" proves Terminate reached
  // it; the parent waits for it so the shim's clean-up SIGKILL cannot come first.
  std::string script = root_ + "/tree.sh";
  std::ofstream(script) << "sh -c 'trap \"echo child-term; exit 0\" TERM; echo $$ > " << root_
                        << "/child.pid; while true; do sleep 0.05; done' &\n"
                        << "child=$!\n"
                        << "trap 'wait $child; echo parent-term; exit 0' TERM\n"
                        << "echo ready\n"
                        << "wait $child\n";
  ProcessSpec spec;
  spec.id = "g";
  spec.argv = {"sh", script};  // not `sh -c "sh script"`: that sh would have no trap
  ASSERT_TRUE(supervisor_->Start(spec).ok());
  ASSERT_TRUE(WaitForLog("g", "ready"));
  ASSERT_TRUE(WaitFor([&] { return !ReadText(root_ + "/child.pid").empty(); }));
  int child = std::stoi(ReadText(root_ + "/child.pid"));
  ASSERT_FALSE(ProcessGone(child));

  supervisor_->Terminate("g", 5);
  ProcessExit exit = WaitForExit("g");
  EXPECT_EQ(exit.exit_code, 0);
  EXPECT_EQ(exit.signal, 0);
  EXPECT_TRUE(WaitFor([&] { return ProcessGone(child); }));
  std::string log = ReadText(supervisor_->LogPath("g"));
  EXPECT_NE(log.find("child-term"), std::string::npos) << log;
  EXPECT_NE(log.find("parent-term"), std::string::npos) << log;
}

TEST_F(ProcessSupervisorTest, MainExitKillsLeftoverGroupMembers) {
  ASSERT_TRUE(
      supervisor_->Start(Shell("left", "sleep 100 & echo $! > " + root_ + "/bg.pid; exit 0")).ok());
  EXPECT_EQ(WaitForExit("left").exit_code, 0);
  int background = std::stoi(ReadText(root_ + "/bg.pid"));
  EXPECT_TRUE(WaitFor([&] { return ProcessGone(background); }));
}

TEST_F(ProcessSupervisorTest, RecoverAdoptsRunningAndReportsFinished) {
  ASSERT_TRUE(supervisor_->Start(Shell("done", "exit 7")).ok());
  EXPECT_EQ(WaitForExit("done").exit_code, 7);
  ASSERT_TRUE(
      supervisor_
          ->Start(Shell(
              "long", "trap 'echo bye; exit 4' TERM; echo ready; while true; do sleep 0.05; done"))
          .ok());
  ASSERT_TRUE(WaitForLog("long", "ready"));
  int pid = supervisor_->Pid("long");

  supervisor_ = std::make_unique<ProcessSupervisor>(root_);  // a "restarted server"
  EXPECT_FALSE(ProcessGone(pid));                            // destruction kills nothing
  std::vector<RecoveredProcess> recovered = supervisor_->Recover();
  ASSERT_EQ(recovered.size(), 2u);
  EXPECT_EQ(recovered[0].id, "done");
  EXPECT_FALSE(recovered[0].running);
  ASSERT_TRUE(recovered[0].exit.has_value());
  EXPECT_EQ(recovered[0].exit->exit_code, 7);
  EXPECT_FALSE(recovered[0].exit->lost);
  EXPECT_EQ(recovered[1].id, "long");
  EXPECT_TRUE(recovered[1].running);
  EXPECT_TRUE(supervisor_->Running("long"));
  EXPECT_EQ(supervisor_->Pid("long"), pid);

  // A second start of an adopted id is refused; Terminate reaches the adopted group.
  EXPECT_EQ(supervisor_->Start(Shell("long", "true")).code(), StatusCode::kAlreadyExists);
  supervisor_->Terminate("long", 5);
  ProcessExit exit = WaitForExit("long");
  EXPECT_EQ(exit.exit_code, 4);
  EXPECT_FALSE(exit.lost);
  EXPECT_NE(ReadText(supervisor_->LogPath("long")).find("bye"), std::string::npos);
}

TEST_F(ProcessSupervisorTest, ProcessAndExitStatusSurviveKill9OfTheServer) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t server = ::fork();  // a "server" process that owns the shim, then is SIGKILLed
  ASSERT_GE(server, 0);
  if (server == 0) {
    ::close(ready[0]);
    ProcessSupervisor supervisor(root_);
    Status status = supervisor.Start(Shell(
        "survivor", "trap 'echo bye; exit 5' TERM; echo ready; while true; do sleep 0.05; done"));
    char started = status.ok() ? '1' : '0';
    (void)!::write(ready[1], &started, 1);
    while (true) ::pause();
  }
  ::close(ready[1]);
  char started = 0;
  ssize_t got = ::read(ready[0], &started, 1);
  ::close(ready[0]);
  ::kill(server, SIGKILL);  // right after Start returned: the shim is released already
  ASSERT_EQ(::waitpid(server, nullptr, 0), server);
  ASSERT_EQ(got, 1);
  ASSERT_EQ(started, '1');
  ASSERT_TRUE(WaitForLog("survivor", "ready"));

  std::vector<RecoveredProcess> recovered = supervisor_->Recover();
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_TRUE(recovered[0].running);
  supervisor_->Terminate("survivor", 5);
  ProcessExit exit = WaitForExit("survivor");  // from the exit file of the orphaned shim
  EXPECT_EQ(exit.exit_code, 5);
  EXPECT_FALSE(exit.lost);
  EXPECT_NE(ReadText(supervisor_->LogPath("survivor")).find("bye"), std::string::npos);
}

TEST_F(ProcessSupervisorTest, StartRefusesAProcessLeftByAnEarlierServer) {
  ASSERT_TRUE(supervisor_->Start(Shell("old", "echo ready; exec sleep 100")).ok());
  ASSERT_TRUE(WaitForLog("old", "ready"));
  supervisor_ = std::make_unique<ProcessSupervisor>(root_);  // no Recover()
  Status status = supervisor_->Start(Shell("old", "true"));
  EXPECT_EQ(status.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(status.message().find("Recover"), std::string::npos);
  supervisor_->Recover();
  EXPECT_TRUE(supervisor_->Running("old"));  // TearDown terminates it
}

TEST_F(ProcessSupervisorTest, RecoverReportsLostWhenShimAndProcessDied) {
  ASSERT_TRUE(supervisor_->Start(Shell("lost", "echo ready; exec sleep 100")).ok());
  ASSERT_TRUE(WaitForLog("lost", "ready"));
  auto state = nlohmann::json::parse(ReadText(root_ + "/lost/state.json"));
  int shim = state.at("shim_pid").get<int>();
  int pid = state.at("pid").get<int>();
  supervisor_.reset();
  // Like a reboot or an OOM kill of the shim: nobody writes the exit file.
  ASSERT_EQ(::kill(shim, SIGKILL), 0);
  ASSERT_EQ(::waitpid(shim, nullptr, 0), shim);  // the shim is this test's child
  ASSERT_EQ(::kill(-pid, SIGKILL), 0);
  ASSERT_TRUE(WaitFor([&] { return ProcessGone(pid); }));

  supervisor_ = std::make_unique<ProcessSupervisor>(root_);
  std::vector<RecoveredProcess> recovered = supervisor_->Recover();
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_FALSE(recovered[0].running);
  ASSERT_TRUE(recovered[0].exit.has_value());
  EXPECT_TRUE(recovered[0].exit->lost);
  EXPECT_EQ(recovered[0].exit->exit_code, 137);
}

TEST_F(ProcessSupervisorTest, KeepsThePreviousLog) {
  ASSERT_TRUE(supervisor_->Start(Shell("r", "echo first")).ok());
  EXPECT_EQ(supervisor_->Start(Shell("r", "echo again")).code(), StatusCode::kAlreadyExists);
  WaitForExit("r");
  ASSERT_TRUE(supervisor_->Start(Shell("r", "echo second")).ok());
  WaitForExit("r");
  EXPECT_EQ(ReadText(supervisor_->LogPath("r")), "second\n");
  EXPECT_EQ(ReadText(supervisor_->PreviousLogPath("r")), "first\n");
  EXPECT_EQ(supervisor_->PreviousLogPath("r"), root_ + "/r/log.previous");
}

TEST_F(ProcessSupervisorTest, RejectsBadStartsWithoutStartingAnything) {
  ProcessSpec missing;
  missing.id = "missing";
  missing.argv = {"muster-no-such-command-xyz", "--flag"};
  Status status = supervisor_->Start(missing);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find("muster-no-such-command-xyz"), std::string::npos);
  EXPECT_NE(status.message().find("not found in PATH"), std::string::npos);
  EXPECT_FALSE(supervisor_->Running("missing"));

  missing.argv = {"./not-here"};
  EXPECT_EQ(supervisor_->Start(missing).code(), StatusCode::kNotFound);

  ProcessSpec empty;
  empty.id = "empty";
  EXPECT_EQ(supervisor_->Start(empty).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(supervisor_->Start(Shell("../escape", "true")).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(supervisor_->Start(Shell("", "true")).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(supervisor_->RunningIds().empty());
}

TEST_F(ProcessSupervisorTest, ExecFailureAfterStartExits127) {
  // Found and executable, but its interpreter is missing: execve fails in the child.
  std::string script = root_ + "/broken.sh";
  std::ofstream(script) << "#!/nonexistent/interpreter\n";
  ::chmod(script.c_str(), 0755);
  ProcessSpec spec;
  spec.id = "broken";
  spec.argv = {script};
  ASSERT_TRUE(supervisor_->Start(spec).ok());
  EXPECT_EQ(WaitForExit("broken").exit_code, 127);
  EXPECT_NE(ReadText(supervisor_->LogPath("broken")).find("cannot execute"), std::string::npos);
}

TEST_F(ProcessSupervisorTest, RemoveDeletesOnlyFinishedProcesses) {
  ASSERT_TRUE(supervisor_->Start(Shell("rm", "echo ready; exec sleep 100")).ok());
  EXPECT_EQ(supervisor_->Remove("rm").code(), StatusCode::kFailedPrecondition);
  supervisor_->Terminate("rm", 0);
  EXPECT_EQ(WaitForExit("rm").signal, SIGKILL);
  EXPECT_TRUE(supervisor_->Remove("rm").ok());
  EXPECT_FALSE(fs::exists(root_ + "/rm"));
  EXPECT_TRUE(supervisor_->Recover().empty());
}

TEST_F(ProcessSupervisorTest, TerminateAllAndWaitAll) {
  ASSERT_TRUE(supervisor_->Start(Shell("w1", "exec sleep 100")).ok());
  ASSERT_TRUE(supervisor_->Start(Shell("w2", "exec sleep 100")).ok());
  supervisor_->TerminateAll(5);
  std::vector<ProcessExit> exits = supervisor_->WaitAll(10);
  ASSERT_EQ(exits.size(), 2u);
  EXPECT_TRUE(supervisor_->RunningIds().empty());
  for (const ProcessExit& exit : exits) EXPECT_EQ(exit.exit_code, 128 + SIGTERM);
}

}  // namespace
}  // namespace muster::server
