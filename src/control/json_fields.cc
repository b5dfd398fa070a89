#include "control/json_fields.h"

#include <algorithm>

namespace muster::control {

const nlohmann::json& ObjectField(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  if (!object.is_object()) return kEmpty;
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

const nlohmann::json& ArrayField(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  if (!object.is_object()) return kEmpty;
  auto it = object.find(key);
  return it != object.end() && it->is_array() ? *it : kEmpty;
}

int64_t IntField(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return 0;
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

int64_t GenerationOf(const nlohmann::json& object) {
  return IntField(ObjectField(object, "metadata"), "generation");
}

std::string StringField(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

bool BeingDeleted(const nlohmann::json& object) {
  const nlohmann::json& meta = ObjectField(object, "metadata");
  auto it = meta.find("deletionTimestamp");
  return it != meta.end() && !it->is_null();
}

bool HasFinalizer(const nlohmann::json& object, std::string_view finalizer) {
  const nlohmann::json& meta = ObjectField(object, "metadata");
  auto list = meta.find("finalizers");
  if (list == meta.end() || !list->is_array()) return false;
  return std::any_of(list->begin(), list->end(), [&](const nlohmann::json& f) {
    return f.is_string() && f.get_ref<const std::string&>() == finalizer;
  });
}

bool DeletingDependents(const nlohmann::json& object) {
  return BeingDeleted(object) && HasFinalizer(object, kForegroundFinalizer);
}

bool AddFinalizer(nlohmann::json& object, const std::string& finalizer) {
  if (!object.is_object()) return false;
  nlohmann::json& meta = object["metadata"];
  if (meta.is_null()) meta = nlohmann::json::object();
  if (!meta.is_object()) return false;
  nlohmann::json& list = meta["finalizers"];
  if (list.is_null()) list = nlohmann::json::array();
  if (!list.is_array() || HasFinalizer(object, finalizer)) return false;
  list.push_back(finalizer);
  return true;
}

bool RemoveFinalizer(nlohmann::json& object, const std::string& finalizer) {
  if (!object.is_object()) return false;
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return false;
  auto list = meta->find("finalizers");
  if (list == meta->end() || !list->is_array()) return false;
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& f : *list) {
    if (!(f.is_string() && f == finalizer)) kept.push_back(f);
  }
  if (kept.size() == list->size()) return false;
  if (kept.empty()) {
    meta->erase("finalizers");
  } else {
    *list = std::move(kept);
  }
  return true;
}

bool RemoveOwnerReference(nlohmann::json& object, const std::string& owner_uid) {
  if (!object.is_object()) return false;
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return false;
  auto refs = meta->find("ownerReferences");
  if (refs == meta->end() || !refs->is_array()) return false;
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& ref : *refs) {
    if (!(ref.is_object() && ref.value("uid", nlohmann::json()) == owner_uid)) kept.push_back(ref);
  }
  if (kept.size() == refs->size()) return false;
  if (kept.empty()) {
    meta->erase("ownerReferences");
  } else {
    *refs = std::move(kept);
  }
  return true;
}

}  // namespace muster::control
