#include "ui/view_reader.h"

namespace muster::ui {
namespace {

using nlohmann::json;

bool NamespaceChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }
bool NameChar(char c) { return NamespaceChar(c) || (c >= 'A' && c <= 'Z') || c == '.' || c == '_'; }

void RedactString(const ViewReader& reader, json& object, const char* field) {
  if (object.contains(field) && object[field].is_string())
    object[field] = reader.Key(object[field].get<std::string>());
}

void RedactText(const ViewReader& reader, json& object, const char* field,
                const std::set<std::string>& namespaces) {
  if (object.contains(field) && object[field].is_string())
    object[field] = reader.Text(object[field].get<std::string>(), namespaces);
}

// A list of keys; withheld ones appear once.
void RedactKeys(const ViewReader& reader, json& array) {
  if (!array.is_array()) return;
  json out = json::array();
  bool withheld = false;
  for (auto& key : array) {
    if (!key.is_string()) continue;
    std::string shown = reader.Key(key.get<std::string>());
    if (shown == kWithheldWorkload) {
      if (withheld) continue;
      withheld = true;
    }
    out.push_back(std::move(shown));
  }
  array = std::move(out);
}

// Each element of object[field] (an array of objects), or nothing.
template <typename Fn>
void EachOf(json& object, const char* field, Fn fn) {
  if (!object.contains(field) || !object[field].is_array()) return;
  for (auto& e : object[field]) {
    if (e.is_object()) fn(e);
  }
}

}  // namespace

bool ViewReader::MayReadNamespace(const std::string& namespace_) const {
  if (!may_read_) return true;
  auto it = decided_.find(namespace_);
  if (it != decided_.end()) return it->second;
  const bool allowed = may_read_(namespace_);
  decided_.emplace(namespace_, allowed);
  return allowed;
}

std::string ViewReader::Key(const std::string& key) const {
  if (!may_read_) return key;
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return key;
  return MayReadNamespace(key.substr(0, slash)) ? key : kWithheldWorkload;
}

std::string ViewReader::Text(const std::string& text,
                             const std::set<std::string>& namespaces) const {
  if (!may_read_ || text.find('/') == std::string::npos) return text;
  std::string out;
  size_t copied = 0;
  for (size_t slash = text.find('/'); slash != std::string::npos;
       slash = text.find('/', slash + 1)) {
    size_t begin = slash;
    while (begin > copied && NamespaceChar(text[begin - 1])) --begin;
    // "nvidia.com/gpu": the word before the "/" must start the token.
    if (begin == slash || (begin > 0 && NameChar(text[begin - 1]))) continue;
    const std::string ns = text.substr(begin, slash - begin);
    if (!namespaces.contains(ns) || MayReadNamespace(ns)) continue;
    size_t end = slash + 1;
    while (end < text.size() && NameChar(text[end])) ++end;
    out.append(text, copied, begin - copied);
    out += kWithheldWorkload;
    copied = end;
    slash = end - 1;
  }
  out.append(text, copied, std::string::npos);
  return out;
}

void ViewReader::Redact(const std::string& plural, json& object,
                        const std::set<std::string>& namespaces) const {
  if (!may_read_ || !object.is_object()) return;
  if (plural == "workloadviews") {
    RedactText(*this, object, "message", namespaces);
    RedactString(*this, object, "preemptedFor");
    EachOf(object, "preemptionCandidates", [&](json& c) { RedactString(*this, c, "workload"); });
    EachOf(object, "evictions", [&](json& e) {
      RedactString(*this, e, "by");
      RedactText(*this, e, "detail", namespaces);
    });
    EachOf(object, "decisions", [&](json& d) { RedactText(*this, d, "message", namespaces); });
  } else if (plural == "nodeviews") {
    EachOf(object, "gpus", [&](json& g) {
      if (!g.contains("workload") || !g["workload"].is_string()) return;
      const std::string shown = Key(g["workload"].get<std::string>());
      if (shown == kWithheldWorkload) g.erase("pod");
      g["workload"] = shown;
    });
    EachOf(object, "numaZones", [&](json& z) {
      if (z.contains("workloads")) RedactKeys(*this, z["workloads"]);
    });
    if (object.contains("workloads")) RedactKeys(*this, object["workloads"]);
  } else if (plural == "timeline") {
    EachOf(object, "entries", [&](json& e) {
      RedactString(*this, e, "workload");
      RedactText(*this, e, "message", namespaces);
    });
  }
}

}  // namespace muster::ui
