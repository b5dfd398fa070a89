#include "engine/record_table.h"

#include <utility>

namespace muster::engine {
namespace {

// Holes are closed once they outnumber the live records (and are not a handful):
// each compaction walks the table once, paid for by the removals since the last.
constexpr size_t kMinHolesToCompact = 64;

}  // namespace

void RecordTable::Reserve(size_t records) {
  slots_.reserve(records);
  index_.reserve(records);
}

WorkloadRecord* RecordTable::Add(model::Workload workload) {
  if (index_.count(workload.key) != 0) return nullptr;
  auto record = std::make_unique<WorkloadRecord>();
  record->workload = std::move(workload);
  WorkloadRecord* added = record.get();
  index_.emplace(added->key(), slots_.size());
  slots_.push_back(std::move(record));
  return added;
}

bool RecordTable::Remove(const std::string& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  size_t slot = it->second;
  index_.erase(it);  // before the record that holds the key's text goes
  slots_[slot].reset();
  size_t holes = slots_.size() - index_.size();
  if (holes >= kMinHolesToCompact && holes > index_.size()) Compact();
  return true;
}

WorkloadRecord* RecordTable::Find(std::string_view key) {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : slots_[it->second].get();
}

const WorkloadRecord* RecordTable::Find(std::string_view key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : slots_[it->second].get();
}

// Records keep their addresses and their order; only the slots move.
void RecordTable::Compact() {
  size_t kept = 0;
  for (auto& slot : slots_) {
    if (slot == nullptr) continue;
    index_[slot->key()] = kept;
    if (&slots_[kept] != &slot) slots_[kept] = std::move(slot);
    ++kept;
  }
  slots_.resize(kept);
}

}  // namespace muster::engine
