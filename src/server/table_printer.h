// metav1.Table rendering: what `kubectl get` prints when it asks for
// `application/json;as=Table;g=meta.k8s.io;v=v1`. Columns are NAME, kind-specific
// ones (ClusterQueue COHORT/PENDING/ADMITTED, Workload QUEUE/RESERVED IN/ADMITTED/
// FINISHED...) and AGE.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "control/resource_types.h"

namespace muster::server {

enum class IncludeObject { kNone, kMetadata, kObject };

struct TableOptions {
  bool no_headers = false;  // omit columnDefinitions (watch events after the first)
  IncludeObject include = IncludeObject::kMetadata;
  int64_t now_unix = 0;  // for AGE
};

nlohmann::json RenderTable(const control::ResourceType& type,
                           const std::vector<nlohmann::json>& objects,
                           const std::string& resource_version, const TableOptions& options);

// kubectl's short age format: "45s", "3m20s", "5h", "2d3h", "400d".
std::string HumanAge(int64_t seconds);

// Seconds since the epoch of an RFC 3339 UTC timestamp; -1 if malformed.
int64_t ParseTimestamp(const std::string& rfc3339);

}  // namespace muster::server
