#include "api/yaml_value.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/duration.h"

namespace muster::api::internal {

std::string Quote(std::string_view s) {
  // Long values are shortened so one bad field cannot flood the output.
  constexpr size_t kMax = 64;
  std::string out = "\"";
  for (char c : s.substr(0, kMax)) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  if (s.size() > kMax) out += "...";
  return out + "\"";
}

void DocContext::Report(int line, const std::string& field, std::string message, bool warning) {
  std::string key = std::to_string(line) + "\x1f" + field + "\x1f" + message;
  if (!seen_.insert(key).second) return;
  Diagnostic d;
  d.file = file_;
  d.line = line;
  d.kind = kind_;
  d.namespace_ = namespace_;
  d.name = name_;
  d.field = field;
  d.message = std::move(message);
  d.warning = warning;
  if (!warning) ++errors_;
  out_->push_back(std::move(d));
}

void DocContext::AddRef(int line, const std::string& field, std::string target_kind,
                        std::string target_ns, std::string target_name) {
  ObjectRef r;
  r.at.file = file_;
  r.at.line = line;
  r.at.kind = kind_;
  r.at.namespace_ = namespace_;
  r.at.name = name_;
  r.at.field = field;
  r.target_kind = std::move(target_kind);
  r.target_namespace = std::move(target_ns);
  r.target_name = std::move(target_name);
  refs_.push_back(std::move(r));
}

YamlValue::YamlValue(const YAML::Node& node, std::string path, int fallback_line, DocContext* ctx)
    : node_(node), path_(std::move(path)), line_(fallback_line), ctx_(ctx) {
  if (node_.IsDefined()) {
    int l = node_.Mark().line;
    if (l >= 0) line_ = l + 1 + ctx_->line_offset();  // yaml-cpp marks are 0-based
  }
}

YamlValue::YamlValue(const nlohmann::json* json, std::string path, int fallback_line,
                     DocContext* ctx)
    : json_(json), path_(std::move(path)), line_(fallback_line), ctx_(ctx) {}

bool YamlValue::IsSet() const {
  if (json_ != nullptr) return !json_->is_null() && !json_->is_discarded();
  return node_.IsDefined() && !node_.IsNull();
}

bool YamlValue::IsMap() const {
  if (!IsSet()) return false;
  return json_ != nullptr ? json_->is_object() : node_.IsMap();
}

bool YamlValue::IsList() const {
  if (!IsSet()) return false;
  return json_ != nullptr ? json_->is_array() : node_.IsSequence();
}

std::string YamlValue::TypeName() const {
  if (!IsSet()) return "null";
  if (IsMap()) return "a map";
  if (IsList()) return "a list";
  return "a scalar";
}

void YamlValue::Known(std::initializer_list<std::string_view> keys) const {
  for (std::string_view key : keys) (void)Get(key);
}

void YamlValue::Error(std::string message) const {
  ctx_->Report(line_, path_, std::move(message), false);
}
void YamlValue::Warn(std::string message) const {
  ctx_->Report(line_, path_, std::move(message), true);
}

void YamlValue::Ref(std::string target_kind, std::string target_ns, std::string target_name) const {
  ctx_->AddRef(line_, path_, std::move(target_kind), std::move(target_ns), std::move(target_name));
}

YamlValue YamlValue::Get(std::string_view key) const {
  std::string path = path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  if (ctx_->track_reads()) ctx_->NoteRead(path);
  if (!IsSet()) return YamlValue(YAML::Node(), std::move(path), line_, ctx_);
  if (!IsMap()) {
    Error("must be a map, got " + TypeName());
    return YamlValue(YAML::Node(), std::move(path), line_, ctx_);
  }
  if (json_ != nullptr) {
    auto it = json_->find(key);
    if (it == json_->end()) return YamlValue(YAML::Node(), std::move(path), line_, ctx_);
    return YamlValue(&*it, std::move(path), line_, ctx_);
  }
  // Look the key up by iterating: operator[] on a const node would still convert
  // keys through yaml-cpp's conversion machinery, and duplicate keys keep the first.
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) {
      return YamlValue(it->second, std::move(path), line_, ctx_);
    }
  }
  return YamlValue(YAML::Node(), std::move(path), line_, ctx_);
}

std::vector<YamlValue> YamlValue::Items() const {
  std::vector<YamlValue> out;
  if (!IsSet()) return out;
  if (!IsList()) {
    Error("must be a list, got " + TypeName());
    return out;
  }
  if (json_ != nullptr) {
    out.reserve(json_->size());
    size_t i = 0;
    for (const auto& item : *json_) {
      out.emplace_back(&item, path_ + "[" + std::to_string(i++) + "]", line_, ctx_);
    }
    return out;
  }
  out.reserve(node_.size());
  size_t i = 0;
  for (auto it = node_.begin(); it != node_.end(); ++it, ++i) {
    out.emplace_back(*it, path_ + "[" + std::to_string(i) + "]", line_, ctx_);
  }
  return out;
}

