// Helpers shared by the tests that start real processes (supervisor, isolation).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>

#include "server/process_stat.h"
#include "server/process_supervisor.h"

namespace muster::server::testing_util {

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Waits (10 ms steps, `limit` at most) until `done` holds; never asserts a duration.
inline bool WaitFor(const std::function<bool()>& done,
                    std::chrono::seconds limit = std::chrono::seconds(20)) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// Removes a serve data directory at a test's end. A pod killed at teardown ends a
// moment after its job is gone, and its shim then writes its exit file into the pod's
// directory: remove_all racing that write fails, so it is tried again until it holds.
inline void RemoveDataDir(const std::filesystem::path& dir) {
  EXPECT_TRUE(WaitFor([&] {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return !ec;
  })) << "could not remove "
      << dir;
}

// Gone, or a zombie waiting for init: either way it no longer runs.
inline bool ProcessGone(int pid) {
  auto stat = ReadProcessStat(pid);
  return !stat || stat->state == 'Z';
}

// A process that runs `script` with sh -c.
inline ProcessSpec Shell(const std::string& id, const std::string& script) {
  ProcessSpec spec;
  spec.id = id;
  spec.argv = {"sh", "-c", script};
  return spec;
}

// Polls `supervisor` until `id` is reported; other exits seen meanwhile are dropped.
inline ProcessExit WaitForExit(ProcessSupervisor& supervisor, const std::string& id) {
  ProcessExit found;
  bool seen = WaitFor([&] {
    for (const ProcessExit& exit : supervisor.Poll()) {
      if (exit.id == id) {
        found = exit;
        return true;
      }
    }
    return false;
  });
  EXPECT_TRUE(seen) << id << " did not exit";
  return found;
}

}  // namespace muster::server::testing_util
