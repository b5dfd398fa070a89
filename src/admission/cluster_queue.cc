#include "admission/cluster_queue.h"

#include <algorithm>

namespace muster::admission {

std::optional<int32_t> FlavorCatalog::Find(const std::string& name) const {
  for (size_t i = 0; i < flavors.size(); ++i) {
    if (flavors[i].meta.name == name) return static_cast<int32_t>(i);
  }
  return std::nullopt;
}

int32_t FlavorCatalog::Intern(const std::string& name) {
  if (auto i = Find(name)) return *i;
  model::ResourceFlavor rf;
  rf.meta.name = name;
  flavors.push_back(rf);
  defined.push_back(false);
  return static_cast<int32_t>(flavors.size() - 1);
}

bool NamespaceMatches(const std::optional<model::LabelSelector>& selector, const std::string& ns,
                      const model::StringMap* labels) {
  if (!selector) return false;
  const std::string kKey = "kubernetes.io/metadata.name";
  // The label a value of `key` has, if any.
  auto label = [&](const std::string& key) -> const std::string* {
    if (labels == nullptr) return key == kKey ? &ns : nullptr;
    auto it = labels->find(key);
    return it == labels->end() ? nullptr : &it->second;
  };
  for (const auto& [k, v] : selector->match_labels) {
    const std::string* have = label(k);
    if (have == nullptr || *have != v) return false;
  }
  for (const auto& req : selector->match_expressions) {
    const std::string* value = label(req.key);
    bool has = value != nullptr;
    bool in = has && std::find(req.values.begin(), req.values.end(), *value) != req.values.end();
    if (req.op == "In" && !in) return false;
    if (req.op == "NotIn" && in) return false;
    if (req.op == "Exists" && !has) return false;
    if (req.op == "DoesNotExist" && has) return false;
  }
  return true;
}

}  // namespace muster::admission
