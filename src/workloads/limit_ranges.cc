#include "workloads/limit_ranges.h"

#include <algorithm>
#include <set>

#include "core/resource_name.h"
#include "workloads/pod_requests.h"

namespace muster::workloads {
namespace {

enum class Keep { kMin, kMax, kFirst };

void Merge(model::QuantityMap& into, const model::QuantityMap& from, Keep keep) {
  for (const auto& [k, q] : from) {
    auto [it, fresh] = into.try_emplace(k, q);
    if (fresh || keep == Keep::kFirst) continue;
    if (keep == Keep::kMin ? q < it->second : q > it->second) it->second = q;
  }
}

void AddToSummary(model::LimitRangeItem& s, const model::LimitRangeItem& item) {
  Merge(s.max, item.max, Keep::kMin);
  Merge(s.min, item.min, Keep::kMax);
  Merge(s.default_limit, item.default_limit, Keep::kFirst);
  Merge(s.default_request, item.default_request, Keep::kFirst);
  Merge(s.max_limit_request_ratio, item.max_limit_request_ratio, Keep::kMin);
}

// Kueue's field.Invalid(path, []string{...}, detail) as its error text reads.
std::string InvalidNames(const std::string& path, const std::vector<std::string>& names,
                         const char* detail) {
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "\"" : ", \"") + n + "\"";
  return path + ": Invalid value: []string{" + list + "}: " + detail;
}

constexpr const char* kAboveMax = "requests must not be above the limitRange max";
constexpr const char* kBelowMin = "requests must not be below the limitRange min";

// Names whose amount in `a` is above the one in `b`; only names `b` has when
// `b_bounds`, else every name of `a` (a name `b` lacks counts as zero there).
std::vector<std::string> Greater(const model::QuantityMap& a, const model::QuantityMap& b,
                                 bool b_bounds) {
  std::vector<std::string> out;
  for (const auto& [k, q] : a) {
    auto it = b.find(k);
    if (it == b.end()) {
      if (!b_bounds && q.Sign() > 0) out.push_back(k);
      continue;
    }
    if (q > it->second) out.push_back(k);
  }
  return out;
}

void CheckContainers(const std::vector<model::Container>& containers, const std::string& path,
                     const model::LimitRangeItem& range, std::vector<std::string>& reasons) {
  for (size_t i = 0; i < containers.size(); ++i) {
    const model::Container& c = containers[i];
    model::QuantityMap low = c.requests;
    model::QuantityMap high = c.requests;
    Merge(low, c.limits, Keep::kMin);
    Merge(high, c.limits, Keep::kMax);
    const std::string at = path + "[" + std::to_string(i) + "]";
    if (auto names = Greater(high, range.max, true); !names.empty())
      reasons.push_back(InvalidNames(at, names, kAboveMax));
    if (auto names = Greater(range.min, low, false); !names.empty())
      reasons.push_back(InvalidNames(at, names, kBelowMin));
  }
}

void DefaultContainers(std::vector<model::Container>& containers,
                       const model::LimitRangeItem& range) {
  for (model::Container& c : containers) {
    Merge(c.limits, range.default_limit, Keep::kFirst);
    Merge(c.requests, range.default_request, Keep::kFirst);
  }
}

// A pod set's effective requests by name, for the Pod bounds.
model::QuantityMap NamedRequests(const model::PodSpec& spec) {
  model::QuantityMap out;
  const ResourceList total = EffectivePodRequests(spec);
  total.ForEachNonZero([&out](ResourceId id, int64_t amount) {
    out[ResourceNames::Name(id)] =
        ResourceNames::IsMilli(id) ? Quantity::FromMilli(amount) : Quantity::FromInt(amount);
  });
  return out;
}

}  // namespace

LimitRangeSummary SummarizeLimitRanges(const std::vector<model::LimitRange>& ranges,
                                       const std::string& namespace_) {
  std::vector<const model::LimitRange*> here;
  for (const model::LimitRange& r : ranges) {
    if (r.meta.namespace_ == namespace_) here.push_back(&r);
  }
  // By name: the first default of a resource wins, so the order must not depend on
  // the order objects were listed or created in.
  std::sort(here.begin(), here.end(),
            [](const auto* a, const auto* b) { return a->meta.name < b->meta.name; });
  LimitRangeSummary s;
  for (const model::LimitRange* r : here) {
    for (const model::LimitRangeItem& item : r->limits) {
      if (item.type == "Container") {
        AddToSummary(s.container, item);
        s.has_container = true;
      } else if (item.type == "Pod") {
        AddToSummary(s.pod, item);
        s.has_pod = true;
      }
    }
  }
  return s;
}

void ApplyLimitRanges(const std::vector<model::LimitRange>& ranges, model::Workload* workload) {
  if (ranges.empty()) return;
  const LimitRangeSummary s = SummarizeLimitRanges(ranges, workload->meta.namespace_);
  if (!s.has_container && !s.has_pod) return;
  std::vector<std::string> reasons;
  for (model::PodSet& ps : workload->pod_sets) {
    model::PodSpec& spec = ps.tmpl.spec;
    if (s.has_container) {
      DefaultContainers(spec.init_containers, s.container);
      DefaultContainers(spec.containers, s.container);
      ps.requests = EffectivePodRequests(spec);
      const std::string path = "podSets." + ps.name;
      CheckContainers(spec.init_containers, path + ".initContainers", s.container, reasons);
      CheckContainers(spec.containers, path + ".containers", s.container, reasons);
    }
    if (s.has_pod) {
      const model::QuantityMap total = NamedRequests(spec);
      const std::string path = "podSets." + ps.name;
      if (auto names = Greater(total, s.pod.max, true); !names.empty())
        reasons.push_back(InvalidNames(path, names, kAboveMax));
      if (auto names = Greater(s.pod.min, total, false); !names.empty())
        reasons.push_back(InvalidNames(path, names, kBelowMin));
    }
  }
  if (reasons.empty()) return;
  std::string message = "didn't satisfy LimitRange constraints: ";
  for (size_t i = 0; i < reasons.size(); ++i) message += (i ? "; " : "") + reasons[i];
  workload->inadmissible = std::move(message);
}

}  // namespace muster::workloads
