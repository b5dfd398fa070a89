#include "server/namespace_lifecycle.h"

#include <algorithm>

#include "server/graceful_deletion.h"

namespace muster::server {
namespace {

using nlohmann::json;

// "<plural>.<group>" or "<plural>", as upstream's GroupResource.String().
std::string QualifiedResource(const control::ResourceType& type) {
  return type.group.empty() ? type.plural : type.plural + "." + type.group;
}

ApiError Forbidden(const control::ResourceType& type, const std::string& name,
                   const std::string& why) {
  const std::string what = QualifiedResource(type);
  ApiError e =
      MakeError(403, "Forbidden",
                (name.empty() ? what : what + " \"" + name + "\"") + " is forbidden: " + why);
  e.name = name;
  e.group = type.group;
  e.kind = type.plural;
  return e;
}

const control::ResourceType& NamespaceType() {
  static const control::ResourceType* type = [] {
    for (const auto& t : control::ResourceTypes()) {
      if (IsNamespaceType(t)) return &t;
    }
    return static_cast<const control::ResourceType*>(nullptr);
  }();
  return *type;
}

}  // namespace

bool IsNamespaceType(const control::ResourceType& type) {
  return type.group.empty() && type.kind == "Namespace";
}

bool IsNamespaceObject(const json& object) {
  return object.is_object() && object.value("kind", "") == "Namespace" &&
         object.value("apiVersion", "") == "v1";
}

void LabelNamespaceName(json& ns) {
  json& meta = ns["metadata"];
  if (!meta.is_object()) return;  // validation names it
  const std::string name = meta.value("name", "");
  if (name.empty()) return;
  if (!meta["labels"].is_object()) meta["labels"] = json::object();
  meta["labels"][kNamespaceNameLabel] = name;
}

void DefaultNamespace(json& ns, const json* current) {
  if (!ns.is_object()) return;
  LabelNamespaceName(ns);
  if (current != nullptr) {
    // Only the namespace controller and the finalize subresource change them.
    const json spec = current->value("spec", json::object());
    if (spec.is_object() && spec.contains("finalizers")) {
      if (!ns["spec"].is_object()) ns["spec"] = json::object();
      ns["spec"]["finalizers"] = spec["finalizers"];
    } else if (ns.contains("spec") && ns["spec"].is_object()) {
      ns["spec"].erase("finalizers");
    }
    return;
  }
  ns["status"] = {{"phase", "Active"}};
  if (!ns["spec"].is_object()) ns["spec"] = json::object();
  json& finalizers = ns["spec"]["finalizers"];
  if (!finalizers.is_array()) finalizers = json::array();
  if (std::find(finalizers.begin(), finalizers.end(), kNamespaceFinalizer) == finalizers.end())
    finalizers.push_back(kNamespaceFinalizer);
}

json NewNamespace(const std::string& name) {
  json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
  DefaultNamespace(ns, nullptr);
  return ns;
}

bool HeldBySpecFinalizers(const json& ns) {
  if (!IsNamespaceObject(ns)) return false;
  auto spec = ns.find("spec");
  if (spec == ns.end() || !spec->is_object()) return false;
  auto list = spec->find("finalizers");
  return list != spec->end() && list->is_array() && !list->empty();
}

bool ImmortalNamespace(const std::string& name) {
  return name == "default" || name == "kube-system" || name == "kube-public";
}

std::optional<ApiError> RefuseNamespaceDelete(const std::string& name) {
  if (!ImmortalNamespace(name)) return std::nullopt;
  return Forbidden(NamespaceType(), name, "this namespace may not be deleted");
}

std::optional<ApiError> RefuseCreateInTerminatingNamespace(const control::ObjectReader& store,
                                                           const control::ResourceType& type,
                                                           const std::string& ns,
                                                           const std::string& name) {
  if (!type.namespaced || ns.empty()) return std::nullopt;
  auto stored = store.Get({"namespaces", "", ns});
  if (!stored.ok() || !BeingDeleted(*stored)) return std::nullopt;
  ApiError e = Forbidden(
      type, name,
      "unable to create new content in namespace " + ns + " because it is being terminated");
  e.causes.push_back(
      {"NamespaceTerminating", "namespace " + ns + " is being terminated", "metadata.namespace"});
  return e;
}

}  // namespace muster::server
