// Label and field selectors as the list/watch query parameters spell them:
//   labelSelector=a=b,c!=d,e in (x,y),f notin (z),g,!h
//   fieldSelector=metadata.name=foo,status.phase!=Running
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "model/meta.h"

namespace muster::server {

struct Requirement {
  enum class Op { kEquals, kNotEquals, kIn, kNotIn, kExists, kDoesNotExist };
  std::string key;
  Op op = Op::kExists;
  std::vector<std::string> values;  // sorted, for kIn / kNotIn; one for (Not)Equals
};

class LabelSelector {
 public:
  // The empty selector matches everything. kInvalidArgument names what is wrong.
  static Result<LabelSelector> Parse(std::string_view text);
  // A metav1.LabelSelector object (matchLabels, matchExpressions with In, NotIn,
  // Exists, DoesNotExist), its requirements sorted by key as apimachinery's are;
  // kInvalidArgument when it is not one (a list's non-string values are skipped).
  static Result<LabelSelector> FromObject(const nlohmann::json& selector);
  bool Matches(const model::StringMap& labels) const;
  // Reads metadata.labels of a JSON object (absent labels: an empty set).
  bool Matches(const nlohmann::json& object) const;
  bool empty() const { return requirements_.empty(); }
  const std::vector<Requirement>& requirements() const { return requirements_; }
  // As apimachinery's Selector.String() writes it: "a=b,c in (x,y),d,!e" ("" if empty).
  std::string String() const;

 private:
  std::vector<Requirement> requirements_;
};

// Field selectors compare a dotted path of the object ("metadata.name",
// "involvedObject.uid", "spec.nodeName") with =, == or !=. Unlike the API server,
// which allows only a few fields per kind, any path is accepted; a missing field
// reads as "".
class FieldSelector {
 public:
  static Result<FieldSelector> Parse(std::string_view text);
  bool Matches(const nlohmann::json& object) const;
  bool empty() const { return requirements_.empty(); }
  // The value required for `path` by an equality term, or "" if none (lets a
  // watch on metadata.name skip everything else cheaply).
  std::string EqualityValue(std::string_view path) const;

 private:
  std::vector<Requirement> requirements_;
};

// A metav1.LabelSelector as kubectl prints one (FormatLabelSelector): "<none>" for
// null or empty, "<error>" for one that is not a selector.
std::string FormatLabelSelector(const nlohmann::json& selector);

// The scalar at a dotted path as a string ("" when absent or not a scalar).
std::string FieldValue(const nlohmann::json& object, std::string_view path);

}  // namespace muster::server
