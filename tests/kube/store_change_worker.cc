#include "kube/store_change_worker.h"

#include <utility>

namespace muster::kube::testing {

StoreChangeWorker::StoreChangeWorker(server::ObjectStore& store,
                                     std::function<bool(const ChangePtr&)> accept,
                                     std::function<void(Batch&)> handle)
    : store_(store), accept_(std::move(accept)), handle_(std::move(handle)) {
  subscription_ = store_.hub().Subscribe([this](const ChangePtr& change) {
    if (!accept_(change)) return;
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(change);
    cv_.notify_one();
  });
  thread_ = std::thread([this] { Loop(); });
}

StoreChangeWorker::~StoreChangeWorker() {
  store_.hub().Unsubscribe(subscription_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

void StoreChangeWorker::Loop() {
  while (true) {
    Batch batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      batch.swap(queue_);
    }
    handle_(batch);
  }
}

}  // namespace muster::kube::testing
