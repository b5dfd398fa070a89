// WaitFor: polls a condition until it holds or a deadline passes, for the kube tests
// that run a controller on its own thread against the fake API server.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace muster::kube {

inline bool WaitFor(const std::function<bool()>& done, int seconds = 20,
                    std::chrono::milliseconds poll = std::chrono::milliseconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(poll);
  }
  return done();
}

}  // namespace muster::kube
