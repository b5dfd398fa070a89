// Topology domains: Kueue TAS levels (a domain is a node-label value) and Volcano
// HyperNodes, each with its member nodes, plus Kueue's TAS assignment algorithm
// (fewest domains, then best fit) over per-node pod capacities.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace muster::placement {

// A set of nodes placement can confine a gang to. The cluster keeps each domain's
// free whole GPUs so a search skips domains that cannot hold the gang.
struct Domain {
  std::string key;             // "label:<key>=<value>" or "hypernode:<name>"
  std::vector<int32_t> ranks;  // member nodes by name rank, ascending
  int32_t tier = 0;            // HyperNode tier; 0 for label domains
};

class DomainIndex {
 public:
  int32_t Add(Domain d);
  std::optional<int32_t> Find(const std::string& key) const;
  const Domain& Get(int32_t id) const { return domains_[id]; }
  int32_t Size() const { return static_cast<int32_t>(domains_.size()); }

  static std::string LabelKey(const std::string& label, const std::string& value) {
    return "label:" + label + "=" + value;
  }
  static std::string HyperNodeKey(const std::string& name) { return "hypernode:" + name; }

 private:
  std::vector<Domain> domains_;
  std::map<std::string, int32_t> by_key_;
};

// One node as the TAS algorithm sees it: its values for every level (widest
// first) and how many pods of the pod set fit on it.
struct TasLeaf {
  std::vector<std::string> values;
  int32_t capacity = 0;
};

struct TasRequest {
  int32_t level = 0;  // index into the levels (0 = widest)
  bool required = true;
  int32_t count = 0;
};

// Kueue's findTopologyAssignment: counts per domain bottom-up, the requested level's
// best-fit domain (or, when preferred, a wider level's, or the fewest top-level
// domains), then down level by level keeping the number of domains minimal.
// Returns pods per leaf (in `leaves` order) or why it cannot fit.
std::variant<std::vector<int32_t>, std::string> FindTasAssignment(
    const std::vector<TasLeaf>& leaves, int32_t level_count, const TasRequest& request);

}  // namespace muster::placement
