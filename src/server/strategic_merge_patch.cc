#include "server/strategic_merge_patch.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace muster::server {
namespace {

using nlohmann::json;

constexpr const char* kPatch = "$patch";
constexpr const char* kRetainKeys = "$retainKeys";
const std::string kSetElementOrder = "$setElementOrder/";
const std::string kDeleteFromPrimitiveList = "$deleteFromPrimitiveList/";

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// The `$patch` directive of a map ("" when none); one that is not a string reads as
// an unknown directive, which the merge refuses.
std::string Directive(const json& map) {
  auto it = map.find(kPatch);
  if (it == map.end()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

const PatchSchema* SchemaOfField(const PatchSchema* schema, const std::string& name,
                                 const PatchField** field) {
  *field = schema == nullptr ? nullptr : schema->Find(name);
  return *field == nullptr ? nullptr : (*field)->schema;
}

Status MergeMap(json& target, const json& patch, const PatchSchema* schema);

// The value a patch puts where nothing was: the patch merged into an empty value of
// its own type, so directives and nulls inside it never reach the object.
Result<json> Fresh(const json& patch, const PatchField* field) {
  if (patch.is_object()) {
    json out = json::object();
    Status s = MergeMap(out, patch, field == nullptr ? nullptr : field->schema);
    if (!s.ok()) return s;
    return out;
  }
  if (patch.is_array() && field != nullptr && field->merge && !field->merge_key.empty()) {
    json out = json::array();
    for (const json& e : patch) {
      if (!e.is_object()) {
        out.push_back(e);
        continue;
      }
      const std::string directive = Directive(e);
      if (directive == "delete" || directive == "replace") continue;
      auto fresh = Fresh(e, field);
      if (!fresh.ok()) return fresh.status();
      out.push_back(std::move(*fresh));
    }
    return out;
  }
  return patch;
}

Status NoMergeKey(const json& element, const std::string& key) {
  return FailedPrecondition("map: " + element.dump() +
                            " does not contain declared merge key: " + key);
}

// A list the schema merges: by `field.merge_key` for objects, as a set for scalars.
Status MergeList(json& target, const json& patch, const PatchField& field) {
  // {"$patch": "replace"} among the elements: the patch's other elements are the list.
  for (const json& e : patch) {
    if (e.is_object() && Directive(e) == "replace") {
      json out = json::array();
      for (const json& p : patch) {
        if (p.is_object() && p.contains(kPatch)) continue;
        auto fresh = Fresh(p, &field);
        if (!fresh.ok()) return fresh.status();
        out.push_back(std::move(*fresh));
      }
      target = std::move(out);
      return Status::Ok();
    }
  }
  if (field.merge_key.empty()) {  // a set of scalars: the union, stored order first
    for (const json& e : patch) {
      if (std::find(target.begin(), target.end(), e) == target.end()) target.push_back(e);
    }
    return Status::Ok();
  }
  const std::string& key = field.merge_key;
  for (const json& e : patch) {
    if (!e.is_object()) {
      return InvalidArgument("the list " + field.merge_key + " merges objects, got " + e.dump());
    }
    const std::string directive = Directive(e);
    if (!e.contains(key)) {
      if (directive == "merge") continue;
      return NoMergeKey(e, key);
    }
    auto same = std::find_if(target.begin(), target.end(), [&](const json& t) {
      return t.is_object() && t.contains(key) && t[key] == e[key];
    });
    if (directive == "delete") {
      target.erase(std::remove_if(target.begin(), target.end(),
                                  [&](const json& t) {
                                    return t.is_object() && t.contains(key) && t[key] == e[key];
                                  }),
                   target.end());
      continue;
    }
    if (!directive.empty() && directive != "merge") {
      return InvalidArgument("unknown patch type: " + directive + " in map: " + e.dump());
    }
    if (same == target.end()) {
      auto fresh = Fresh(e, &field);
      if (!fresh.ok()) return fresh.status();
      target.push_back(std::move(*fresh));
      continue;
    }
    Status s = MergeMap(*same, e, field.schema);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status RetainKeys(json& target, const json& patch) {
  const json& keys = patch[kRetainKeys];
  if (!keys.is_array() ||
      !std::all_of(keys.begin(), keys.end(), [](const json& k) { return k.is_string(); })) {
    return InvalidArgument("invalid patch: the $retainKeys directive must be a list of strings");
  }
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    if (StartsWith(it.key(), "$") || it.value().is_null()) continue;
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) {
      return FailedPrecondition("patch content doesn't match retainKeys list");
    }
  }
  for (auto it = target.begin(); it != target.end();) {
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) {
      it = target.erase(it);
    } else {
      ++it;
    }
  }
  return Status::Ok();
}

Status DeleteFromPrimitiveList(json& target, const std::string& list, const json& values) {
  if (!values.is_array()) {
    return InvalidArgument("invalid patch: $deleteFromPrimitiveList/" + list +
                           " must be a list of values");
  }
  auto it = target.find(list);
  if (it == target.end() || !it->is_array()) return Status::Ok();
  it->erase(std::remove_if(it->begin(), it->end(),
                           [&](const json& v) {
                             return std::find(values.begin(), values.end(), v) != values.end();
                           }),
            it->end());
  return Status::Ok();
}

// The key a `$setElementOrder` entry and a list element are matched by: the merge
// key's value for lists of objects, the scalar itself for sets.
const json* OrderKey(const json& element, const PatchField& field) {
  if (field.merge_key.empty()) return &element;
  if (!element.is_object()) return nullptr;
  auto it = element.find(field.merge_key);
  return it == element.end() ? nullptr : &*it;
}

int IndexOf(const json& list, const json* key, const PatchField& field) {
  if (key == nullptr || !list.is_array()) return -1;
  for (size_t i = 0; i < list.size(); ++i) {
    const json* k = OrderKey(list[i], field);
    if (k != nullptr && *k == *key) return static_cast<int>(i);
  }
  return -1;
}

// Orders a merged list as `$setElementOrder/<list>` asks, as upstream does: the
// elements it names in its order, interleaved with the elements only the server has
// (in their stored order) where both were stored.
Status OrderElements(json& list, const json& order, const json& stored, const PatchField& field) {
  if (!order.is_array()) {
    return InvalidArgument("invalid patch: $setElementOrder must be a list");
  }
  std::vector<std::pair<int, json>> named;
  std::vector<json> server_only;
  for (json& e : list) {
    const int at = IndexOf(order, OrderKey(e, field), field);
    if (at >= 0) {
      named.emplace_back(at, std::move(e));
    } else {
      server_only.push_back(std::move(e));
    }
  }
  std::stable_sort(named.begin(), named.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  json out = json::array();
  size_t i = 0;
  size_t j = 0;
  while (i < named.size() || j < server_only.size()) {
    bool take_named = j >= server_only.size();
    if (i < named.size() && j < server_only.size()) {
      const int ni = IndexOf(stored, OrderKey(named[i].second, field), field);
      const int si = IndexOf(stored, OrderKey(server_only[j], field), field);
      take_named = ni >= 0 && si >= 0 && ni < si;
    }
    if (take_named) {
      out.push_back(std::move(named[i++].second));
    } else {
      out.push_back(std::move(server_only[j++]));
    }
  }
  list = std::move(out);
  return Status::Ok();
}

Status MergeMap(json& target, const json& patch, const PatchSchema* schema) {
  if (!target.is_object()) target = json::object();
  // The stored lists a `$setElementOrder` orders, as they were before the patch.
  std::map<std::string, json> stored_lists;
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    if (!StartsWith(it.key(), kSetElementOrder)) continue;
    const std::string list = it.key().substr(kSetElementOrder.size());
    stored_lists[list] = target.contains(list) ? target[list] : json::array();
  }
  if (patch.contains(kPatch)) {
    const std::string directive = Directive(patch);
    if (directive == "replace") {
      json replaced = patch;
      replaced.erase(kPatch);
      // The replacing map's own lists and directives still follow the schema.
      target = json::object();
      return MergeMap(target, replaced, schema);
    }
    if (directive == "delete") {
      target = json::object();
      return Status::Ok();
    }
    if (directive != "merge") {
      return InvalidArgument("unknown patch type: " + directive + " in map: " + patch.dump());
    }
  }
  if (patch.contains(kRetainKeys)) {
    Status s = RetainKeys(target, patch);
    if (!s.ok()) return s;
  }
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    const std::string& k = it.key();
    if (!StartsWith(k, kDeleteFromPrimitiveList)) continue;
    Status s = DeleteFromPrimitiveList(target, k.substr(kDeleteFromPrimitiveList.size()), *it);
    if (!s.ok()) return s;
  }
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    const std::string& k = it.key();
    const json& v = it.value();
    if (StartsWith(k, "$")) continue;  // the directives handled above and below
    if (v.is_null()) {
      target.erase(k);
      continue;
    }
    const PatchField* field = nullptr;
    const PatchSchema* child = SchemaOfField(schema, k, &field);
    auto current = target.find(k);
    if (v.is_object() && Directive(v) == "delete") {
      target.erase(k);
      continue;
    }
    if (current == target.end() || current->is_null()) {
      auto fresh = Fresh(v, field);
      if (!fresh.ok()) return fresh.status();
      target[k] = std::move(*fresh);
      continue;
    }
    if (v.is_object() && current->is_object()) {
      Status s = MergeMap(*current, v, child);
      if (!s.ok()) return s;
      continue;
    }
    if (v.is_array() && current->is_array() && field != nullptr && field->merge) {
      Status s = MergeList(*current, v, *field);
      if (!s.ok()) return s;
      continue;
    }
    auto fresh = Fresh(v, field);
    if (!fresh.ok()) return fresh.status();
    *current = std::move(*fresh);
  }
  for (const auto& [list, stored] : stored_lists) {
    const PatchField* field = schema == nullptr ? nullptr : schema->Find(list);
    auto merged = target.find(list);
    if (field == nullptr || !field->merge || merged == target.end() || !merged->is_array()) {
      continue;  // only merged lists have an order to keep
    }
    Status s = OrderElements(*merged, patch[kSetElementOrder + list], stored, *field);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

Result<json> ApplyStrategicMergePatch(json target, const json& patch, const PatchSchema* schema) {
  if (!patch.is_object()) return InvalidArgument("the patch must be a JSON object");
  Status s = MergeMap(target, patch, schema);
  if (!s.ok()) return s;
  return target;
}

}  // namespace muster::server
