// v1 LimitRange: validated as kube-apiserver's ValidateLimitRange (field paths and
// messages as upstream's) and defaulted as its SetDefaults_LimitRangeItem, so a
// manifest read by `muster simulate` means what the stored object means on a server.
#include <cstdio>
#include <set>
#include <string>
#include <string_view>

#include "api/decode_common.h"

namespace muster::api::internal {
namespace {

bool IsStandardLimitType(std::string_view type) {
  return type == "Pod" || type == "Container" || type == "PersistentVolumeClaim";
}

// Upstream's IsStandardContainerResourceName, for names without a domain prefix.
bool IsStandardContainerResource(std::string_view name) {
  return name == "cpu" || name == "memory" || name == "ephemeral-storage" ||
         name.substr(0, 10) == "hugepages-";
}

// GPUs, hugepages and other extended resources cannot be overcommitted: a default
// limit and default request of one must agree (upstream's IsOvercommitAllowed).
bool OvercommitAllowed(std::string_view name) {
  return name == "cpu" || name == "memory" || name == "ephemeral-storage";
}

// Reads one resource map of an item, checking its names for the item's type.
model::QuantityMap ReadResources(const YamlValue& map, const std::string& type) {
  model::QuantityMap out;
  for (auto& [name, value] : map.Entries()) {
    const bool container_like = type == "Pod" || type == "Container";
    if (container_like && name.find('/') == std::string::npos &&
        !IsStandardContainerResource(name)) {
      value.Error("Invalid value: " + Quote(name) + ": must be a standard resource for containers");
      continue;
    }
    if (auto q = value.ResourceQty(name, QuantityScope::kWorkload)) out[name] = *q;
  }
  return out;
}

const Quantity* Find(const model::QuantityMap& map, const std::string& key) {
  auto it = map.find(key);
  return it == map.end() ? nullptr : &it->second;
}

// The relations between one resource's min, max, defaults and ratio.
void CheckResource(const YamlValue& item, const model::LimitRangeItem& l, const std::string& k) {
  const Quantity* min = Find(l.min, k);
  const Quantity* max = Find(l.max, k);
  const Quantity* def = Find(l.default_limit, k);
  const Quantity* req = Find(l.default_request, k);
  const Quantity* ratio = Find(l.max_limit_request_ratio, k);
  // At "<field>[<resource>]", as upstream's field path names a map key.
  auto invalid = [&](const char* field, const Quantity& value, const std::string& why) {
    for (auto& [name, entry] : item.Get(field).Entries()) {
      if (name == k) return entry.Error("Invalid value: " + Quote(value.ToString()) + ": " + why);
    }
  };
  if (min && max && *min > *max) {
    invalid("min", *min,
            "min value " + min->ToString() + " is greater than max value " + max->ToString());
  }
  if (req && min && *min > *req) {
    invalid("defaultRequest", *req,
            "min value " + min->ToString() + " is greater than default request value " +
                req->ToString());
  }
  if (req && max && *req > *max) {
    invalid("defaultRequest", *req,
            "default request value " + req->ToString() + " is greater than max value " +
                max->ToString());
  }
  if (req && def && *req > *def) {
    invalid("defaultRequest", *req,
            "default request value " + req->ToString() + " is greater than default limit value " +
                def->ToString());
  }
  if (def && min && *min > *def) {
    invalid("default", *def,
            "min value " + min->ToString() + " is greater than default value " + def->ToString());
  }
  if (def && max && *def > *max) {
    invalid("default", *def,
            "default value " + def->ToString() + " is greater than max value " + max->ToString());
  }
  if (ratio && *ratio < Quantity::FromInt(1)) {
    invalid("maxLimitRequestRatio", *ratio, "ratio " + ratio->ToString() + " is less than 1");
  }
  if (ratio && min && max && min->MilliValue() > 0) {
    const double limit = static_cast<double>(max->MilliValue()) / min->MilliValue();
    if (static_cast<double>(ratio->MilliValue()) / 1000 > limit) {
      char text[64];
      std::snprintf(text, sizeof text, "%f", limit);  // Go's %f
      invalid("maxLimitRequestRatio", *ratio,
              "ratio " + ratio->ToString() + " is greater than max/min = " + text);
    }
  }
  if (!OvercommitAllowed(k) && def && req && *def != *req) {
    invalid("defaultRequest", *req,
            "default value " + def->ToString() + " must equal to defaultRequest value " +
                req->ToString() + " in " + k);
  }
}

// Upstream's create-time defaults of a Container item.
void DefaultContainerItem(model::LimitRangeItem& l) {
  for (const auto& [k, q] : l.max) l.default_limit.try_emplace(k, q);
  for (const auto& [k, q] : l.default_limit) l.default_request.try_emplace(k, q);
  for (const auto& [k, q] : l.min) l.default_request.try_emplace(k, q);
}

}  // namespace

void DecodeLimitRange(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  root.Known({"spec"});
  model::LimitRange range;
  YamlValue limits = root.Get("spec").Get("limits");
  std::set<std::string> types;
  for (const YamlValue& item : limits.Items()) {
    item.Known({"type", "max", "min", "default", "defaultRequest", "maxLimitRequestRatio"});
    model::LimitRangeItem l;
    YamlValue type = item.Get("type");
    if (auto t = type.String()) l.type = *t;
    if (l.type.empty() || (l.type.find('/') == std::string::npos && !IsStandardLimitType(l.type))) {
      type.Error("Invalid value: " + Quote(l.type) +
                 ": must be a standard limit type or fully qualified");
    } else if (!types.insert(l.type).second) {
      type.Error("Duplicate value: " + Quote(l.type));
    }
    l.max = ReadResources(item.Get("max"), l.type);
    l.min = ReadResources(item.Get("min"), l.type);
    YamlValue def = item.Get("default");
    YamlValue req = item.Get("defaultRequest");
    if (l.type == "Pod") {
      if (def.IsSet() && !def.Entries().empty())
        def.Error("Forbidden: may not be specified when `type` is 'Pod'");
      if (req.IsSet() && !req.Entries().empty())
        req.Error("Forbidden: may not be specified when `type` is 'Pod'");
    } else {
      l.default_limit = ReadResources(def, l.type);
      l.default_request = ReadResources(req, l.type);
    }
    if (l.type == "PersistentVolumeClaim" && l.min.count("storage") == 0 &&
        l.max.count("storage") == 0) {
      item.Get("limits").Error(
          "Required value: either minimum or maximum storage value is required, but neither was "
          "provided");
    }
    l.max_limit_request_ratio = ReadResources(item.Get("maxLimitRequestRatio"), l.type);
    std::set<std::string> keys;
    for (const auto* m :
         {&l.max, &l.min, &l.default_limit, &l.default_request, &l.max_limit_request_ratio}) {
      for (const auto& [k, q] : *m) keys.insert(k);
    }
    for (const std::string& k : keys) CheckResource(item, l, k);
    if (l.type == "Container") DefaultContainerItem(l);
    range.limits.push_back(std::move(l));
  }
  range.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.limit_ranges.push_back(std::move(range));
}

}  // namespace muster::api::internal
