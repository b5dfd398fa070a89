// Field sets in the FieldsV1 format of metadata.managedFields: a tree whose keys
// are "f:<field>" (a member of a map), "k:<json>" (the element of a keyed list with
// that merge key), "v:<json>" (a scalar in a set) and "." (the list element itself),
// with {} at each owned leaf. Server-side apply (server_side_apply.h) records what
// each manager applied as one and reads values and removes fields by its paths.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/patch_schema.h"

namespace muster::server {

// One owned field: the keys from the root to it ({"f:spec", "f:containers",
// "k:{\"name\":\"a\"}", "f:image"}); a list element itself ends in its "k:" key.
using FieldPath = std::vector<std::string>;

// The fields a configuration sets (`config`: an applied object of the kind `schema`
// describes; nullptr: every list atomic). apiVersion, kind, the server-set metadata
// (name, namespace, uid, resourceVersion...) and, for kinds with a status
// subresource, status are nobody's.
nlohmann::json FieldSetOf(const nlohmann::json& config, const PatchSchema* schema, bool has_status);

// Every owned path of `set`, in its order.
std::vector<FieldPath> Leaves(const nlohmann::json& set);
// Whether `set` owns `path` itself.
bool Owns(const nlohmann::json& set, const FieldPath& path);
// Whether `set` owns `path` or anything under it.
bool OwnsAtOrUnder(const nlohmann::json& set, const FieldPath& path);
// Drops `path` from `set`, and the maps it leaves empty.
void Disown(nlohmann::json& set, const FieldPath& path);

// The value at `path` in `object`; nullptr when absent.
const nlohmann::json* ValueAt(const nlohmann::json& object, const FieldPath& path);
// Removes the value at `path` from `object` (a list element from its list); nothing
// when absent.
void RemoveAt(nlohmann::json& object, const FieldPath& path);

// As upstream prints a path in a conflict: .spec.containers[name="a"].image.
std::string PathString(const FieldPath& path);

// Adds `path` to `set` (a list element itself as its "." member).
void Own(nlohmann::json& set, const FieldPath& path);

// The entries of `object`'s metadata.managedFields this code can read: anything else
// (a client may write managedFields itself) is dropped, as kube-apiserver drops
// managedFields it cannot decode.
nlohmann::json ManagedEntries(const nlohmann::json& object);

// A write other than an apply (create, update, a patch) by a named manager
// (?fieldManager=): recorded as kube-apiserver records operation Update.
struct UpdateManager {
  std::string manager;
  std::string api_version;
  std::string time;  // RFC 3339
  const PatchSchema* schema = nullptr;
  bool has_status = false;
};

// Records the write of `next` over `current` (nullptr for a create) in
// next's managedFields: the fields whose value it set or changed become the
// manager's Update entry's, taken from every other manager; fields it removed leave
// every manager's set; entries left empty go.
void RecordUpdate(const nlohmann::json* current, nlohmann::json& next, const UpdateManager& m);

// A PUT that leaves metadata.managedFields out keeps the stored ones (as
// kube-apiserver does); an empty list clears them.
void KeepManagedFields(const nlohmann::json& current, nlohmann::json& next);

}  // namespace muster::server
