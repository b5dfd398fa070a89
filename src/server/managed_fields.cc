#include "server/managed_fields.h"

#include <algorithm>

namespace muster::server {
namespace {

using nlohmann::json;

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

void AddFields(json& set, const json& object, const PatchSchema* schema);

// The key of a keyed list's element: k:{"<merge key>":<value>}.
std::string ElementKey(const std::string& merge_key, const json& element) {
  json key = json::object();
  key[merge_key] = element.contains(merge_key) ? element[merge_key] : json();
  return "k:" + key.dump();
}

void AddValue(json& node, const json& value, const PatchField* field) {
  if (value.is_object() && !value.empty()) {
    AddFields(node, value, field == nullptr ? nullptr : field->schema);
    return;
  }
  if (value.is_array() && field != nullptr && field->merge) {
    for (const json& e : value) {
      if (field->merge_key.empty() || !e.is_object()) {
        node["v:" + e.dump()] = json::object();
        continue;
      }
      json& item = node[ElementKey(field->merge_key, e)];
      item["."] = json::object();
      AddFields(item, e, field->schema);
    }
    if (!node.is_null()) return;
  }
  if (node.is_null()) node = json::object();
}

void AddFields(json& set, const json& object, const PatchSchema* schema) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    const PatchField* field = schema == nullptr ? nullptr : schema->Find(it.key());
    json& node = set["f:" + it.key()];
    AddValue(node, it.value(), field);
  }
}

// The child of `value` a path key names; nullptr when absent.
const json* Step(const json& value, const std::string& key) {
  if (StartsWith(key, "f:")) {
    if (!value.is_object()) return nullptr;
    auto it = value.find(key.substr(2));
    return it == value.end() ? nullptr : &*it;
  }
  if (!value.is_array()) return nullptr;
  if (StartsWith(key, "k:")) {
    const json match = json::parse(key.substr(2), nullptr, false);
    if (!match.is_object()) return nullptr;
    for (const json& e : value) {
      if (!e.is_object()) continue;
      bool same = true;
      for (auto m = match.begin(); m != match.end() && same; ++m) {
        // An element without its merge key is keyed by null (validation refuses it).
        same = e.contains(m.key()) ? e[m.key()] == m.value() : m.value().is_null();
      }
      if (same) return &e;
    }
    return nullptr;
  }
  if (StartsWith(key, "v:")) {
    const json match = json::parse(key.substr(2), nullptr, false);
    for (const json& e : value) {
      if (e == match) return &e;
    }
  }
  return nullptr;
}

void CollectLeaves(const json& node, FieldPath& prefix, std::vector<FieldPath>& out) {
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it.key() == ".") {
      out.push_back(prefix);
      continue;
    }
    prefix.push_back(it.key());
    if (!it.value().is_object() || it.value().empty()) {
      out.push_back(prefix);
    } else {
      CollectLeaves(it.value(), prefix, out);
    }
    prefix.pop_back();
  }
}

const json* Node(const json& set, const FieldPath& path) {
  const json* node = &set;
  for (const std::string& key : path) {
    if (!node->is_object()) return nullptr;
    auto it = node->find(key);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node;
}

}  // namespace

json FieldSetOf(const json& config, const PatchSchema* schema, bool has_status) {
  json set = json::object();
  if (!config.is_object()) return set;
  json owned = config;
  owned.erase("apiVersion");
  owned.erase("kind");
  if (has_status) owned.erase("status");
  if (owned.contains("metadata") && owned["metadata"].is_object()) {
    json& md = owned["metadata"];
    for (const char* f : {"name", "namespace", "uid", "resourceVersion", "generation",
                          "creationTimestamp", "deletionTimestamp", "managedFields", "selfLink"}) {
      md.erase(f);
    }
    if (md.empty()) owned.erase("metadata");
  }
  AddFields(set, owned, schema);
  return set;
}

std::vector<FieldPath> Leaves(const json& set) {
  std::vector<FieldPath> out;
  FieldPath prefix;
  if (set.is_object()) CollectLeaves(set, prefix, out);
  return out;
}

bool Owns(const json& set, const FieldPath& path) {
  const json* node = Node(set, path);
  if (node == nullptr) return false;
  return !node->is_object() || node->empty() || node->contains(".");
}

bool OwnsAtOrUnder(const json& set, const FieldPath& path) { return Node(set, path) != nullptr; }

void Disown(json& set, const FieldPath& path) {
  if (path.empty() || !set.is_object()) return;
  auto it = set.find(path[0]);
  if (it == set.end()) return;
  if (path.size() == 1) {
    if (it->is_object() && it->contains(".") && it->size() > 1) {
      it->erase(".");  // the element stays owned through its fields
    } else {
      set.erase(it);
    }
    return;
  }
  Disown(*it, FieldPath(path.begin() + 1, path.end()));
  if (it->is_object() && it->empty()) set.erase(it);
}

