#include "core/quantity_bounds.h"

#include <array>

namespace muster {
namespace {

constexpr std::string_view kGpu = "nvidia.com/gpu";

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Object counts a ResourceQuota limits: whole numbers in Kubernetes.
bool IsCountResource(std::string_view name) {
  static constexpr std::array<std::string_view, 9> kCounts = {"pods",
                                                              "services",
                                                              "replicationcontrollers",
                                                              "resourcequotas",
                                                              "secrets",
                                                              "configmaps",
                                                              "persistentvolumeclaims",
                                                              "services.nodeports",
                                                              "services.loadbalancers"};
  for (std::string_view c : kCounts) {
    if (name == c || name == std::string("count/").append(c)) return true;
  }
  return StartsWith(name, "count/");
}

// An extended resource: "<domain>/<name>" outside the kubernetes.io domains and not
// a quota's "requests."/"limits." prefix (Kubernetes' IsExtendedResourceName).
bool IsExtended(std::string_view name) {
  if (name.find('/') == std::string_view::npos) return false;
  if (name.find("kubernetes.io/") != std::string_view::npos) return false;
  return !StartsWith(name, "requests.") && !StartsWith(name, "limits.");
}

}  // namespace

bool IsIntegerResource(std::string_view name) { return IsExtended(name) || IsCountResource(name); }

bool IsByteResource(std::string_view name) {
  return name == "memory" || name == "ephemeral-storage" || name == "storage" ||
         StartsWith(name, "hugepages-") || name == "requests.memory" || name == "limits.memory" ||
         name == "requests.storage" || name == "requests.ephemeral-storage" ||
         name == "limits.ephemeral-storage";
}

std::string CheckQuantityBound(std::string_view name, const Quantity& q, QuantityScope scope) {
  if (q.Sign() < 0) return "must be greater than or equal to 0";
  // Compared exactly (Quantity keeps the decimal value), before any conversion to
  // int64 could saturate or round.
  Quantity max;
  std::string max_text;
  std::string why;
  if (name == kGpu && scope == QuantityScope::kNode) {
    max = Quantity::FromInt(kMaxDevicesPerNode);
    max_text = std::to_string(kMaxDevicesPerNode);
    why = " (the most GPUs one node may have)";
  } else if (IsIntegerResource(name)) {
    max = Quantity::FromInt(kMaxWholeUnits);
    max_text = std::to_string(kMaxWholeUnits);
  } else if (IsByteResource(name)) {
    max = Quantity::FromInt(kMaxBytes, Quantity::Format::kBinarySI);
    max_text = max.ToString();
  } else {
    // cpu and every other resource measured in milli-units.
    max = Quantity::FromMilli(kMaxCpuMilli);
    max_text = max.ToString();
  }
  if (q > max) return "must be less than or equal to " + max_text + why;
  if (IsIntegerResource(name) && q.MilliValue() % 1000 != 0) return "must be an integer";
  return "";
}

}  // namespace muster
