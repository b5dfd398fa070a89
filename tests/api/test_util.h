// Helpers for api tests: decode a string and list diagnostics as text lines.
#pragma once

#include <string>
#include <vector>

#include "api/decode.h"

namespace muster::api::testing {

// Decodes `yaml` as file "t.yaml" and runs the cross-object checks.
inline DecodeResult Decode(const std::string& yaml) {
  DecodeResult r;
  DecodeText(yaml, "t.yaml", r);
  ValidateCrossObject(r);
  SortDiagnostics(r);
  return r;
}

inline std::vector<std::string> Lines(const DecodeResult& r) {
  std::vector<std::string> out;
  for (const auto& d : r.diagnostics) out.push_back(d.ToString());
  return out;
}

}  // namespace muster::api::testing
