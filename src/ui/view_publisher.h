// ViewPublisher: the latest scheduler view. The adapter that runs the reconciler
// publishes a new view after each step; API requests on any thread read the current
// one and keep it alive while they answer (a shared_ptr to an immutable value). The
// mutex guards only the pointer's copy or swap, never building or freeing a view, so
// readers do not wait on the scheduler nor it on them. (Not std::atomic<shared_ptr>:
// libstdc++ 12's lock bit inside the pointer word is invisible to ThreadSanitizer,
// which reported every publish racing a read.)
#pragma once

#include <memory>
#include <mutex>

#include "control/scheduler_view.h"

namespace muster::ui {

class ViewPublisher {
 public:
  void Publish(control::SchedulerView view) {
    auto next = std::make_shared<const control::SchedulerView>(std::move(view));
    {
      std::lock_guard<std::mutex> lock(mu_);
      current_.swap(next);
    }
    // `next` holds the previous view: freed here, outside the lock.
  }
  // Null until the first Publish.
  std::shared_ptr<const control::SchedulerView> Current() const {
    std::lock_guard<std::mutex> lock(mu_);
    return current_;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const control::SchedulerView> current_;
};

}  // namespace muster::ui
