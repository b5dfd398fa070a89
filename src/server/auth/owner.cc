#include "server/auth/owner.h"

namespace muster::server::auth {
namespace {

using nlohmann::json;

// metadata.annotations of `object`, created when absent or null; nullptr when the
// metadata or the annotations are something else (validation answers that 422).
json* Annotations(json& object) {
  auto md = object.find("metadata");
  if (md == object.end() || !md->is_object()) return nullptr;
  json& a = (*md)["annotations"];
  if (a.is_null()) a = json::object();
  return a.is_object() ? &a : nullptr;
}

}  // namespace

const std::string& OwnerName(const UserInfo& user) {
  return user.name.empty() ? ServerUser().name : user.name;
}

void RecordOwner(json& object, const UserInfo& user) { RecordOwner(object, OwnerName(user)); }

void RecordOwner(json& object, const std::string& owner) {
  if (!object.is_object()) return;
  if (json* a = Annotations(object)) (*a)[kOwnerAnnotation] = owner;
}

void KeepOwner(const json& current, json& next) {
  if (!next.is_object()) return;
  const json* owner = nullptr;
  if (auto md = current.find("metadata"); md != current.end() && md->is_object()) {
    if (auto a = md->find("annotations"); a != md->end() && a->is_object()) {
      if (auto o = a->find(kOwnerAnnotation); o != a->end()) owner = &*o;
    }
  }
  if (owner == nullptr) {
    auto md = next.find("metadata");
    if (md == next.end() || !md->is_object()) return;
    if (auto a = md->find("annotations"); a != md->end() && a->is_object()) {
      a->erase(kOwnerAnnotation);
    }
    return;
  }
  if (json* a = Annotations(next)) (*a)[kOwnerAnnotation] = *owner;
}

}  // namespace muster::server::auth
