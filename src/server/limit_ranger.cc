#include "server/limit_ranger.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "api/decode.h"
#include "core/quantity.h"
#include "model/limit_range.h"

namespace muster::server {
namespace {

using json = nlohmann::json;
using Quantities = std::map<std::string, Quantity>;

// A container's resources.requests / resources.limits, as quantities.
Quantities ReadQuantities(const json& container, const char* which) {
  Quantities out;
  const json* resources = container.contains("resources") ? &container["resources"] : nullptr;
  if (resources == nullptr || !resources->is_object() || !resources->contains(which)) return out;
  const json& map = (*resources)[which];
  if (!map.is_object()) return out;
  for (const auto& [k, v] : map.items()) {
    if (auto q = Quantity::Parse(v.is_string() ? v.get<std::string>() : v.dump()); q.ok()) {
      out.emplace(k, *q);
    }
  }
  return out;
}

// Calls `fn(container, init)` for every container object of the pod spec, app
// containers first, then init containers.
template <typename Fn>
void ForEachContainer(json& spec, Fn&& fn) {
  for (const char* list : {"containers", "initContainers"}) {
    if (!spec.contains(list) || !spec[list].is_array()) continue;
    for (json& c : spec[list]) {
      if (c.is_object()) fn(c, list[0] == 'i');
    }
  }
}

// Fills what `container` lacks from the defaults; returns the annotation's phrases.
void MergeDefaults(json& container, const model::LimitRangeItem& item, const std::string& prefix,
                   std::vector<std::string>& notes) {
  json& resources = container["resources"];
  if (!resources.is_object()) resources = json::object();
  auto fill = [&](const char* which, const model::QuantityMap& defaults, const char* word) {
    std::vector<std::string> set;
    for (const auto& [k, q] : defaults) {
      json& map = resources[which];
      if (!map.is_object()) map = json::object();
      if (map.contains(k)) continue;
      map[k] = q.ToString();
      set.push_back(k);
    }
    if (resources.contains(which) && resources[which].empty()) resources.erase(which);
    if (set.empty()) return;
    std::sort(set.begin(), set.end());
    std::string joined;
    for (const auto& k : set) joined += (joined.empty() ? "" : ", ") + k;
    notes.push_back(joined + " " + word + " for " + prefix + " " + container.value("name", ""));
  };
  fill("requests", item.default_request, "request");
  fill("limits", item.default_limit, "limit");
}

// minConstraint, maxConstraint and limitRequestRatioConstraint of upstream's plugin.
void CheckBounds(const std::string& type, const model::LimitRangeItem& item,
                 const Quantities& request, const Quantities& limit,
                 std::vector<std::string>& errors) {
  auto find = [](const Quantities& m, const std::string& k) -> const Quantity* {
    auto it = m.find(k);
    return it == m.end() ? nullptr : &it->second;
  };
  for (const auto& [k, min] : item.min) {
    const Quantity* req = find(request, k);
    const Quantity* lim = find(limit, k);
    if (req == nullptr) {
      errors.push_back(fmt::format("minimum {} usage per {} is {}.  No request is specified", k,
                                   type, min.ToString()));
    } else if (*req < min) {
      errors.push_back(fmt::format("minimum {} usage per {} is {}, but request is {}", k, type,
                                   min.ToString(), req->ToString()));
    } else if (lim != nullptr && *lim < min) {
      errors.push_back(fmt::format("minimum {} usage per {} is {}, but limit is {}", k, type,
                                   min.ToString(), lim->ToString()));
    }
  }
  for (const auto& [k, max] : item.max) {
    const Quantity* req = find(request, k);
    const Quantity* lim = find(limit, k);
    if (lim == nullptr) {
      errors.push_back(fmt::format("maximum {} usage per {} is {}.  No limit is specified", k, type,
                                   max.ToString()));
    } else if (*lim > max) {
      errors.push_back(fmt::format("maximum {} usage per {} is {}, but limit is {}", k, type,
                                   max.ToString(), lim->ToString()));
    } else if (req != nullptr && *req > max) {
      errors.push_back(fmt::format("maximum {} usage per {} is {}, but request is {}", k, type,
                                   max.ToString(), req->ToString()));
    }
  }
  for (const auto& [k, ratio] : item.max_limit_request_ratio) {
    const Quantity* req = find(request, k);
    const Quantity* lim = find(limit, k);
    const std::string head =
        fmt::format("{} max limit to request ratio per {} is {}", k, type, ratio.ToString());
    if (req == nullptr || req->IsZero()) {
      errors.push_back(head + ", but no request is specified or request is 0");
    } else if (lim == nullptr || lim->IsZero()) {
      errors.push_back(head + ", but no limit is specified or limit is 0");
    } else {
      const double observed =
          static_cast<double>(lim->MilliValue()) / static_cast<double>(req->MilliValue());
      if (observed * 1000 > static_cast<double>(ratio.MilliValue())) {
        errors.push_back(head + fmt::format(", but provided ratio is {:f}", observed));
      }
    }
  }
}

// The pod's totals in milli-units: containers summed, an init container counting
// where it asks more than that sum (upstream's podRequests / podLimits).
Quantities PodTotal(const json& spec, const char* which) {
  std::map<std::string, int64_t> sum;
  std::map<std::string, Quantity::Format> format;  // the first container's, as Add keeps it
  auto list = [&](const char* key) {
    return spec.contains(key) && spec[key].is_array() ? spec[key] : json::array();
  };
  for (const json& c : list("containers")) {
    for (const auto& [k, q] : ReadQuantities(c, which)) {
      sum[k] += q.MilliValue();
      format.emplace(k, q.format());
    }
  }
  for (const json& c : list("initContainers")) {
    for (const auto& [k, q] : ReadQuantities(c, which)) {
      sum[k] = std::max(sum[k], q.MilliValue());
      format.emplace(k, q.format());
    }
  }
  Quantities out;
  for (const auto& [k, milli] : sum) out.emplace(k, Quantity::FromMilli(milli, format.at(k)));
  return out;
}

}  // namespace

std::optional<ApiError> AdmitPodLimits(const control::ObjectReader& store, const std::string& ns,
                                       json& pod) {
  auto listed = store.List("limitranges", ns);
  if (!listed.ok() || listed->items.empty()) return std::nullopt;
  api::DecodeResult decoded;
  for (const json& object : listed->items) DecodeObject(object, "limitranges", decoded);
  std::vector<model::LimitRange> ranges = decoded.manifests.limit_ranges;
  std::sort(ranges.begin(), ranges.end(),
            [](const auto& a, const auto& b) { return a.meta.name < b.meta.name; });
  if (!pod.contains("spec") || !pod["spec"].is_object()) return std::nullopt;
  json& spec = pod["spec"];

  // kube-apiserver's defaulting ran first (DefaultCoreObject): a limit without a
  // request is already the request, so a default request never undercuts a stated
  // limit.
  std::vector<std::string> notes;
  std::vector<std::string> errors;
  for (const model::LimitRange& range : ranges) {
    for (const model::LimitRangeItem& item : range.limits) {
      if (item.type != "Container") continue;
      ForEachContainer(spec, [&](json& c, bool init) {
        MergeDefaults(c, item, init ? "init container" : "container", notes);
      });
    }
  }
  for (const model::LimitRange& range : ranges) {
    for (const model::LimitRangeItem& item : range.limits) {
      if (item.type == "Container") {
        ForEachContainer(spec, [&](json& c, bool) {
          CheckBounds("Container", item, ReadQuantities(c, "requests"), ReadQuantities(c, "limits"),
                      errors);
        });
      } else if (item.type == "Pod") {
        CheckBounds("Pod", item, PodTotal(spec, "requests"), PodTotal(spec, "limits"), errors);
      }
    }
  }
  if (!errors.empty()) {
    std::string message = errors.size() == 1 ? errors[0] : "[";
    if (errors.size() > 1) {
      for (size_t i = 0; i < errors.size(); ++i) message += (i ? ", " : "") + errors[i];
      message += "]";
    }
    const std::string name = pod.value("metadata", json::object()).value("name", "");
    ApiError e = MakeError(403, "Forbidden", "pods \"" + name + "\" is forbidden: " + message);
    e.name = name;
    e.kind = "pods";
    return e;
  }
  if (!notes.empty()) {
    std::string joined;
    for (const auto& n : notes) joined += (joined.empty() ? "" : "; ") + n;
    json& meta = pod["metadata"];
    if (!meta["annotations"].is_object()) meta["annotations"] = json::object();
    meta["annotations"]["kubernetes.io/limit-ranger"] = "LimitRanger plugin set: " + joined;
  }
  return std::nullopt;
}

}  // namespace muster::server
