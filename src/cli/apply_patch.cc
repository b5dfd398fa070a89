#include "cli/apply_patch.h"

#include <string>

namespace muster::cli {
namespace {

using nlohmann::json;

const json kNull;

const json& Member(const json& object, const std::string& key) {
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

// Adds to `patch` what turns `current` into `modified` for the keys `modified` has,
// and nulls for the keys `original` had that `modified` dropped.
void Diff(const json& original, const json& modified, const json& current, json& patch) {
  for (const auto& [key, want] : modified.items()) {
    const json& have = Member(current, key);
    if (want.is_object() && have.is_object()) {
      json sub = json::object();
      Diff(Member(original, key), want, have, sub);
      if (!sub.empty()) patch[key] = std::move(sub);
    } else if (want != have) {
      // A JSON merge patch cannot set null (it deletes): an explicit null in the
      // manifest means "absent", which is what deleting gives.
      patch[key] = want;
    }
  }
  if (!original.is_object()) return;
  for (const auto& [key, was] : original.items()) {
    if (modified.contains(key) || !current.is_object() || !current.contains(key)) continue;
    patch[key] = nullptr;
  }
}

}  // namespace

json WithLastApplied(const json& manifest) {
  json applied = manifest;
  applied.erase("status");
  if (applied.contains("metadata") && applied["metadata"].is_object()) {
    json& meta = applied["metadata"];
    if (meta.contains("annotations") && meta["annotations"].is_object()) {
      meta["annotations"].erase(kLastAppliedAnnotation);
      if (meta["annotations"].empty()) meta.erase("annotations");
    }
  }
  const std::string text = applied.dump();
  json out = applied;
  out["metadata"]["annotations"][kLastAppliedAnnotation] = text + "\n";
  return out;
}

json ThreeWayMergePatch(const json& original, const json& modified, const json& current) {
  json patch = json::object();
  if (!modified.is_object()) return patch;
  Diff(original, modified, current, patch);
  return patch;
}

json LastApplied(const json& object) {
  const json& text =
      Member(Member(Member(object, "metadata"), "annotations"), kLastAppliedAnnotation);
  if (!text.is_string()) return nullptr;
  json parsed = json::parse(text.get<std::string>(), nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() || !parsed.is_object() ? json() : parsed;
}

}  // namespace muster::cli
