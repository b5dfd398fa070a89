#include "server/json_patch.h"

#include <optional>
#include <string>
#include <vector>

namespace muster::server {
namespace {

using nlohmann::json;
using Tokens = std::vector<std::string>;

Status Missing(const std::string& message) {
  return FailedPrecondition(message + ": missing value");
}

std::string InvalidIndex(const std::string& token) {
  return "Unable to access invalid index: " + token + ": invalid index referenced";
}

// An array index token: decimal digits without a leading zero (RFC 6901).
std::optional<size_t> Index(const std::string& token) {
  if (token.empty() || token.size() > 9) return std::nullopt;
  if (token.size() > 1 && token[0] == '0') return std::nullopt;
  size_t value = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<size_t>(c - '0');
  }
  return value;
}

json* Child(json& node, const std::string& token) {
  if (node.is_object()) {
    auto it = node.find(token);
    return it == node.end() ? nullptr : &*it;
  }
  if (node.is_array()) {
    auto i = Index(token);
    if (!i || *i >= node.size()) return nullptr;
    return &node[*i];
  }
  return nullptr;
}

json* Find(json& doc, const Tokens& tokens, size_t depth) {
  json* node = &doc;
  for (size_t i = 0; i < depth && node != nullptr; ++i) node = Child(*node, tokens[i]);
  return node;
}

// The object or array that holds the pointer's last token; nullptr when missing.
json* Parent(json& doc, const Tokens& tokens) {
  json* parent = Find(doc, tokens, tokens.size() - 1);
  if (parent == nullptr || !(parent->is_object() || parent->is_array())) return nullptr;
  return parent;
}

Status Add(json& doc, const Tokens& tokens, json value, const std::string& path) {
  if (tokens.empty()) {
    doc = std::move(value);
    return Status::Ok();
  }
  json* parent = Parent(doc, tokens);
  if (parent == nullptr) {
    return Missing("add operation does not apply: doc is missing path: \"" + path + "\"");
  }
  const std::string& key = tokens.back();
  if (parent->is_object()) {
    (*parent)[key] = std::move(value);
    return Status::Ok();
  }
  if (key == "-") {
    parent->push_back(std::move(value));
    return Status::Ok();
  }
  auto i = Index(key);
  if (!i) {
    return FailedPrecondition("error in add for path: '" + path +
                              "': value was not a proper array index: '" + key + "'");
  }
  if (*i > parent->size()) {
    return FailedPrecondition("error in add for path: '" + path + "': " + InvalidIndex(key));
  }
  parent->insert(parent->begin() + static_cast<std::ptrdiff_t>(*i), std::move(value));
  return Status::Ok();
}

// Removes what `tokens` points at and returns it; `op` names the operation in errors.
Result<json> Remove(json& doc, const Tokens& tokens, const std::string& path,
                    const std::string& op) {
  if (tokens.empty()) return FailedPrecondition(op + " operation cannot remove the whole document");
  json* parent = Parent(doc, tokens);
  if (parent == nullptr) {
    return Missing(op + " operation does not apply: doc is missing path: \"" + path + "\"");
  }
  const std::string& key = tokens.back();
  if (parent->is_object()) {
    auto it = parent->find(key);
    if (it == parent->end()) {
      return Missing("error in " + op + " for path: '" + path +
                     "': Unable to remove nonexistent key: " + key);
    }
    json removed = std::move(*it);
    parent->erase(it);
    return removed;
  }
  auto i = Index(key);
  if (!i || *i >= parent->size()) {
    return FailedPrecondition("error in " + op + " for path: '" + path + "': " + InvalidIndex(key));
  }
  json removed = std::move((*parent)[*i]);
  parent->erase(parent->begin() + static_cast<std::ptrdiff_t>(*i));
  return removed;
}

// The member `name` of operation `op` as a pointer.
Result<Tokens> PointerMember(const json& op, const char* name, const std::string& kind,
                             std::string& text) {
  auto it = op.find(name);
  if (it == op.end() || !it->is_string()) {
    return Missing(kind + " operation failed to decode " + name);
  }
  text = it->get<std::string>();
  auto tokens = ParseJsonPointer(text);
  if (!tokens.ok()) return FailedPrecondition(tokens.status().message());
  return tokens;
}

Status ApplyOperation(json& doc, const json& op) {
  if (!op.is_object()) return InvalidArgument("a JSON patch operation must be an object");
  const std::string kind =
      op.contains("op") && op["op"].is_string() ? op["op"].get<std::string>() : "unknown";
  if (kind != "add" && kind != "remove" && kind != "replace" && kind != "move" && kind != "copy" &&
      kind != "test") {
    return FailedPrecondition("Unexpected kind: " + kind);
  }
  std::string path;
  auto tokens = PointerMember(op, "path", kind, path);
  if (!tokens.ok()) return tokens.status();
  const bool needs_value = kind == "add" || kind == "replace" || kind == "test";
  if (needs_value && !op.contains("value")) {
    return Missing(kind + " operation failed to decode value");
  }
  if (kind == "add") return Add(doc, *tokens, op["value"], path);
  if (kind == "remove") return Remove(doc, *tokens, path, "remove").status();
  if (kind == "replace") {
    json* target = Find(doc, *tokens, tokens->size());
    if (target == nullptr) {
      return Missing("replace operation does not apply: doc is missing key: " + path);
    }
    *target = op["value"];
    return Status::Ok();
  }
  if (kind == "test") {
    json* target = Find(doc, *tokens, tokens->size());
    if (target == nullptr && !tokens->empty() && Parent(doc, *tokens) == nullptr) {
      return Missing("test operation does not apply: is missing path: " + path);
    }
    if (target == nullptr || *target != op["value"]) {
      return FailedPrecondition("testing value " + path + " failed: test failed");
    }
    return Status::Ok();
  }
  std::string from;
  auto from_tokens = PointerMember(op, "from", kind, from);
  if (!from_tokens.ok()) return from_tokens.status();
  json* source = Find(doc, *from_tokens, from_tokens->size());
  if (source == nullptr) {
    return Missing(kind + " operation does not apply: doc is missing from path: " + from);
  }
  if (kind == "copy") return Add(doc, *tokens, *source, path);
  // move: a location cannot move into one of its own children (RFC 6902 4.4).
  if (path.size() > from.size() && path.compare(0, from.size(), from) == 0 &&
      path[from.size()] == '/') {
    return FailedPrecondition("move operation does not apply: " + path + " is a child of " + from);
  }
  if (path == from) return Status::Ok();
  auto moved = Remove(doc, *from_tokens, from, "move");
  if (!moved.ok()) return moved.status();
  return Add(doc, *tokens, std::move(*moved), path);
}

}  // namespace

Result<std::vector<std::string>> ParseJsonPointer(const std::string& pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer[0] != '/') {
    return InvalidArgument("JSON pointer \"" + pointer + "\" does not start with '/'");
  }
  std::string token;
  for (size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(std::move(token));
      token.clear();
      continue;
    }
    if (pointer[i] != '~') {
      token += pointer[i];
      continue;
    }
    if (i + 1 < pointer.size() && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
      token += pointer[i + 1] == '0' ? '~' : '/';
      ++i;
      continue;
    }
    return InvalidArgument("JSON pointer \"" + pointer + "\" has '~' not followed by 0 or 1");
  }
  return tokens;
}

Result<json> ApplyJsonPatch(json document, const json& patch) {
  if (!patch.is_array()) {
    return InvalidArgument("json: cannot unmarshal " + std::string(patch.type_name()) +
                           " into Go value of type jsonpatch.Patch");
  }
  for (const json& op : patch) {
    Status applied = ApplyOperation(document, op);
    if (!applied.ok()) return applied;
  }
  return document;
}

}  // namespace muster::server
