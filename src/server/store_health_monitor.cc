#include "server/store_health_monitor.h"

namespace muster::server {

bool StoreHealthMonitor::ProbeDue(const WriteHealth& health, Clock::time_point now,
                                  Clock::duration quiet) {
  return !health.writable || now - health.last_write >= quiet;
}

Status StoreHealthMonitor::Start(ServeContext& context) {
  store_ = &context.store;
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, kInterval, [this] { return stopping_; })) {
      lock.unlock();
      if (ProbeDue(store_->write_health(), Clock::now())) store_->ProbeWritable();
      lock.lock();
    }
  });
  return Status::Ok();
}

void StoreHealthMonitor::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

}  // namespace muster::server
