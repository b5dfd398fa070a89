#include "placement/topology_domains.h"

#include <algorithm>

namespace muster::placement {

int32_t DomainIndex::Add(Domain d) {
  auto id = static_cast<int32_t>(domains_.size());
  by_key_.emplace(d.key, id);
  domains_.push_back(std::move(d));
  return id;
}

std::optional<int32_t> DomainIndex::Find(const std::string& key) const {
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return std::nullopt;
  return it->second;
}

namespace {

// One vertex of the TAS tree; leaves sit one level below the last label level.
struct Vertex {
  std::vector<std::string> path;  // level values from the widest level down
  int32_t state = 0;
  std::vector<int32_t> children;
  int32_t leaf = -1;  // index into the leaves, for the node level
};

class TasTree {
 public:
  TasTree(const std::vector<TasLeaf>& leaves, int32_t level_count) : levels_(level_count + 1) {
    std::vector<std::map<std::vector<std::string>, int32_t>> ids(level_count);
    for (int32_t i = 0; i < static_cast<int32_t>(leaves.size()); ++i) {
      int32_t parent = -1;
      for (int32_t l = 0; l < level_count; ++l) {
        std::vector<std::string> path(leaves[i].values.begin(), leaves[i].values.begin() + l + 1);
        auto [it, inserted] = ids[l].emplace(path, static_cast<int32_t>(v_.size()));
        if (inserted) {
          v_.push_back(Vertex{path, 0, {}, -1});
          levels_[l].push_back(it->second);
          if (parent >= 0) v_[parent].children.push_back(it->second);
        }
        parent = it->second;
      }
      auto id = static_cast<int32_t>(v_.size());
      std::vector<std::string> path = leaves[i].values;
      path.push_back(std::to_string(i));  // leaves of one host stay distinct
      v_.push_back(Vertex{std::move(path), leaves[i].capacity, {}, i});
      levels_[level_count].push_back(id);
      if (parent >= 0) v_[parent].children.push_back(id);
    }
    for (int32_t l = level_count - 1; l >= 0; --l) {
      for (int32_t id : levels_[l]) {
        int32_t sum = 0;
        for (int32_t c : v_[id].children) sum += v_[c].state;
        v_[id].state = sum;
      }
    }
  }

  std::variant<std::vector<int32_t>, std::string> Assign(const TasRequest& req, size_t leaf_count) {
    int32_t fit_level = 0;
    std::vector<int32_t> current;
    if (auto err = FindLevel(req.level, req.required, req.count, fit_level, current)) return *err;
    current = ToMinimum(current, req.count);
    for (int32_t l = fit_level; l + 1 < static_cast<int32_t>(levels_.size()); ++l) {
      std::vector<int32_t> lower;
      for (int32_t id : current) {
        for (int32_t c : v_[id].children) lower.push_back(c);
      }
      current = ToMinimum(Sorted(lower), req.count);
    }
    std::vector<int32_t> counts(leaf_count, 0);
    for (int32_t id : current) {
      if (v_[id].leaf >= 0) counts[v_[id].leaf] = v_[id].state;
    }
    return counts;
  }

 private:
  // Most capacity first; ties by path so the choice is deterministic.
  std::vector<int32_t> Sorted(std::vector<int32_t> ids) const {
    std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
      if (v_[a].state != v_[b].state) return v_[a].state > v_[b].state;
      return v_[a].path < v_[b].path;
    });
    return ids;
  }

  // The first domain with the lowest state still >= count (ids sorted descending).
  size_t BestFit(const std::vector<int32_t>& ids, size_t from, int32_t count) const {
    size_t best = from;
    for (size_t i = from; i < ids.size(); ++i) {
      if (v_[ids[i]].state >= count && v_[ids[i]].state != v_[ids[best]].state) best = i;
    }
    return best;
  }

  std::optional<std::string> FindLevel(int32_t level, bool required, int32_t count,
                                       int32_t& fit_level, std::vector<int32_t>& out) const {
    std::vector<int32_t> sorted = Sorted(levels_[level]);
    if (sorted.empty()) return std::string("no topology domains at the requested level");
    int32_t top = sorted[0];
    if (v_[top].state >= count) {
      fit_level = level;
      out = {sorted[BestFit(sorted, 0, count)]};
      return std::nullopt;
    }
    if (required) {
      return "largest domain fits " + std::to_string(v_[top].state) + " of " +
             std::to_string(count) + " pods";
    }
    if (level > 0) return FindLevel(level - 1, required, count, fit_level, out);
    // Widest level: as few domains as possible, best fit for the last one.
    int32_t remaining = count;
    for (size_t i = 0; remaining > 0 && i < sorted.size() && v_[sorted[i]].state > 0; ++i) {
      size_t pick = v_[sorted[i]].state >= remaining ? BestFit(sorted, i, remaining) : i;
      out.push_back(sorted[pick]);
      remaining -= v_[sorted[pick]].state;
      if (pick != i) break;
    }
    if (remaining > 0) {
      return "cluster fits " + std::to_string(count - remaining) + " of " + std::to_string(count) +
             " pods";
    }
    fit_level = 0;
    return std::nullopt;
  }

  // Takes domains in order until `count` pods are covered, trimming the last.
  std::vector<int32_t> ToMinimum(const std::vector<int32_t>& ids, int32_t count) {
    std::vector<int32_t> out;
    int32_t remaining = count;
    for (size_t i = 0; i < ids.size() && remaining > 0; ++i) {
      int32_t id = ids[i];
      if (v_[id].state >= remaining) {
        id = ids[BestFit(ids, i, remaining)];
        v_[id].state = remaining;
        out.push_back(id);
        return out;
      }
      remaining -= v_[id].state;
      if (v_[id].state > 0) out.push_back(id);
    }
    return out;
  }

  std::vector<Vertex> v_;
  std::vector<std::vector<int32_t>> levels_;  // vertex ids per level; last = leaves
};

}  // namespace

std::variant<std::vector<int32_t>, std::string> FindTasAssignment(
    const std::vector<TasLeaf>& leaves, int32_t level_count, const TasRequest& request) {
  if (request.level < 0 || request.level >= level_count) {
    return std::string("requested level is not a level of the topology");
  }
  TasTree tree(leaves, level_count);
  return tree.Assign(request, leaves.size());
}

}  // namespace muster::placement
