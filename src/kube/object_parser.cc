#include "kube/object_parser.h"

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace muster::kube {
namespace {

using json = nlohmann::json;

// Where a value sits, for the managedFields rule: the top-level value (an object, a
// list or a watch event), an API object, an API object's metadata, or elsewhere.
enum class Role : uint8_t { kTop, kApiObject, kMetadata, kItems, kOther };

// The rule, for both walks below: what an object's field is, and whether it goes.
bool Dropped(Role object, std::string_view key) {
  return object == Role::kMetadata && key == "managedFields";
}
Role FieldRole(Role object, std::string_view key) {
  if ((object == Role::kTop || object == Role::kApiObject) && key == "metadata") {
    return Role::kMetadata;
  }
  if (object == Role::kTop && key == "object") return Role::kApiObject;
  if (object == Role::kTop && key == "items") return Role::kItems;
  return Role::kOther;
}
Role ItemRole(Role array) { return array == Role::kItems ? Role::kApiObject : Role::kOther; }

// simdjson's DOM as nlohmann's, with the values json::parse gives: non-negative
// integers unsigned (as nlohmann's lexer makes them), the last of duplicate keys
// kept; managedFields never built. Recursion is bounded by simdjson's depth limit.
json ToJson(simdjson::dom::element e, Role role) {
  using simdjson::dom::element_type;
  switch (e.type()) {
    case element_type::OBJECT: {
      json out = json::object();
      auto& fields = out.get_ref<json::object_t&>();
      for (simdjson::dom::key_value_pair field : simdjson::dom::object(e)) {
        const std::string_view key = field.key;
        if (Dropped(role, key)) continue;
        fields.insert_or_assign(std::string(key), ToJson(field.value, FieldRole(role, key)));
      }
      return out;
    }
    case element_type::ARRAY: {
      json out = json::array();
      auto& items = out.get_ref<json::array_t&>();
      const simdjson::dom::array array(e);
      items.reserve(array.size());
      for (simdjson::dom::element item : array) items.push_back(ToJson(item, ItemRole(role)));
      return out;
    }
    case element_type::STRING:
      return json(std::string(std::string_view(e)));
    case element_type::INT64: {
      const auto v = int64_t(e);
      return v >= 0 ? json(static_cast<uint64_t>(v)) : json(v);
    }
    case element_type::UINT64:
      return json(uint64_t(e));
    case element_type::DOUBLE:
      return json(double(e));
    case element_type::BOOL:
      return json(bool(e));
    case element_type::NULL_VALUE:
      return json(nullptr);
  }
  return json(nullptr);
}

// The same rule over a value json::parse built (only what simdjson refuses gets
// here); only the few levels that can hold an API object are walked.
void DropManagedFields(json& value, Role role) {
  if (role == Role::kOther) return;
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end();) {
      if (Dropped(role, it.key())) {
        it = value.erase(it);
      } else {
        DropManagedFields(it.value(), FieldRole(role, it.key()));
        ++it;
      }
    }
  } else if (value.is_array()) {
    for (json& item : value) DropManagedFields(item, ItemRole(role));
  }
}

// Watch events and single objects (a few KB) use the thread's parser; a larger text
// (a list page) one of its own, so no thread's parser keeps the size of a list.
constexpr size_t kMaxReusedParser = size_t{64} * 1024;

}  // namespace

json ParseApiObject(std::string_view text) {
  // Lexing was most of the cost of every watch event with nlohmann's parser;
  // simdjson lexes about three times faster.
  thread_local simdjson::dom::parser reused;  // reflectors and writers parse at once
  simdjson::dom::parser own;                  // allocates nothing unless it parses
  simdjson::dom::parser& parser = text.size() <= kMaxReusedParser ? reused : own;
  simdjson::dom::element root;
  if (parser.parse(text.data(), text.size()).get(root) == simdjson::SUCCESS) {
    return ToJson(root, Role::kTop);
  }
  // Not JSON, or JSON simdjson refuses (an integer beyond 64 bits, nesting beyond its
  // limit): nlohmann's parser decides.
  json value = json::parse(text.begin(), text.end(), nullptr, false);
  if (!value.is_discarded()) DropManagedFields(value, Role::kTop);
  return value;
}

}  // namespace muster::kube
