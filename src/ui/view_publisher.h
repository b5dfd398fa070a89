// ViewPublisher: the latest scheduler view, swapped atomically. The adapter that runs
// the reconciler publishes a new view after each step; API requests on any thread read
// the current one and keep it alive while they answer (a shared_ptr to an immutable
// value: readers never block the scheduler, nor the scheduler them).
#pragma once

#include <atomic>
#include <memory>

#include "control/scheduler_view.h"

namespace muster::ui {

class ViewPublisher {
 public:
  void Publish(control::SchedulerView view) {
    current_.store(std::make_shared<const control::SchedulerView>(std::move(view)));
  }
  // Null until the first Publish.
  std::shared_ptr<const control::SchedulerView> Current() const { return current_.load(); }

 private:
  std::atomic<std::shared_ptr<const control::SchedulerView>> current_;
};

}  // namespace muster::ui
