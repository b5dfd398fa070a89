#include "placement/node_filter.h"

#include <charconv>
#include <optional>

namespace muster::placement {
namespace {

constexpr const char* kUnschedulableTaintKey = "node.kubernetes.io/unschedulable";

std::optional<int64_t> ParseInt(const std::string& s) {
  int64_t v = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || p != end || s.empty()) return std::nullopt;
  return v;
}

bool Contains(const std::vector<std::string>& values, const std::string& v) {
  for (const auto& x : values) {
    if (x == v) return true;
  }
  return false;
}

// Shared by label and field requirements: `value` is null when the key is absent.
bool MatchesValue(const model::NodeSelectorRequirement& req, const std::string* value) {
  using Op = model::SelectorOperator;
  switch (req.op) {
    case Op::kIn:
      return value != nullptr && Contains(req.values, *value);
    case Op::kNotIn:
      return value == nullptr || !Contains(req.values, *value);
    case Op::kExists:
      return value != nullptr;
    case Op::kDoesNotExist:
      return value == nullptr;
    case Op::kGt:
    case Op::kLt: {
      // Kubernetes requires exactly one integer value; anything else never matches.
      if (value == nullptr || req.values.size() != 1) return false;
      auto have = ParseInt(*value);
      auto want = ParseInt(req.values[0]);
      if (!have || !want) return false;
      return req.op == Op::kGt ? *have > *want : *have < *want;
    }
  }
  return false;
}

}  // namespace

const char* VerdictName(FilterVerdict v) {
  switch (v) {
    case FilterVerdict::kFits:
      return "fits";
    case FilterVerdict::kNotReady:
      return "node not ready";
    case FilterVerdict::kUnschedulable:
      return "node unschedulable";
    case FilterVerdict::kUntoleratedTaint:
      return "untolerated taint";
    case FilterVerdict::kNodeSelectorMismatch:
      return "node selector mismatch";
    case FilterVerdict::kAffinityMismatch:
      return "node affinity mismatch";
    case FilterVerdict::kExcluded:
      return "excluded";
  }
  return "unknown";
}

bool MayFilterWithoutLabels(const model::Node& node) {
  if (node.unschedulable) return true;
  for (const auto& taint : node.taints) {
    if (taint.effect != model::TaintEffect::kPreferNoSchedule) return true;
  }
  return false;
}

bool ToleratesTaint(const model::Toleration& t, const model::Taint& taint) {
  if (t.effect.has_value() && *t.effect != taint.effect) return false;
  if (t.op == model::TolerationOperator::kExists) {
    // An empty key with Exists tolerates everything (of the matching effect).
    return t.key.empty() || t.key == taint.key;
  }
  return t.key == taint.key && t.value == taint.value;
}

bool TaintTolerated(const model::Taint& taint, const std::vector<model::Toleration>& tolerations) {
  for (const auto& t : tolerations) {
    if (ToleratesTaint(t, taint)) return true;
  }
  return false;
}

int32_t CountUntoleratedPreferNoSchedule(const std::vector<model::Taint>& taints,
                                         const std::vector<model::Toleration>& tolerations) {
  int32_t n = 0;
  for (const auto& taint : taints) {
    if (taint.effect == model::TaintEffect::kPreferNoSchedule &&
        !TaintTolerated(taint, tolerations)) {
      ++n;
    }
  }
  return n;
}

bool MatchesRequirement(const model::NodeSelectorRequirement& req, const model::StringMap& labels) {
  auto it = labels.find(req.key);
  return MatchesValue(req, it == labels.end() ? nullptr : &it->second);
}

bool MatchesFieldRequirement(const model::NodeSelectorRequirement& req,
                             const std::string& node_name) {
  // metadata.name is the only field kube-scheduler supports; others never match.
  if (req.key != "metadata.name") return false;
  return MatchesValue(req, &node_name);
}

bool MatchesTerm(const model::NodeSelectorTerm& term, const model::Node& node) {
  // A term with no requirements matches nothing (upstream semantics).
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  for (const auto& req : term.match_expressions) {
    if (!MatchesRequirement(req, node.meta.labels)) return false;
  }
  for (const auto& req : term.match_fields) {
    if (!MatchesFieldRequirement(req, node.meta.name)) return false;
  }
  return true;
}

bool MatchesRequiredAffinity(const std::vector<model::NodeSelectorTerm>& terms,
                             const model::Node& node) {
  if (terms.empty()) return true;
  for (const auto& term : terms) {
    if (MatchesTerm(term, node)) return true;
  }
  return false;
}

FilterVerdict FilterNode(const model::Node& node, bool ready, const PodConstraints& pod,
                         bool check_selector) {
  if (!ready) return FilterVerdict::kNotReady;
  if (node.unschedulable) {
    model::Taint t{kUnschedulableTaintKey, "", model::TaintEffect::kNoSchedule};
    if (!TaintTolerated(t, pod.tolerations)) return FilterVerdict::kUnschedulable;
  }
  for (const auto& taint : node.taints) {
    if (taint.effect == model::TaintEffect::kPreferNoSchedule) continue;
    if (!TaintTolerated(taint, pod.tolerations)) return FilterVerdict::kUntoleratedTaint;
  }
  if (check_selector) {
    for (const auto& [k, v] : pod.node_selector) {
      auto it = node.meta.labels.find(k);
      if (it == node.meta.labels.end() || it->second != v) {
        return FilterVerdict::kNodeSelectorMismatch;
      }
    }
  }
  if (pod.affinity != nullptr && !MatchesRequiredAffinity(pod.affinity->required, node)) {
    return FilterVerdict::kAffinityMismatch;
  }
  return FilterVerdict::kFits;
}

}  // namespace muster::placement
