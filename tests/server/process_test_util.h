// Helpers shared by the tests that start real processes (supervisor, isolation).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include "server/process_stat.h"
#include "server/process_supervisor.h"

namespace muster::server::testing_util {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Waits (10 ms steps, 20 s at most) until `done` holds; never asserts a duration.
inline bool WaitFor(const std::function<bool()>& done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
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