std::vector<std::pair<std::string, YamlValue>> YamlValue::Entries() const {
  std::vector<std::pair<std::string, YamlValue>> out;
  if (!IsSet()) return out;
  if (ctx_->track_reads()) ctx_->NoteFreeForm(path_);
  if (!IsMap()) {
    Error("must be a map, got " + TypeName());
    return out;
  }
  if (json_ != nullptr) {
    for (const auto& [key, item] : json_->items()) {
      out.emplace_back(key, YamlValue(&item, path_ + "[" + key + "]", line_, ctx_));
    }
    return out;
  }
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (!it->first.IsScalar()) {
      YamlValue(it->first, path_, line_, ctx_).Error("map keys must be strings");
      continue;
    }
    const std::string& key = it->first.Scalar();
    out.emplace_back(key, YamlValue(it->second, path_ + "[" + key + "]", line_, ctx_));
  }
  return out;
}

std::optional<std::string> YamlValue::ScalarText() const {
  if (!IsSet()) return std::nullopt;
  if (IsMap() || IsList()) {
    Error("must be a scalar value, got " + TypeName());
    return std::nullopt;
  }
  if (json_ != nullptr) {
    if (json_->is_string()) return json_->get_ref<const std::string&>();
    return json_->dump();  // a number or a boolean: its JSON text is its YAML scalar
  }
  return node_.Scalar();
}

std::optional<std::string> YamlValue::String() const { return ScalarText(); }

std::optional<int64_t> YamlValue::Int(int64_t min, int64_t max) const {
  auto text = ScalarText();
  if (!text) return std::nullopt;
  std::string_view s = *text;
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) {
    Error(Quote(*text) + " is not an integer");
    return std::nullopt;
  }
  if (v < min || v > max) {
    Error(std::to_string(v) + " is out of range (" + std::to_string(min) + " to " +
          std::to_string(max) + ")");
    return std::nullopt;
  }
  return v;
}

std::optional<int32_t> YamlValue::Int32(int32_t min) const {
  auto v = Int(min, std::numeric_limits<int32_t>::max());
  if (!v) return std::nullopt;
  return static_cast<int32_t>(*v);
}

std::optional<bool> YamlValue::Bool() const {
  auto text = ScalarText();
  if (!text) return std::nullopt;
  // YAML 1.2 core schema, as Kubernetes' YAML decoder reads booleans.
  if (*text == "true" || *text == "True" || *text == "TRUE") return true;
  if (*text == "false" || *text == "False" || *text == "FALSE") return false;
  Error(Quote(*text) + " is not a boolean (true or false)");
  return std::nullopt;
}

std::optional<double> YamlValue::Number() const {
  auto text = ScalarText();
  if (!text) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || text->empty() ||
      !std::isfinite(v)) {
    Error(Quote(*text) + " is not a number");
    return std::nullopt;
  }
  return v;
}

std::optional<Quantity> YamlValue::Qty(bool allow_negative) const {
  auto text = ScalarText();
  if (!text) return std::nullopt;
  auto q = Quantity::Parse(*text);
  if (!q.ok()) {
    Error(Quote(*text) + " is not a quantity");
    return std::nullopt;
  }
  if (!allow_negative && q->Sign() < 0) {
    Error(Quote(*text) + " must not be negative");
    return std::nullopt;
  }
  return *q;
}

std::optional<Quantity> YamlValue::ResourceQty(std::string_view resource,
                                               QuantityScope scope) const {
  auto q = Qty();
  if (!q) return std::nullopt;
  const std::string why = CheckQuantityBound(resource, *q, scope);
  if (!why.empty()) {
    Error("Invalid value: " + Quote(*ScalarText()) + ": " + std::string(resource) + " " + why);
    return std::nullopt;
  }
  return q;
}

std::optional<double> YamlValue::Duration() const {
  auto text = ScalarText();
  if (!text) return std::nullopt;
  auto d = ParseDurationSeconds(*text);
  if (!d.ok()) {
    Error(d.status().message());
    return std::nullopt;
  }
  if (*d < 0) {
    Error(Quote(*text) + " must not be negative");
    return std::nullopt;
  }
  return *d;
}

std::optional<size_t> YamlValue::Enum(std::initializer_list<std::string_view> allowed) const {
  auto text = ScalarText();
  if (!text) return std::nullopt;
  size_t i = 0;
  std::string list;
  for (std::string_view a : allowed) {
    if (a == *text) return i;
    if (i++ > 0) list += ", ";
    list += a;
  }
  Error(Quote(*text) + " is not one of " + list);
  return std::nullopt;
}

model::StringMap YamlValue::StringMap() const {
  model::StringMap out;
  for (auto& [key, value] : Entries()) {
    // Label values are strings; YAML numbers and booleans read as their text.
    if (!value.IsSet()) {
      out[key] = "";
      continue;
    }
    if (auto s = value.String()) out[key] = *s;
  }
  return out;
}

model::QuantityMap YamlValue::QuantityMap(QuantityScope scope) const {
  model::QuantityMap out;
  for (auto& [key, value] : Entries()) {
    if (auto q = value.ResourceQty(key, scope)) out[key] = *q;
  }
  return out;
}

std::vector<std::string> YamlValue::StringList() const {
  std::vector<std::string> out;
  for (auto& item : Items()) {
    if (auto s = item.String()) out.push_back(*s);
  }
  return out;
}

}  // namespace muster::api::internal
