#include <algorithm>
#include <map>
#include <string>

#include "api/decode.h"

namespace muster::api {

std::string Diagnostic::ToString() const {
  // Line 0: a problem with the file itself (missing, unreadable).
  std::string s = line > 0 ? file + ":" + std::to_string(line) + ": " : file + ": ";
  if (!kind.empty()) {
    s += kind;
    if (!name.empty()) s += " " + (namespace_.empty() ? name : namespace_ + "/" + name);
    s += ": ";
  }
  if (!field.empty()) s += field + ": ";
  if (warning) s += "warning: ";
  s += message;
  return s;
}

bool DecodeResult::HasErrors() const {
  return std::any_of(diagnostics.begin(), diagnostics.end(),
                     [](const Diagnostic& d) { return !d.warning; });
}

void SortDiagnostics(DecodeResult& result) {
  std::map<std::string, size_t> position;
  for (size_t i = 0; i < result.files.size(); ++i) position.emplace(result.files[i], i);
  auto pos = [&](const std::string& f) {
    auto it = position.find(f);
    return it == position.end() ? result.files.size() : it->second;
  };
  // Stable: problems on the same line keep the order they were found in.
  std::stable_sort(result.diagnostics.begin(), result.diagnostics.end(),
                   [&](const Diagnostic& a, const Diagnostic& b) {
                     size_t pa = pos(a.file), pb = pos(b.file);
                     if (pa != pb) return pa < pb;
                     return a.line < b.line;
                   });
}

}  // namespace muster::api
