#include "placement/hyper_nodes.h"

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>

namespace muster::placement {
namespace {

// Full-match regex; an invalid pattern matches nothing rather than throwing out of
// the placement layer.
bool RegexMatches(const std::string& pattern, const std::string& s) {
  try {
    return std::regex_match(s, std::regex(pattern));
  } catch (const std::regex_error&) {
    return false;
  }
}

bool MemberMatchesName(const model::HyperNodeMember& m, const std::string& name) {
  if (!m.exact_name.empty()) return m.exact_name == name;
  if (!m.regex.empty()) return RegexMatches(m.regex, name);
  return false;
}

bool LabelsMatch(const model::StringMap& want, const model::StringMap& have) {
  if (want.empty()) return false;
  for (const auto& [k, v] : want) {
    auto it = have.find(k);
    if (it == have.end() || it->second != v) return false;
  }
  return true;
}

class Resolver {
 public:
  Resolver(const std::vector<model::HyperNode>& hns, const std::vector<NodeLabels>& nodes)
      : hns_(hns), nodes_(nodes) {
    for (size_t i = 0; i < hns.size(); ++i) by_name_.emplace(hns[i].meta.name, i);
  }

  const std::set<int32_t>& Resolve(size_t i) {
    auto it = done_.find(i);
    if (it != done_.end()) return it->second;
    std::set<int32_t> out;
    if (visiting_.insert(i).second) {
      for (const auto& m : hns_[i].members) AddMember(m, out);
      visiting_.erase(i);
    }
    return done_.emplace(i, std::move(out)).first->second;
  }

 private:
  void AddMember(const model::HyperNodeMember& m, std::set<int32_t>& out) {
    if (m.type == model::HyperNodeMember::Type::kNode) {
      std::optional<std::regex> re;
      if (m.exact_name.empty() && !m.regex.empty()) {
        try {
          re.emplace(m.regex);  // compiled once for every node
        } catch (const std::regex_error&) {
          return;
        }
      }
      for (int32_t r = 0; r < static_cast<int32_t>(nodes_.size()); ++r) {
        const std::string& name = *nodes_[r].name;
        bool match = !m.exact_name.empty() ? m.exact_name == name
                     : re                  ? std::regex_match(name, *re)
                                           : LabelsMatch(m.labels, *nodes_[r].labels);
        if (match) out.insert(r);
      }
      return;
    }
    for (const auto& [name, idx] : by_name_) {
      if (!MemberMatchesName(m, name) || visiting_.count(idx)) continue;
      const auto& child = Resolve(idx);
      out.insert(child.begin(), child.end());
    }
  }

  const std::vector<model::HyperNode>& hns_;
  const std::vector<NodeLabels>& nodes_;
  std::map<std::string, size_t> by_name_;
  std::map<size_t, std::set<int32_t>> done_;
  std::set<size_t> visiting_;
};

}  // namespace

std::vector<ResolvedHyperNode> ResolveHyperNodes(const std::vector<model::HyperNode>& hyper_nodes,
                                                 const std::vector<NodeLabels>& nodes) {
  Resolver resolver(hyper_nodes, nodes);
  std::vector<ResolvedHyperNode> out;
  for (size_t i = 0; i < hyper_nodes.size(); ++i) {
    const auto& set = resolver.Resolve(i);
    out.push_back({hyper_nodes[i].meta.name, hyper_nodes[i].tier, {set.begin(), set.end()}});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.tier != b.tier ? a.tier < b.tier : a.name < b.name;
  });
  return out;
}

}  // namespace muster::placement
