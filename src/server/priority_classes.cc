#include "server/priority_classes.h"

#include <cstdint>

#include "control/json_fields.h"
#include "server/meta_validation.h"

namespace muster::server {
namespace {

using json = nlohmann::json;

constexpr char kSystemPrefix[] = "system-";
constexpr int64_t kSystemCriticalPriority = 2 * kHighestUserDefinablePriority;

struct SystemClass {
  const char* name;
  int64_t value;
  const char* description;
};

constexpr SystemClass kSystemClasses[] = {
    {"system-node-critical", kSystemCriticalPriority + 1000,
     "Used for system critical pods that must not be moved from their current node."},
    {"system-cluster-critical", kSystemCriticalPriority,
     "Used for system critical pods that must run in the cluster, but can be moved to another "
     "node if necessary."},
};

// 403 about PriorityClass `name`.
ApiError ForbiddenClass(const std::string& name, const std::string& why) {
  ApiError e = MakeError(403, "Forbidden",
                         "priorityclasses.scheduling.k8s.io \"" + name + "\" is forbidden: " + why);
  e.name = name;
  e.group = "scheduling.k8s.io";
  e.kind = "priorityclasses";
  return e;
}

bool GlobalDefault(const json& pc) {
  return pc.is_object() && pc.contains("globalDefault") && pc["globalDefault"] == true;
}

}  // namespace

bool IsPriorityClassType(const control::ResourceType& type) {
  return type.group == "scheduling.k8s.io" && type.kind == "PriorityClass";
}

std::vector<json> SystemPriorityClasses() {
  std::vector<json> out;
  for (const SystemClass& c : kSystemClasses) {
    out.push_back({{"apiVersion", "scheduling.k8s.io/v1"},
                   {"kind", "PriorityClass"},
                   {"metadata", {{"name", c.name}}},
                   {"value", c.value},
                   {"description", c.description},
                   {"preemptionPolicy", "PreemptLowerPriority"}});
  }
  return out;
}

std::vector<StatusCause> ValidatePriorityClass(const json& pc) {
  std::vector<StatusCause> out;
  const std::string name = control::StringField(control::ObjectField(pc, "metadata"), "name");
  const int64_t value = control::IntField(pc, "value");
  if (name.rfind(kSystemPrefix, 0) == 0) {
    // Only the system classes themselves, as they are.
    std::string error = name + " is not a known system priority class";
    for (const SystemClass& c : kSystemClasses) {
      if (name != c.name) continue;
      error.clear();
      if (value != c.value) {
        error = "value of " + name + " PriorityClass must be " + std::to_string(c.value);
      } else if (GlobalDefault(pc)) {
        error = "globalDefault of " + name + " PriorityClass must be false";
      }
    }
    if (!error.empty()) {
      out.push_back(Forbidden("metadata.name",
                              "priority class names with 'system-' prefix are reserved for "
                              "system use only. error: " +
                                  error));
    }
  } else if (value > kHighestUserDefinablePriority) {
    out.push_back(Forbidden("value", "maximum allowed value of a user defined priority is " +
                                         std::to_string(kHighestUserDefinablePriority)));
  }
  return out;
}

std::optional<ApiError> RefuseSystemPriorityClassDelete(const std::string& name) {
  for (const SystemClass& c : kSystemClasses) {
    if (name == c.name) {
      return ForbiddenClass(name, "this is a system priority class and cannot be deleted");
    }
  }
  return std::nullopt;
}

std::optional<ApiError> AdmitPriorityClass(const control::ObjectReader& store, const json& pc) {
  if (!GlobalDefault(pc)) return std::nullopt;
  const std::string name = control::StringField(control::ObjectField(pc, "metadata"), "name");
  auto classes = store.List("priorityclasses.scheduling.k8s.io", "");
  if (!classes.ok()) return std::nullopt;  // the write's own read fails too
  for (const json& other : classes->items) {
    const std::string other_name =
        control::StringField(control::ObjectField(other, "metadata"), "name");
    if (other_name == name || !GlobalDefault(other)) continue;
    return ForbiddenClass(name, "PriorityClass " + other_name +
                                    " is already marked as default. Only one default can exist");
  }
  return std::nullopt;
}

}  // namespace muster::server
