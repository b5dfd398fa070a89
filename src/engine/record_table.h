// RecordTable: the engine's workload records, in the order they were added, each at
// one address for its whole life. The admitter reads a queued record's workload in
// place instead of keeping a copy, so a record must not move while it is queued;
// removal leaves a hole that a later compaction closes (O(1) amortised, where erasing
// from the middle of a vector moved every record after it and rewrote their index
// entries: quadratic when a server deletes its jobs).
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/workload_record.h"

namespace muster::engine {

class RecordTable {
  using Slots = std::vector<std::unique_ptr<WorkloadRecord>>;

 public:
  // Walks the live records in the order they were added.
  template <typename Record, typename SlotIt>
  class BasicIterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = WorkloadRecord;
    using difference_type = std::ptrdiff_t;
    using pointer = Record*;
    using reference = Record&;

    BasicIterator() = default;
    BasicIterator(SlotIt it, SlotIt end) : it_(it), end_(end) { SkipHoles(); }
    reference operator*() const { return **it_; }
    pointer operator->() const { return it_->get(); }
    BasicIterator& operator++() {
      ++it_;
      SkipHoles();
      return *this;
    }
    BasicIterator operator++(int) {
      BasicIterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const BasicIterator& other) const { return it_ == other.it_; }

   private:
    void SkipHoles() {
      while (it_ != end_ && *it_ == nullptr) ++it_;
    }
    SlotIt it_{};
    SlotIt end_{};
  };
  using iterator = BasicIterator<WorkloadRecord, Slots::iterator>;
  using const_iterator = BasicIterator<const WorkloadRecord, Slots::const_iterator>;

  RecordTable() = default;
  RecordTable(RecordTable&&) = default;
  RecordTable& operator=(RecordTable&&) = default;
  RecordTable(const RecordTable&) = delete;
  RecordTable& operator=(const RecordTable&) = delete;

  void Reserve(size_t records);
  // The new record, or nullptr when one with its key exists (nothing is added).
  WorkloadRecord* Add(model::Workload workload);
  // Destroys the record; false when there is none with this key.
  bool Remove(const std::string& key);

  WorkloadRecord* Find(std::string_view key);
  const WorkloadRecord* Find(std::string_view key) const;

  size_t size() const { return index_.size(); }
  bool empty() const { return index_.empty(); }
  iterator begin() { return {slots_.begin(), slots_.end()}; }
  iterator end() { return {slots_.end(), slots_.end()}; }
  const_iterator begin() const { return {slots_.begin(), slots_.end()}; }
  const_iterator end() const { return {slots_.end(), slots_.end()}; }

 private:
  void Compact();

  Slots slots_;  // nullptr: a removed record's hole, until the next compaction
  // Keyed by a view of the record's own key: records never move, so the view
  // stays valid, and the key is not stored twice.
  std::unordered_map<std::string_view, size_t> index_;
};

}  // namespace muster::engine
