#include "server/process_handle.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server/process_stat.h"

namespace muster::server {
namespace {

// A child that waits until it is killed; reaped by the test.
pid_t StartSleeper() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::pause();
    ::_exit(0);
  }
  return pid;
}

TEST(ProcessHandleTest, OpensOnlyTheProcessThatStartedThen) {
  const pid_t child = StartSleeper();
  ASSERT_GT(child, 0);
  auto stat = ReadProcessStat(child);
  ASSERT_TRUE(stat.has_value());
  // Another start time is another process that held (or will hold) the pid.
  EXPECT_FALSE(ProcessHandle::Open(child, stat->start_ticks + 1).has_value());
  auto handle = ProcessHandle::Open(child, stat->start_ticks);
  ASSERT_TRUE(handle.has_value());
  auto status = handle->Read("status", 1 << 16);
  ASSERT_TRUE(status.has_value());
  EXPECT_NE(status->find("Pid:\t" + std::to_string(child) + "\n"), std::string::npos);
  EXPECT_EQ(handle->Read("status", 5)->size(), 5u);  // bounded
  const int ns = handle->OpenFile("ns/mnt");
  EXPECT_GE(ns, 0);
  if (ns >= 0) ::close(ns);

  // Once it has ended, nothing reads through the handle, whoever takes the pid next.
  ::kill(child, SIGKILL);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  EXPECT_FALSE(handle->Read("status", 1 << 16).has_value());
  EXPECT_LT(handle->OpenFile("environ"), 0);
  EXPECT_FALSE(ProcessHandle::Open(child, stat->start_ticks).has_value());
}

TEST(ProcessHandleTest, AZombieIsNotOpened) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  // Not reaped yet: a zombie until waitpid.
  std::optional<ProcessStat> stat;
  for (int i = 0; i < 2000; ++i) {
    stat = ReadProcessStat(child);
    if (!stat || stat->state == 'Z') break;
    ::usleep(1000);
  }
  ASSERT_TRUE(stat.has_value());
  ASSERT_EQ(stat->state, 'Z');
  EXPECT_FALSE(ProcessHandle::Open(child, stat->start_ticks).has_value());
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
}

}  // namespace
}  // namespace muster::server
