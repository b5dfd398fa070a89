// Object metadata shared by every kind.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace muster::model {

// Where an object came from: file and 1-based line of its document (or of a field).
struct SourceRef {
  std::string file;
  int line = 0;
};

using StringMap = std::map<std::string, std::string>;

struct ObjectMeta {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string namespace_;  // empty for cluster-scoped kinds; "default" filled by the decoder
  std::string generate_name;
  StringMap labels;
  StringMap annotations;
  // Position in the input (files in name order, documents in file order). Breaks
  // ties wherever upstream would use the creation timestamp.
  int64_t order = 0;
  SourceRef source;

  // "namespace/name" for namespaced objects, "name" for cluster-scoped ones.
  std::string Key() const { return namespace_.empty() ? name : namespace_ + "/" + name; }
};

// A v1 Namespace: what admission reads of it is its labels (a ClusterQueue's
// namespaceSelector). Without one, a namespace reads as having only the label
// kubernetes.io/metadata.name=<name>, which every Namespace carries.
struct Namespace {
  ObjectMeta meta;
};

}  // namespace muster::model
