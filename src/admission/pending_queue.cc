#include "admission/pending_queue.h"

#include <algorithm>
#include <iterator>

namespace muster::admission {

const QueueKey* PendingQueue::First() const {
  const QueueKey* first = nullptr;
  for (const Set* set : {&active_, &front_, &parked_}) {
    if (!set->empty() && (first == nullptr || *set->begin() < *first)) first = &*set->begin();
  }
  return first;
}

PendingQueue& PendingQueue::operator=(const PendingQueue& o) {
  if (this == &o) return *this;
  active_ = o.active_;
  front_ = o.front_;
  parked_ = o.parked_;
  prefix_ = o.prefix_;
  changes_ = o.changes_;
  // The cursor is an iterator of the other set: found again by count.
  if (prefix_ > 0) cursor_ = std::next(active_.begin(), prefix_);
  return *this;
}

void PendingQueue::Erase(const QueueKey& k) {
  if (const QueueKey* head = Head(); head != nullptr && !(k < *head) && !(*head < k)) {
    if (!front_.empty()) {
      front_.erase(front_.begin());
    } else {
      auto it = RestBegin();
      if (prefix_ > 0) ++cursor_;
      active_.erase(it);
    }
    ++changes_;
    return;
  }
  if (auto it = active_.find(k); it != active_.end()) {
    if (InPrefix(it)) {
      --prefix_;
    } else if (prefix_ > 0 && it == cursor_) {
      ++cursor_;
    }
    active_.erase(it);
    ++changes_;
    SettleFront();
    return;
  }
  if (front_.erase(k) > 0 || parked_.erase(k) > 0) ++changes_;
}

void PendingQueue::Park(const QueueKey& k) {
  if (const QueueKey* head = Head(); head != nullptr && !(k < *head) && !(*head < k)) {
    ParkHead();
    return;
  }
  if (auto f = front_.find(k); f != front_.end()) {
    parked_.insert(front_.extract(f));
    return;
  }
  auto it = active_.find(k);
  if (it == active_.end() || InPrefix(it)) return;  // not active: parked already or absent
  if (prefix_ > 0 && it == cursor_) ++cursor_;      // not the head, but keep it valid
  parked_.insert(parked_.end(), active_.extract(it));
}

void PendingQueue::Unpark(const QueueKey& k) {
  if (auto p = parked_.find(k); p != parked_.end()) {
    auto node = parked_.extract(p);
    if (AmongParkedFront(node.value())) {
      front_.insert(std::move(node));
    } else {
      auto it = active_.insert(std::move(node)).position;
      if (prefix_ > 0 && (cursor_ == active_.end() || *it < *cursor_)) cursor_ = it;
    }
    ++changes_;
    return;
  }
  // Parked in the front of active_: it waits in front_ until UnparkAll.
  auto it = active_.find(k);
  if (it == active_.end() || !InPrefix(it)) return;
  --prefix_;
  front_.insert(active_.extract(it));
  ++changes_;
  SettleFront();
}

void PendingQueue::SettleFront() {
  // No parked front left: front_'s keys go back among the others.
  if (prefix_ == 0 && !front_.empty()) active_.merge(front_);
}

void PendingQueue::Normalize() {
  for (; prefix_ > 0; --prefix_) parked_.insert(parked_.end(), active_.extract(active_.begin()));
  active_.merge(front_);
}

std::vector<QueueKey> PendingQueue::Parked() const {
  std::vector<QueueKey> out;
  out.reserve(static_cast<size_t>(prefix_) + parked_.size());
  std::merge(active_.begin(), RestBegin(), parked_.begin(), parked_.end(), std::back_inserter(out));
  return out;
}

std::vector<QueueKey> PendingQueue::All() const {
  std::vector<QueueKey> out(front_.begin(), front_.end());
  out.insert(out.end(), RestBegin(), active_.end());
  std::vector<QueueKey> parked = Parked();
  out.insert(out.end(), parked.begin(), parked.end());
  return out;
}

void PendingQueue::Replace(const QueueKey& from, const QueueKey& to) {
  Normalize();
  if (active_.erase(from) > 0) active_.insert(to);
  if (parked_.erase(from) > 0) parked_.insert(to);
  ++changes_;
}

}  // namespace muster::admission
