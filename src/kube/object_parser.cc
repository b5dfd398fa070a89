#include "kube/object_parser.h"

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace muster::kube {
namespace {

using json = nlohmann::json;

// Builds the DOM as nlohmann's own SAX DOM parser does, skipping the value of the
// managedFields keys ParseApiObject names.
class WithoutManagedFields {
 public:
  json root;

  bool null() { return Value(nullptr); }
  bool boolean(bool v) { return Value(v); }
  bool number_integer(json::number_integer_t v) { return Value(v); }
  bool number_unsigned(json::number_unsigned_t v) { return Value(v); }
  bool number_float(json::number_float_t v, const json::string_t& /*text*/) { return Value(v); }
  bool string(json::string_t& v) { return Value(std::move(v)); }
  bool binary(json::binary_t& v) { return Value(json::binary(std::move(v))); }

  bool start_object(std::size_t /*elements*/) { return Start(json::object(), false); }
  bool start_array(std::size_t /*elements*/) { return Start(json::array(), true); }
  bool end_object() { return End(); }
  bool end_array() { return End(); }

  bool key(json::string_t& k) {
    if (skipping_ > 0) return true;
    Frame& top = stack_.back();
    if (top.metadata && k == "managedFields") {
      skip_next_ = true;
      return true;
    }
    // Only where a container may start an API object, its metadata or a list's items.
    top.key = Key::kOther;
    if (top.object_root || stack_.size() == 1) {
      if (k == "metadata") top.key = Key::kMetadata;
      if (k == "object") top.key = Key::kObject;
      if (k == "items") top.key = Key::kItems;
    }
    next_ = &(*top.value)[std::move(k)];
    return true;
  }

  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const json::exception& /*error*/) {
    return false;
  }

 private:
  enum class Key : uint8_t { kOther, kMetadata, kObject, kItems };
  struct Frame {
    json* value = nullptr;
    bool array = false;
    bool object_root = false;  // an API object: its "metadata" is checked
    bool metadata = false;     // an API object's metadata: its managedFields go
    bool items = false;        // the top-level "items" array: its elements are objects
    Key key = Key::kOther;     // the key being filled (objects)
  };

  // Where the next value goes; nullptr while it is skipped.
  json* Place(json&& v) {
    if (skip_next_) {
      skip_next_ = false;
      return nullptr;
    }
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    Frame& top = stack_.back();
    if (top.array) {
      top.value->push_back(std::move(v));
      return &top.value->back();
    }
    *next_ = std::move(v);
    return next_;
  }

  template <typename T>
  bool Value(T&& v) {
    if (skipping_ > 0) return true;
    Place(json(std::forward<T>(v)));
    return true;
  }

  bool Start(json&& container, bool array) {
    if (skipping_ > 0 || skip_next_) {
      skip_next_ = false;
      ++skipping_;
      return true;
    }
    Frame frame;
    frame.array = array;
    if (stack_.empty()) {
      frame.object_root = !array;
    } else {
      const Frame& parent = stack_.back();
      const bool top_level = stack_.size() == 1;
      if (parent.array) {
        frame.object_root = !array && parent.items;
      } else {
        frame.object_root = !array && top_level && parent.key == Key::kObject;
        frame.metadata = !array && parent.object_root && parent.key == Key::kMetadata;
        frame.items = array && top_level && parent.key == Key::kItems;
      }
    }
    frame.value = Place(std::move(container));
    stack_.push_back(frame);
    return true;
  }

  bool End() {
    if (skipping_ > 0) {
      --skipping_;
      return true;
    }
    stack_.pop_back();
    return true;
  }

  std::vector<Frame> stack_;
  json* next_ = nullptr;
  bool skip_next_ = false;  // the next value is a managedFields to leave out
  int skipping_ = 0;        // depth inside a container being left out
};

// Where a value sits, for the managedFields rule: the top-level value (an object, a
// list or a watch event), an API object, an API object's metadata, or elsewhere.
enum class Role : uint8_t { kTop, kApiObject, kMetadata, kItems, kOther };

// simdjson's DOM as nlohmann's, with the values WithoutManagedFields would give:
// non-negative integers unsigned (as nlohmann's lexer makes them), the last of
// duplicate keys kept. Recursion is bounded by simdjson's depth limit.
json ToJson(simdjson::dom::element e, Role role) {
  using simdjson::dom::element_type;
  switch (e.type()) {
    case element_type::OBJECT: {
      json out = json::object();
      auto& fields = out.get_ref<json::object_t&>();
      for (simdjson::dom::key_value_pair field : simdjson::dom::object(e)) {
        const std::string_view key = field.key;
        Role child = Role::kOther;
        if (role == Role::kMetadata && key == "managedFields") continue;
        if ((role == Role::kTop || role == Role::kApiObject) && key == "metadata") {
          child = Role::kMetadata;
        } else if (role == Role::kTop && key == "object") {
          child = Role::kApiObject;
        } else if (role == Role::kTop && key == "items") {
          child = Role::kItems;
        }
        fields.insert_or_assign(std::string(key), ToJson(field.value, child));
      }
      return out;
    }
    case element_type::ARRAY: {
      json out = json::array();
      auto& items = out.get_ref<json::array_t&>();
      const simdjson::dom::array array(e);
      items.reserve(array.size());
      const Role child = role == Role::kItems ? Role::kApiObject : Role::kOther;
      for (simdjson::dom::element item : array) items.push_back(ToJson(item, child));
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

// Watch events and single objects (a few KB) take the fast path; larger texts (list
// pages) the SAX one, so no thread's parser grows to hold a whole list.
constexpr size_t kMaxFastParse = size_t{64} * 1024;

}  // namespace

json ParseApiObject(std::string_view text) {
  if (text.size() <= kMaxFastParse) {
    // Lexing was most of the cost of every watch event with nlohmann's parser; simdjson
    // lexes about three times faster. One parser per thread (reflectors and writers
    // parse at once), reused so its buffers are allocated once.
    thread_local simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (parser.parse(text.data(), text.size()).get(root) == simdjson::SUCCESS) {
      return ToJson(root, Role::kTop);
    }
    // Not JSON, or JSON simdjson refuses (an integer beyond 64 bits, nesting beyond
    // its limit): nlohmann's parser decides, as it does for everything else.
  }
  WithoutManagedFields sax;
  if (!json::sax_parse(text.begin(), text.end(), &sax)) return json(json::value_t::discarded);
  return std::move(sax.root);
}

}  // namespace muster::kube
