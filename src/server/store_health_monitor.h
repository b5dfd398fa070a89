// StoreHealthMonitor: keeps ObjectStore::write_health() current while nothing
// writes, so /readyz turns false when the disk fills or turns read-only even on an
// idle server (kube-apiserver's readyz checks etcd the same way). Every commit
// already updates the health; this adds a small probe write only after a quiet
// spell, and retries every interval while the store is failing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "server/serve.h"

namespace muster::server {

class StoreHealthMonitor : public Controller {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kInterval{2};
  static constexpr std::chrono::seconds kQuiet{5};

  std::string name() const override { return "store health monitor"; }
  Status Start(ServeContext& context) override;
  void Stop() override;

  // Whether a probe is due: the store is failing (see whether it recovered), or no
  // write took for `quiet`.
  static bool ProbeDue(const WriteHealth& health, Clock::time_point now,
                       Clock::duration quiet = kQuiet);

 private:
  ObjectStore* store_ = nullptr;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace muster::server