const json* ValueAt(const json& object, const FieldPath& path) {
  const json* value = &object;
  for (const std::string& key : path) {
    value = Step(*value, key);
    if (value == nullptr) return nullptr;
  }
  return value;
}

void RemoveAt(json& object, const FieldPath& path) {
  if (path.empty()) return;
  const json* parent_value = ValueAt(object, FieldPath(path.begin(), path.end() - 1));
  if (parent_value == nullptr) return;
  json& parent = const_cast<json&>(*parent_value);
  const std::string& key = path.back();
  if (StartsWith(key, "f:")) {
    if (parent.is_object()) parent.erase(key.substr(2));
    return;
  }
  const json* element = Step(parent, key);
  if (element == nullptr) return;
  for (auto it = parent.begin(); it != parent.end(); ++it) {
    if (&*it == element) {
      parent.erase(it);
      return;
    }
  }
}

std::string PathString(const FieldPath& path) {
  std::string out;
  for (const std::string& key : path) {
    if (StartsWith(key, "f:")) {
      out += "." + key.substr(2);
    } else if (StartsWith(key, "k:")) {
      const json match = json::parse(key.substr(2), nullptr, false);
      out += "[";
      bool first = true;
      for (auto m = match.begin(); match.is_object() && m != match.end(); ++m) {
        if (!first) out += ",";
        first = false;
        out += m.key() + "=" + m.value().dump();
      }
      out += "]";
    } else if (StartsWith(key, "v:")) {
      out += "[=" + key.substr(2) + "]";
    } else {
      out += "[" + key + "]";
    }
  }
  return out;
}

void Own(json& set, const FieldPath& path) {
  json* node = &set;
  for (const std::string& key : path) {
    if (!node->is_object()) *node = json::object();
    node = &(*node)[key];
  }
  if (!node->is_object()) *node = json::object();
  if (!path.empty() && StartsWith(path.back(), "k:")) (*node)["."] = json::object();
}

json ManagedEntries(const json& object) {
  json out = json::array();
  const json* stored = ValueAt(object, {"f:metadata", "f:managedFields"});
  if (stored == nullptr || !stored->is_array()) return out;
  for (const json& e : *stored) {
    bool ok = e.is_object() && e.contains("fieldsV1") && e["fieldsV1"].is_object();
    for (const char* f : {"manager", "operation", "apiVersion", "subresource", "time"}) {
      ok = ok && (!e.contains(f) || e[f].is_string());
    }
    if (ok) out.push_back(e);
  }
  return out;
}

void RecordUpdate(const json* current, json& next, const UpdateManager& m) {
  if (!next.is_object() || m.manager.empty()) return;
  json entries = ManagedEntries(next);
  const json next_set = FieldSetOf(next, m.schema, m.has_status);
  std::vector<FieldPath> changed;
  for (const FieldPath& path : Leaves(next_set)) {
    const json* before = current == nullptr ? nullptr : ValueAt(*current, path);
    const json* after = ValueAt(next, path);
    const bool element = StartsWith(path.back(), "k:");
    if (after == nullptr) continue;
    if (before == nullptr || (!element && *before != *after)) {
      changed.push_back(path);
    }
  }
  json mine = json::object();
  json kept = json::array();
  for (json& e : entries) {
    const bool is_mine =
        e.value("manager", "") == m.manager && e.value("operation", "") == "Update" &&
        e.value("apiVersion", "") == m.api_version && e.value("subresource", "").empty();
    if (is_mine) {
      mine = e["fieldsV1"];
      continue;
    }
    for (const FieldPath& path : changed) Disown(e["fieldsV1"], path);
    for (const FieldPath& path : Leaves(e["fieldsV1"])) {
      if (ValueAt(next, path) == nullptr) Disown(e["fieldsV1"], path);
    }
    if (!e["fieldsV1"].empty()) kept.push_back(std::move(e));
  }
  for (const FieldPath& path : Leaves(mine)) {
    if (ValueAt(next, path) == nullptr) Disown(mine, path);
  }
  for (const FieldPath& path : changed) Own(mine, path);
  if (!mine.empty()) {
    kept.push_back({{"manager", m.manager},
                    {"operation", "Update"},
                    {"apiVersion", m.api_version},
                    {"time", m.time},
                    {"fieldsType", "FieldsV1"},
                    {"fieldsV1", std::move(mine)}});
  }
  json& md = next["metadata"];
  if (!md.is_object()) return;
  if (kept.empty()) {
    md.erase("managedFields");
  } else {
    md["managedFields"] = std::move(kept);
  }
}

void KeepManagedFields(const json& current, json& next) {
  if (!next.is_object() || !current.is_object()) return;
  const json* stored = ValueAt(current, {"f:metadata", "f:managedFields"});
  if (stored == nullptr) return;
  json& md = next["metadata"];
  if (md.is_object() && !md.contains("managedFields")) md["managedFields"] = *stored;
}

}  // namespace muster::server
