// FlatMap: a sorted vector with the part of std::map's interface its users need.
// For maps of a few entries that are built, copied and dropped often (a pod set's
// flavor per resource, built for every head of every admission cycle): one
// allocation for all entries instead of one per entry, and the same iteration
// order (by key) as std::map, so output built from it does not change.
#pragma once

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

namespace muster {

template <typename K, typename V, typename Less = std::less<>>
class FlatMap {
 public:
  using key_type = K;
  using mapped_type = V;
  using value_type = std::pair<K, V>;
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  FlatMap() = default;
  // As std::map's: the first of equal keys is kept.
  FlatMap(std::initializer_list<value_type> init) {
    for (const value_type& v : init) insert(v);
  }

  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  void clear() { items_.clear(); }  // keeps the capacity for the next fill
  void reserve(size_t n) { items_.reserve(n); }

  template <typename Key>
  iterator lower_bound(const Key& k) {
    return std::lower_bound(items_.begin(), items_.end(), k, KeyBefore{});
  }
  template <typename Key>
  const_iterator lower_bound(const Key& k) const {
    return std::lower_bound(items_.begin(), items_.end(), k, KeyBefore{});
  }
  template <typename Key>
  iterator find(const Key& k) {
    auto it = lower_bound(k);
    return it != items_.end() && !Less{}(k, it->first) ? it : items_.end();
  }
  template <typename Key>
  const_iterator find(const Key& k) const {
    auto it = lower_bound(k);
    return it != items_.end() && !Less{}(k, it->first) ? it : items_.end();
  }
  template <typename Key>
  size_t count(const Key& k) const {
    return find(k) != end() ? 1 : 0;
  }
  template <typename Key>
  bool contains(const Key& k) const {
    return find(k) != end();
  }

  V& at(const K& k) { return const_cast<V&>(std::as_const(*this).at(k)); }
  const V& at(const K& k) const {
    auto it = find(k);
    if (it == end()) throw std::out_of_range("FlatMap::at: no such key");
    return it->second;
  }
  V& operator[](const K& k) { return try_emplace(k).first->second; }
  V& operator[](K&& k) { return try_emplace(std::move(k)).first->second; }

  template <typename Key, typename... Args>
  std::pair<iterator, bool> try_emplace(Key&& k, Args&&... args) {
    auto it = lower_bound(k);
    if (it != items_.end() && !Less{}(k, it->first)) return {it, false};
    it = items_.emplace(it, std::piecewise_construct, std::forward_as_tuple(std::forward<Key>(k)),
                        std::forward_as_tuple(std::forward<Args>(args)...));
    return {it, true};
  }
  std::pair<iterator, bool> insert(value_type v) {
    auto it = lower_bound(v.first);
    if (it != items_.end() && !Less{}(v.first, it->first)) return {it, false};
    return {items_.insert(it, std::move(v)), true};
  }
  template <typename Key, typename Value>
  std::pair<iterator, bool> emplace(Key&& k, Value&& v) {
    return try_emplace(std::forward<Key>(k), std::forward<Value>(v));
  }
  iterator erase(const_iterator it) { return items_.erase(it); }
  template <typename Key>
  size_t erase(const Key& k) {
    auto it = find(k);
    if (it == end()) return 0;
    items_.erase(it);
    return 1;
  }

  friend bool operator==(const FlatMap& a, const FlatMap& b) { return a.items_ == b.items_; }

 private:
  struct KeyBefore {
    template <typename Key>
    bool operator()(const value_type& item, const Key& k) const {
      return Less{}(item.first, k);
    }
  };
  std::vector<value_type> items_;
};

}  // namespace muster
